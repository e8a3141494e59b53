"""`mlirpipe`: pipelines, passes, stages, model import and runs, showcase, merge, expectations."""

from __future__ import annotations

import argparse
import difflib
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import torch

from ..errors import MlirpipeError, Problem, UsageError, did_you_mean
from ..execution.frontends import IMPORT_TARGETS
from ..lowering.catalog import catalog_for, known_pass_names
from ..lowering.host_cpu import CPU_FEATURES_ENV
from ..model import Location, SweepVerdict
from ..options import add_cli_options
from ..tools.common import (
    ArgumentParser,
    add_stage_range_options,
    add_version_option,
    console_main,
    named_pipelines,
    read_input,
    run_tool,
    write_output,
)
from .expectations import add_expectations
from .merge import add_merge
from .reduce import add_reduce


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="mlirpipe",
        description="Inspect the lowering pipelines and passes, run a pipeline stage by stage, "
        "and import PyTorch or ONNX models to MLIR.",
        epilog="Exit status: 0 success, 1 a model, the input or a pass failed, 2 bad arguments.",
    )
    add_version_option(p)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (
        _add_list,
        _add_stages,
        _add_import,
        _add_run,
        _add_sweep,
        _add_passes,
        _add_showcase,
        add_merge,
        add_expectations,
        _add_init,
        _add_update_checks,
        add_reduce,
        _add_lint_checks,
    ):
        add(sub)
    for command in sub.choices.values():  # its usage errors start `mlirpipe COMMAND: error:`
        command.set_defaults(prog=command.prog)
    return p


def _add_list(sub) -> None:
    ls = sub.add_parser(
        "list",
        help="every pipeline, its stages, their reasons and passes",
        description="List every pipeline with its stages, reasons and passes. A stage marked "
        "(cpu.F) took its [stage.cpu.F] table: the host has the CPU feature F "
        "($MLIRPIPE_CPU_FEATURES=avx2,fma sets the features for a run; empty: none).",
    )
    add_cli_options(ls, "pipelines")
    ls.set_defaults(body=_list)


def _add_stages(sub) -> None:
    st = sub.add_parser(
        "stages",
        help="run a pipeline and print the IR after each stage",
        description="Run a pipeline on MLIR and print the IR after each stage "
        "(or, with --diff, what each stage changed).",
    )
    st.add_argument("input", metavar="FILE", help="MLIR file to read, '-' for standard input")
    st.add_argument(
        "--pipeline", required=True, metavar="NAME", help="a pipeline from `mlirpipe list`"
    )
    st.add_argument(
        "--diff",
        action="store_true",
        help="print a unified diff against the previous stage's IR instead of the IR",
    )
    st.add_argument(
        "--html",
        metavar="OUT",
        help="write a page with each stage's IR, diff, time and ops per dialect to OUT "
        "instead of printing the IR",
    )
    add_stage_range_options(st)
    add_cli_options(st, "pipelines")
    st.set_defaults(body=_stages)


def _add_import(sub) -> None:
    im = sub.add_parser(
        "import",
        help="import a PyTorch or ONNX model to MLIR",
        description="Import a PyTorch model (FILE.py::Name, traced by "
        "torch.export with random inputs) or an ONNX model (FILE.onnx) to MLIR.",
    )
    im.add_argument("model", metavar="MODEL", help="FILE.py::Name or FILE.onnx")
    im.add_argument(
        "--to",
        required=True,
        choices=[*IMPORT_TARGETS, "onnx"],
        help="torch: the torch dialect as imported (input of torch-to-linalg); "
        "linalg: linalg-on-tensors; tosa: TOSA; onnx: an ONNX model's torch.operator "
        "ops (input of onnx-linalg)",
    )
    im.add_argument(
        "--inputs",
        metavar="SPEC",
        help="a PyTorch model's inputs, e.g. 2x3xf32,10xi64,f32 (element types: "
        "f32 f64 f16 bf16 i1 i8 i32 i64)",
    )
    im.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    im.add_argument(
        "-o", dest="output", metavar="OUT", help="write the MLIR to OUT (default stdout)"
    )
    im.set_defaults(body=_import)


