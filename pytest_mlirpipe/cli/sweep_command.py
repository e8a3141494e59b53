"""`mlirpipe sweep`: torch's OpInfo catalogue through pipelines, a matrix of verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..errors import Problem, UsageError
from ..model import SweepVerdict
from ..options import add_cli_options
from .common import comma_names, require_runnable


def add_sweep(sub) -> None:
    sw = sub.add_parser(
        "sweep",
        help="check torch's OpInfo catalogue through pipelines; a matrix of verdicts",
        description="Wrap each op of torch's OpInfo catalogue (op x dtype x sample) in a module, "
        "check it through each pipeline against torch eager, contained and in parallel, and "
        "append the verdicts to OUT/results.jsonl (a rerun skips what is there). Writes "
        "OUT/matrix.json and OUT/matrix.html and prints counts per pipeline and verdict.",
        epilog="Verdicts: PASS; MISMATCH (wrong results, with the max error); NOT-LOWERED (the "
        "stage and pass that refused it); CRASH (a crash or hang, with where); TORCH (torch "
        "cannot export or run it, or its results are random draws too few to judge); HARNESS "
        "(pytest-mlirpipe's fault).",
    )
    sw.add_argument("--ops", metavar="OP[,OP2]", help="only these OpInfo names (default all)")
    sw.add_argument("--limit", type=int, metavar="N", help="only the first N ops")
    sw.add_argument(
        "--dtypes", default="float32", metavar="D[,D2]", help="dtypes to sweep (default float32)"
    )
    sw.add_argument(
        "--samples",
        type=int,
        default=1,
        metavar="N",
        help="the first N samples of an op (default 1)",
    )
    sw.add_argument(
        "--pipeline",
        default="refbackend,tosa",
        metavar="P[,P2]",
        help="comma-separated pipelines ending in the llvm dialect (default refbackend,tosa)",
    )
    sw.add_argument(
        "-j", "--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)"
    )
    sw.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds per entry and pipeline before it is a CRASH (default 120; 0: none)",
    )
    sw.add_argument(
        "--out", default="opinfo-sweep", metavar="DIR", help="results folder (default opinfo-sweep)"
    )
    sw.add_argument(
        "--top", type=int, default=10, metavar="N", help="HARNESS causes to list (default 10)"
    )
    sw.add_argument(
        "--redo",
        default="",
        metavar="V[,V2]",
        help="check again the entries the results file gives these verdicts (e.g. HARNESS, "
        "after a fix); the new verdicts replace them",
    )
    add_cli_options(sw, "pipelines")
    sw.set_defaults(body=_sweep)


def _sweep(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    import shutil

    from ..execution.sweep import opinfo
    from ..execution.sweep import run as sweep

    _refuse_below(args, ("jobs", 1), ("samples", 1), ("limit", 1), ("timeout", 0), ("top", 0))
    redo = _verdict_names(args.redo)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(
            Problem(
                f"--out {args.out} is a file; the sweep writes a folder of results there",
                hint="name a folder (new, or one a sweep wrote, to resume it)",
            )
        )
    pipelines = tuple(comma_names(args.pipeline, "--pipeline"))
    require_runnable(args.pipelines_dir, pipelines)
    units = opinfo.select_units(
        None if args.ops is None else comma_names(args.ops, "--ops"),
        comma_names(args.dtypes, "--dtypes"),
        args.samples,
        args.limit,
    )
    work = out / "work"
    settings = sweep.SweepSettings(
        pipelines, tuple(args.pipelines_dir), args.timeout, str(work.resolve())
    )

    def progress(n: int, total: int, unit, results) -> None:
        verdicts = ", ".join(
            f"{r.pipeline}{'' if r.sample == 0 else f' #{r.sample}'} {r.verdict}" for r in results
        )
        stdout.write(f"[{n}/{total}] {unit.op} {unit.dtype}: {verdicts}\n")
        stdout.flush()

    try:
        sweep.run_sweep(units, settings, out / "results.jsonl", args.jobs, progress, redo)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _write_sweep_reports(out, pipelines, args.top, stdout)
    return 0


def _verdict_names(text: str) -> frozenset[str]:
    from ..execution.sweep.verdicts import VERDICTS

    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in VERDICTS]
    if unknown:
        raise UsageError(
            Problem(
                f"--redo takes verdicts, not {', '.join(repr(n) for n in unknown)}",
                hint=f"one or more of {', '.join(VERDICTS)}, comma-separated",
            )
        )
    return frozenset(names)


def _refuse_below(args: argparse.Namespace, *limits: tuple[str, float]) -> None:
    low = [
        (n, least)
        for n, least in limits
        if getattr(args, n) is not None and getattr(args, n) < least
    ]
    if low:
        raise UsageError(
            [Problem(f"--{n} must be at least {m:g} (got {getattr(args, n):g})") for n, m in low]
        )


def _write_sweep_reports(out, pipelines: tuple[str, ...], top: int, stdout: TextIO) -> None:
    """matrix.json and matrix.html of everything in the results file; the tables on stdout."""
    from ..atomic import write_atomic
    from ..execution.sweep import report as sweep_report
    from ..execution.sweep import run as sweep

    results = list(sweep.read_results(out / "results.jsonl").values())
    shown = [*pipelines, *sorted({r.pipeline for r in results} - set(pipelines))]
    m = sweep_report.matrix(results, shown)
    summary = sweep_report.summary_table(results, shown)
    write_atomic(out / "matrix.json", sweep_report.matrix_json(m))
    write_atomic(out / "matrix.html", sweep_report.matrix_html(m, summary))
    stdout.write(f"\n{summary}\n")
    if top and any(r.verdict is SweepVerdict.HARNESS for r in results):
        stdout.write("\n" + sweep_report.harness_causes(results, top) + "\n")
    stdout.write(f"\nmatrix: {out / 'matrix.json'}, {out / 'matrix.html'}\n")
