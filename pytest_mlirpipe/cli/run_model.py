"""`mlirpipe run`: a model through pipelines, compared with torch eager and timed."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TextIO

from ..errors import Problem, UsageError
from ..model import Location
from ..options import add_cli_options
from .common import check_report_target, comma_names, report_error, require_runnable
from .model_inputs import refuse_inputs_for_onnx, torch_model


def add_run(sub) -> None:
    rn = sub.add_parser(
        "run",
        help="compile a model through pipelines, compare with torch eager, time both",
        description="Compile a PyTorch model (FILE.py::Name) or an ONNX model (FILE.onnx) "
        "through each pipeline, run it natively on seeded random inputs, compare with torch "
        "eager (or ONNX's reference evaluator) and time both; prints one row per pipeline.",
    )
    rn.add_argument("model", metavar="MODEL", help="FILE.py::Name or FILE.onnx")
    rn.add_argument(
        "--inputs",
        metavar="SPEC",
        help="a PyTorch model's inputs, e.g. 64x64xf32,64x64xf32 (an ONNX model declares its own)",
    )
    rn.add_argument(
        "--pipeline",
        default="refbackend",
        metavar="P[,P2]",
        help="comma-separated pipelines ending in the llvm dialect (default refbackend)",
    )
    rn.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    rn.add_argument("--blocks", type=int, default=5, help="timed blocks per candidate")
    rn.add_argument("--flops", type=float, default=None, help="FLOPs per call, for GFLOP/s")
    for flag, what in (("--rtol", "relative"), ("--atol", "absolute")):
        rn.add_argument(
            flag,
            type=float,
            default=None,
            metavar="TOL",
            help=f"{what} tolerance against torch, element by element (default: the scaled "
            "rule against a float64 run, see docs/guides/execution-tests.md)",
        )
    # the options a pytest run of the `mlirpipe` fixture reads from --mlirpipe-* / mlirpipe_*
    add_cli_options(rn, "mode", "threads", "time", "json", "pipelines", "bisect", "timeout")
    rn.set_defaults(body=_run)


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..execution.check import ExecutionMismatch, ModelChecker
    from ..execution.results.timing import TimingConfig

    if args.threads < 1 or args.blocks < 1:
        raise UsageError(
            Problem(
                f"--threads and --blocks must be at least 1 (got {args.threads}, {args.blocks})"
            )
        )
    _check_tolerances(args)
    if args.flops is not None and not (math.isfinite(args.flops) and args.flops > 0):
        raise UsageError(
            Problem(
                f"--flops takes the floating-point operations of one call, a number > 0, "
                f"got {args.flops:g}",
                hint="e.g. --flops 2.7e8 for a 512x512 matmul (2*N**3)",
            )
        )
    timeout = _seconds(args.timeout, "--timeout")
    pipelines = comma_names(args.pipeline, "--pipeline")
    require_runnable(args.pipelines_dir, tuple(pipelines))
    if args.json:
        check_report_target(
            "--json", args.json, f"name the file: --json {Path(args.json)}/run.json"
        )
    if args.model.endswith(".onnx"):
        refuse_inputs_for_onnx(args)
        model, inputs = args.model, _onnx_example_inputs(args.model, args.seed)
    else:
        model, inputs = torch_model(args, "run it with", "64x64xf32,64x64xf32")
    checker = ModelChecker(
        pipeline_dirs=args.pipelines_dir,
        cache_dir=None,
        timing=None if args.no_time else TimingConfig(threads=args.threads, blocks=args.blocks),
        mode=args.mode,
        bisect=args.bisect,
        timeout=timeout,
        timeout_from="--timeout",
    )
    status = 0
    try:
        checker.check(
            model,
            *inputs,
            pipelines=pipelines,
            flops=args.flops,
            name=args.model,
            rtol=args.rtol,
            atol=args.atol,
        )
    except ExecutionMismatch as exc:
        stderr.write(exc.format() + "\n")
        status = 1
    _write_outcomes(checker.outcomes, args.json, stdout)
    return status


def _seconds(text: str, flag: str) -> float:
    """A time limit: a number of seconds >= 0 (0: none)."""
    import math

    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not (math.isfinite(seconds) and seconds >= 0):
        raise UsageError(
            Problem(
                f"{flag} takes a number of seconds >= 0 (0: none), got {text!r}",
                hint=f"e.g. {flag} 60",
            )
        )
    return seconds


def _check_tolerances(args: argparse.Namespace) -> None:
    """--rtol and --atol: finite numbers >= 0 (NaN would make every comparison pass)."""
    import math

    bad = [
        f"{flag} {value:g}"
        for flag, value in (("--rtol", args.rtol), ("--atol", args.atol))
        if value is not None and not (math.isfinite(value) and value >= 0)
    ]
    if bad:
        raise UsageError(
            Problem(
                f"a tolerance must be a finite number >= 0 (got {', '.join(bad)})",
                hint="e.g. --rtol 1e-5 --atol 1e-6, or leave them out for the scaled rule",
            )
        )


def _write_outcomes(outcomes: list, json_path: str | None, stdout: TextIO) -> None:
    """The table of outcomes (and the side-by-side one, if any) on stdout; JSON if asked."""
    from ..execution.results.report import (
        format_side_by_side,
        format_table,
        outcome_to_dict,
        write_json,
    )

    rows = [outcome_to_dict(o) for o in outcomes]
    stdout.write(format_table(rows) + "\n")
    side_by_side = format_side_by_side(rows)
    if side_by_side:
        stdout.write("\n" + side_by_side + "\n")
    if json_path:
        try:
            write_json(json_path, rows, make_parents=False)
        except OSError as exc:  # never name the temporary file the report is written to first
            folder = Path(json_path).absolute().parent
            raise report_error("--json", json_path, f"{exc.strerror} (in {folder})") from None


def _onnx_example_inputs(path: str, seed: int) -> list:
    """Seeded inputs of the shapes an ONNX model declares (they must be static)."""
    from ..execution import model_file
    from ..execution.frontends import OnnxFrontend

    sig = OnnxFrontend(path, ()).onnx_signature()
    dynamic = [t for t in sig.inputs if not t.is_static]
    if dynamic:
        raise UsageError(
            Problem(
                f"ONNX input '{dynamic[0].name}' has a dynamic shape ({dynamic[0]})",
                Location(path),
                "give the model static input shapes to run it from the command line",
            )
        )
    specs = [model_file.TensorSpec(tuple(t.shape), t.dtype) for t in sig.inputs]  # type: ignore[arg-type]
    return model_file.example_inputs(specs, seed=seed)
