"""`mlirpipe stages`: a pipeline run stage by stage, printed, diffed or as an HTML page."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import TextIO

from ..options import add_cli_options
from ..tools.common import (
    add_stage_range_options,
    named_pipelines,
    read_input,
)
from .common import check_report_target, report_error


def add_stages(sub) -> None:
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
        current = ending_newline(snap.ir or "")
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
    check_report_target("--html", out, f"name the page: --html {Path(out) / stem}.html")


def _html_error(out: str, why: str, hint: str = "give a path in a folder you can write to"):
    return report_error("--html", out, why, hint)


def _printed(text: str, name: str) -> str:
    """The input as MLIR prints it, so the first diff shows the stage, not reformatting."""
    from ..mlir_env import new_context, parse_module, print_ir

    return ending_newline(print_ir(parse_module(text, name, new_context()).operation))


def ending_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