def _add_run(sub) -> None:
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


def _add_sweep(sub) -> None:
    sw = sub.add_parser(
        "sweep",
        help="check torch's OpInfo catalogue through pipelines; a matrix of verdicts",
        description="Wrap each op of torch's OpInfo catalogue (op x dtype x sample) in a module, "
        "check it through each pipeline against torch eager, contained and in parallel, and "
        "append the verdicts to OUT/results.jsonl (a rerun skips what is there). Writes "
        "OUT/matrix.json and OUT/matrix.html and prints counts per pipeline and verdict.",
        epilog="Verdicts: PASS; MISMATCH (wrong results, with the max error); NOT-LOWERED (the "
        "stage and pass that refused it); CRASH (a crash or hang, with where); TORCH (torch "
        "cannot export or run it, or its results are random); HARNESS (pytest-mlirpipe's fault).",
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


def _add_passes(sub) -> None:
    ps = sub.add_parser(
        "passes",
        help="every pass name a pipeline may use",
        description="List every pass name a pipeline may use; the project's "
        "Python-defined passes are marked (python).",
    )
    ps.add_argument("--grep", metavar="TEXT", help="only names containing TEXT")
    ps.set_defaults(body=_passes)


def _add_showcase(sub) -> None:
    sc = sub.add_parser(
        "showcase",
        help="the seed examples lowered stage by stage, with their checks",
        description="Lower each RUN/CHECK file under DIR through the pipeline its RUN lines "
        "name, print a line per stage (time, ops per dialect), then run its checks with lit.",
    )
    sc.add_argument(
        "paths",
        nargs="*",
        default=["test/pipelines"],
        metavar="DIR|FILE",
        help="files or directories of .mlir stage tests (default test/pipelines)",
    )
    sc.set_defaults(body=_showcase)


def _showcase(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from pathlib import Path

    from ..errors import Problem, UsageError
    from .showcase import showcase

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise UsageError(
            [
                Problem(
                    f"no such file or directory: {m}",
                    hint="run from the repository root, or give the stage tests' folder",
                )
                for m in missing
            ]
        )
    named_pipelines([], [])  # a $MLIRPIPE_PIPELINES_PATH folder that is not there: exit 2
    return 1 if showcase([Path(p) for p in args.paths], stdout) else 0


def _add_init(sub) -> None:
    it = sub.add_parser(
        "init",
        help="give an existing lit suite what its lit.cfg.py expects from a build",
        description="In a compiler repository with a lit suite (run anywhere in it: it works "
        "at the repository's root): find its lit configs, *-opt tools and FileCheck; guess the "
        "values its configs read but never set (what a build's lit.site.cfg.py sets), print "
        "each guess, and write them to pyproject.toml with a lit.site.cfg.py that reads them, "
        "for pytest and lit alike. Never overwrites a file: when pytest reads another ini file "
        "(pytest.ini, tox.ini, setup.cfg), it prints the lines to add there.",
        epilog="Exit status: 0 ready to run; 1 no lit suite, or something left to fill in "
        "(it says what).",
    )
    it.set_defaults(body=_init)


def _init(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from pathlib import Path

    from .init import init

    return init(Path.cwd(), stdout)


def run(argv: Sequence[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The tool as a function: (argv, streams) -> exit status. The console script wraps it."""
    return run_tool(_main, build_parser(), argv, stdin, stdout, stderr)


def _add_update_checks(sub) -> None:
    uc = sub.add_parser(
        "update-checks",
        help="regenerate the CHECK lines of the RUN lines whose FileCheck fails",
        description="Run each RUN/CHECK file as pytest and lit do; for each RUN line whose "
        "FileCheck fails on the output of an *-opt tool piped into it, write new checks for "
        "its prefix from that output (in the style of MLIR's generate-test-checks.py), leave "
        "every other line as it is, and run the file again. Exit 1 when a file still fails.",
    )
    uc.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="RUN/CHECK files to update, or folders: the files pytest would run in them",
    )
    uc.set_defaults(body=_update_checks)


def _update_checks(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    import tempfile
    from dataclasses import replace

    from ..filetests.runner import FileTestRunner
    from ..filetests.update import update_file

    missing = [f for f in args.files if not Path(f).exists()]
    if missing:
        raise UsageError(
            Problem(
                f"no such file or folder: {missing[0]}",
                hint="give RUN/CHECK files, or folders of them",
            )
        )
    status = 0
    # `%t` files of a file outside any lit suite go to a folder removed afterwards.
    with tempfile.TemporaryDirectory(prefix="mlirpipe-update-") as scratch:
        runner = FileTestRunner(scratch)
        names = _test_files(runner, args.files)
        for name in names:  # a file that is not UTF-8 text stops the command before any run
            read_input(name, stdin)
        for name in names:
            path = Path(name).absolute()  # lit's %s is absolute; so must the file's own path be
            before = runner.run(path)
            if not before.is_failure:
                stdout.write(f"{name}: passes; not changed\n")
                continue
            report = replace(update_file(runner, path), path=name)  # named as the user did
            for line in report.lines():
                stdout.write(line + "\n")
            after = report.verdict or before
            ending = " after the update\n" if report.updated else "\n"
            stdout.write(f"{name}: {after.code}{ending}")
            status = status or int(after.is_failure)  # lit's isFailure of the code
    return status


def _add_lint_checks(sub) -> None:
    lc = sub.add_parser(
        "lint-checks",
        help="find the CHECK lines FileCheck would ignore",
        description="Read each RUN/CHECK file's RUN lines as lit expands them and say, one line "
        "each, the CHECK lines FileCheck would ignore or read differently from what they say: "
        "misspelled directives (CHEK:, CHECK-NXT:), a directive without its colon or with a "
        "space before it, a prefix a RUN line checks that no line uses, lines of a prefix no "
        "RUN line checks, and -NEXT/-SAME/-EMPTY before any match. Runs nothing. Exit 1 when "
        "anything is found.",
    )
    lc.add_argument(
        "files",
        nargs="+",
        metavar="PATH",
        help="RUN/CHECK files, or folders: the files pytest would run in them",
    )
    lc.set_defaults(body=_lint_checks)


def _lint_checks(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    import tempfile

    from ..filetests.lint import lint_file
    from ..filetests.runner import FileTestRunner

    missing = [f for f in args.files if not Path(f).exists()]
    if missing:
        raise UsageError(
            Problem(
                f"no such file or folder: {missing[0]}",
                hint="give RUN/CHECK files, or folders of them",
            )
        )
    found, files = 0, 0
    with tempfile.TemporaryDirectory(prefix="mlirpipe-lint-") as scratch:
        runner = FileTestRunner(scratch)
        for name in _test_files(runner, args.files):
            path = Path(name).absolute()  # lit's %s is absolute; so must the file's own path be
            findings = lint_file(runner.make_test(path), path) or []
            files += 1
            found += len(findings)
            for finding in findings:
                stdout.write(finding.format(name) + "\n")
    in_files = f"{files} file{'s' if files != 1 else ''}"
    stderr.write(f"mlirpipe lint-checks: {found or 'nothing'} found in {in_files}\n")
    return 1 if found else 0


def _test_files(runner, names: Sequence[str]) -> list[str]:
    """The files named, and in each folder named the files pytest would run there (those lit
    runs inside a suite; elsewhere files of the suffixes with RUN or CHECK lines)."""
    from ..filetests.discovery import SuiteConfigError
    from ..filetests.format import is_test_file
    from ..filetests.names import EXCLUDED_DIRS

    files: list[str] = []
    for name in names:
        if not Path(name).is_dir():
            files.append(name)
            continue
        found = []
        for path in sorted(Path(name).rglob("*")):
            parts = path.relative_to(name).parts
            if not path.is_file() or any(p in EXCLUDED_DIRS or p.startswith(".") for p in parts):
                continue
            try:
                in_lit = runner.discovery.collects(path.absolute())
            except SuiteConfigError as error:
                raise UsageError(Problem(error.message(Path.cwd()))) from None
            suffixed = path.suffix in runner.config.suite.suffixes
            if in_lit or (in_lit is None and suffixed and is_test_file(path)):
                found.append(str(path))
        if not found:
            raise UsageError(
                Problem(
                    f"no RUN/CHECK files in {name}",
                    hint=f"files with RUN or CHECK lines and a suffix lit runs "
                    f"({', '.join(runner.config.suite.suffixes)} outside a lit suite)",
                )
            )
        files += found
    return files


def _main(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..execution.workdir import private_torch_cache

    with private_torch_cache():  # torch's own cache is not left in $TMPDIR
        return args.body(args, stdin, stdout, stderr)


def _list(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    named_pipelines(args.pipelines_dir, [])  # a --pipelines-dir that is not there: exit 2
    catalog = catalog_for(args.pipelines_dir)
    catalog.check()  # a broken pipeline file is an error here, not a shorter list
    blocks = []
    for pipe in catalog:
        lines = [f"{pipe.name}: {pipe.input.value} -> {pipe.output.value}"]
        if pipe.description:
            lines.append(f"  {pipe.description}")
        lines.append(f"  file: {catalog.sources.get(pipe.name, pipe.location.path)}")
        if pipe.extends:
            lines.append(f"  extends: {pipe.extends}")
        if pipe.tool:
            lines.append(f"  tool: {pipe.tool.command} (runs the stages, not the bindings)")
        lines.append("  stages:")
        for number, stage in enumerate(pipe.stages, 1):
            table = f" (cpu.{stage.cpu})" if stage.cpu else ""
            lines.append(f"    {number}. {stage.name}{table}: {stage.reason}")
            lines.append(f"       passes: {', '.join(stage.passes)}")
        blocks.append("\n".join(lines) + "\n")
    stdout.write("\n".join(blocks))
    if any(stage.cpu for pipe in catalog for stage in pipe.stages):
        source = (
            f"${CPU_FEATURES_ENV}" if CPU_FEATURES_ENV in os.environ else "this host's CPU features"
        )
        stdout.write(
            f"\n(cpu.F: the stage's [stage.cpu.F] table, which {source} chose; "
            f"{CPU_FEATURES_ENV}=... sets the features for a run)\n"
        )
    return 0


def _stages(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..lowering.stages import run_stages

    pipeline = named_pipelines(args.pipelines_dir, [args.pipeline])[0]
    text, name = read_input(args.input, stdin)
    if args.html:
        return _stages_html(args, text, name, pipeline, stdout, stderr)
    run = run_stages(
        text,
        pipeline,
        source_name=name,
        start_after=args.start_after,
        stop_after=args.stop_after,
        capture=True,
    )
    previous, previous_name = (_printed(text, name), "input") if args.diff else ("", "")
    total = len(pipeline.stages)
    for snap in run.snapshots:
        number = pipeline.stage_index(snap.stage) + 1
        stdout.write(
            f"// ===== stage {number}/{total}: {snap.stage} ({snap.seconds:.4f} s) =====\n"
        )
        current = _ending_newline(snap.ir or "")
        if args.diff:
            diff = difflib.unified_diff(
                previous.splitlines(keepends=True),
                current.splitlines(keepends=True),
                fromfile=previous_name,
                tofile=f"after {snap.stage}",
            )
            stdout.write("".join(diff) or "// (no change)\n")
            previous, previous_name = current, f"after {snap.stage}"
        else:
            stdout.write(current)
    return 0


def _stages_html(
    args: argparse.Namespace, text: str, name: str, pipeline, stdout: TextIO, stderr: TextIO
) -> int:
    """`stages --html OUT`: the report page; a failing stage is on the page and exits 1."""
    from ..lowering.report_html import write_html
    from ..lowering.stage_report import report_stages

    _check_html_target(args.html, name)
    report = report_stages(
        text,
        pipeline,
        source_name=name,
        start_after=args.start_after,
        stop_after=args.stop_after,
    )
    try:
        out = write_html(report, args.html, make_parents=False)
    except OSError as exc:  # never name the temporary file the page is written to first
        folder = Path(args.html).absolute().parent
        raise _html_error(args.html, f"{exc.strerror} (in {folder})") from None
    stages = len(report.views) - 1
    stdout.write(f"wrote {out} ({stages} stage(s) of pipeline '{pipeline.name}')\n")
    if report.failure:
        stderr.write(report.failure + "\n")
        return 1
    return 0


def _check_html_target(out: str, source: str) -> None:
    """--html OUT names a file in a folder that exists (as mlirpipe-opt -o): checked before
    the pipeline runs."""
    stem = Path(source).name if source != "<stdin>" else "stdin.mlir"
    _check_report_target("--html", out, f"name the page: --html {Path(out) / stem}.html")


def _check_report_target(flag: str, out: str, folder_hint: str) -> None:
    """`flag OUT` names a file in a folder that exists: checked before any work, so a wrong
    path costs no run and no folder is made that the user did not name."""
    # os.path's checks, not Path's: a name too long is then the write's error, not a traceback
    if os.path.isdir(out):
        raise _report_error(flag, out, "it is a folder", folder_hint)
    folder = Path(out).absolute().parent
    if not os.path.exists(folder):
        raise _report_error(
            flag, out, f"no folder {folder}", "make the folder first, or name one that is"
        )
    if not os.path.isdir(folder):
        raise _report_error(flag, out, f"{folder} is not a folder")


def _html_error(out: str, why: str, hint: str = "give a path in a folder you can write to"):
    return _report_error("--html", out, why, hint)


def _report_error(
    flag: str, out: str, why: str, hint: str = "give a path in a folder you can write to"
) -> UsageError:
    return UsageError(Problem(f"{flag}: cannot write the report: {why}", Location(out), hint))


def _printed(text: str, name: str) -> str:
    """The input as MLIR prints it, so the first diff shows the stage, not reformatting."""
    from ..mlir_env import new_context, parse_module, print_ir

    return _ending_newline(print_ir(parse_module(text, name, new_context()).operation))


def _ending_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _import(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..execution import frontends

    source = args.model
    if source.endswith(".onnx"):
        if args.to != "onnx":
            raise UsageError(
                Problem(
                    f"an ONNX model imports only with --to onnx, not --to {args.to}",
                    Location(source),
                    "then lower it with `mlirpipe stages OUT --pipeline onnx-linalg`",
                )
            )
        _refuse_inputs_for_onnx(args)
        text = frontends.import_onnx(source)
    else:
        if args.to == "onnx":
            raise UsageError(
                Problem(
                    "--to onnx needs an ONNX model file (MODEL.onnx)",
                    Location(source),
                    "a PyTorch model imports with --to torch, --to linalg or --to tosa",
                )
            )
        model, inputs = _torch_model(args, "trace it with", "2x3xf32,10xi64")
        text = frontends.import_torch(model, inputs, args.to)
    write_output(args.output, _ending_newline(text), stdout)
    return 0


def _refuse_inputs_for_onnx(args: argparse.Namespace) -> None:
    if args.inputs is not None:
        raise UsageError(
            Problem(
                "--inputs is for a PyTorch model; an ONNX model declares its inputs",
                Location(args.model),
                "drop --inputs",
            )
        )


def _torch_model(
    args: argparse.Namespace, purpose: str, example: str
) -> tuple[torch.nn.Module, list]:
    """The PyTorch model FILE.py::Name and seeded inputs of the shapes --inputs gives."""
    from ..execution import model_file

    if args.inputs is None:
        raise UsageError(
            Problem(
                f"a PyTorch model needs --inputs, the shapes to {purpose}",
                Location(args.model),
                f"e.g. --inputs {example} (one item per argument of forward)",
            )
        )
    specs = model_file.parse_input_spec(args.inputs)
    model = model_file.load_model(args.model)
    _check_input_count(model, len(specs), args.model)
    return model, model_file.example_inputs(specs, seed=args.seed)


def _check_input_count(model, given: int, ref: str) -> None:
    """--inputs gives as many items as forward() takes: a count that cannot fit is a usage
    error before the model is traced."""
    import inspect

    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):  # a forward inspect cannot read: tracing will tell
        return
    kinds = inspect.Parameter
    if any(p.kind in (kinds.VAR_POSITIONAL, kinds.KEYWORD_ONLY) for p in params):
        return
    positional = [p for p in params if p.kind != kinds.VAR_KEYWORD]
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    if len(required) <= given <= len(positional):
        return
    takes = len(required) if given < len(required) else len(positional)
    names = ", ".join(p.name for p in positional) or "no arguments"
    raise UsageError(
        Problem(
            f"--inputs gives {given} input{'s' * (given != 1)}, but forward() of the model "
            f"takes {'at least ' if given < len(required) < len(positional) else ''}"
            f"{'at most ' if given > len(positional) > len(required) else ''}{takes} "
            f"({names})",
            Location(ref),
            "give one item per argument of forward, e.g. --inputs 64x64xf32,64x64xf32",
        )
    )


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..execution.check import ExecutionMismatch, ModelChecker
    from ..execution.timing import TimingConfig

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
    pipelines = _names(args.pipeline, "--pipeline")
    _require_runnable(args.pipelines_dir, tuple(pipelines))
    if args.json:
        _check_report_target(
            "--json", args.json, f"name the file: --json {Path(args.json)}/run.json"
        )
    if args.model.endswith(".onnx"):
        _refuse_inputs_for_onnx(args)
        model, inputs = args.model, _onnx_example_inputs(args.model, args.seed)
    else:
        model, inputs = _torch_model(args, "run it with", "64x64xf32,64x64xf32")
    checker = ModelChecker(
        pipeline_dirs=args.pipelines_dir,
        cache_dir=None,
        timing=None if args.no_time else TimingConfig(threads=args.threads, blocks=args.blocks),
        mode=args.mode,
        bisect=args.bisect,
        timeout=timeout,
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
    from ..execution.report import format_side_by_side, format_table, outcome_to_dict, write_json

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
            raise _report_error("--json", json_path, f"{exc.strerror} (in {folder})") from None


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


def _sweep(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    import shutil
    from pathlib import Path

    from ..execution import opinfo, sweep

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
    pipelines = tuple(_names(args.pipeline, "--pipeline"))
    _require_runnable(args.pipelines_dir, pipelines)
    units = opinfo.select_units(
        None if args.ops is None else _names(args.ops, "--ops"),
        _names(args.dtypes, "--dtypes"),
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
    from ..execution.verdicts import VERDICTS

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


def _require_runnable(pipeline_dirs, pipelines: tuple[str, ...]) -> None:
    """Every pipeline exists and ends in the llvm dialect (checked before any entry runs)."""
    from ..execution.model_lowering import require_llvm_output

    for pipeline in named_pipelines(pipeline_dirs, pipelines):
        require_llvm_output(pipeline)


def _names(text: str, flag: str) -> list[str]:
    """The comma-separated names a flag gives; none at all (`--ops ''`) is a usage error, not
    the flag left out."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError(
            Problem(
                f"{flag} names nothing (got {text!r})", hint=f"leave {flag} out for its default"
            )
        )
    return names


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
    from ..execution import sweep, sweep_report

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


def _passes(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..lowering import passes as python_passes

    own = python_passes.all_passes()
    names = known_pass_names()
    shown = [n for n in names if args.grep is None or args.grep.lower() in n.lower()]
    if not shown:
        raise MlirpipeError(
            Problem(
                f"no pass name contains '{args.grep}'",
                hint=did_you_mean(args.grep, names) or "run `mlirpipe passes` for them all",
            )
        )
    for name in shown:
        stdout.write(f"{name} (python)  {own[name].description}\n" if name in own else name + "\n")
    return 0


def main() -> None:
    console_main(run)


if __name__ == "__main__":
    main()
