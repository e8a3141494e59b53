"""`mlirpipe reduce`: the smallest module found that fails a pipeline or a RUN line the same way."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import TextIO

from ..errors import MlirpipeError, Problem, UsageError
from ..model import Location
from ..options import add_cli_options
from ..tools.common import (
    EXIT_INTERRUPTED,
    add_stage_range_options,
    named_pipelines,
    read_input,
    write_output,
)


def add_reduce(sub) -> None:
    rd = sub.add_parser(
        "reduce",
        help="shrink a module that fails a pipeline, crashes in it or fails a RUN line's checks",
        description="Delta debugging over FILE's module: drop functions and ops (a dropped "
        "op's results are replaced by an operand of the same type or a new function argument), "
        "keeping each smaller module that verifies and still fails the same way: the same "
        "failing stage, pass and first error (--pipeline or --pass-pipeline), the crash or hang "
        "of the same stage, or FileCheck failing at the same CHECK line (--run-line K of a test "
        "file). Each try runs in a forked child. Progress goes to stderr; the module found to "
        "OUT (written whole) or stdout.",
    )
    rd.add_argument("input", metavar="FILE", help="the MLIR file (or RUN/CHECK test) to reduce")
    how = rd.add_mutually_exclusive_group(required=True)
    how.add_argument("--pipeline", metavar="NAME", help="a pipeline from `mlirpipe list`")
    how.add_argument(
        "--pass-pipeline", metavar="TEXT", help="a textual pass pipeline, as mlirpipe-opt's"
    )
    how.add_argument(
        "--run-line",
        type=int,
        metavar="K",
        help="the line of FILE's RUN line (`TOOL ... | FileCheck ...`) whose checks fail",
    )
    add_stage_range_options(rd)
    rd.add_argument("-o", dest="output", metavar="OUT", help="write the module found to OUT")
    rd.add_argument(
        "--budget",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="stop searching after this long and write the smallest module so far (default 300)",
    )
    rd.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time limit of each try; a try still running is a hang (default 60)",
    )
    add_cli_options(rd, "pipelines")
    rd.set_defaults(body=reduce_command)


def reduce_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..lowering.reduce import reduce_module

    _check_flags(args)
    text, name = read_input(args.input, stdin)
    printed = _printed(text, name)  # the form every candidate has
    oracle, scratch = _oracle(args, text, name)
    try:
        target = oracle(printed)
        if target is None:
            raise MlirpipeError(_nothing_to_reduce(args, name))
        stderr.write(f"reduce: keeping the failure: {target.describe()}\n")
        found = reduce_module(
            printed,
            oracle,
            target,
            budget=args.budget,
            progress=lambda line: stderr.write(line + "\n"),
        )
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    write_output(args.output, found.text, stdout)
    stderr.write(f"reduce: {found.summary()}\n")
    if found.interrupted:
        where = "standard output" if args.output in (None, "-") else args.output
        stderr.write(f"reduce: interrupted: the smallest module found so far went to {where}\n")
        return EXIT_INTERRUPTED
    return 0


def _nothing_to_reduce(args: argparse.Namespace, name: str) -> Problem:
    if args.run_line is not None:
        return Problem(
            f"{name}: RUN line {args.run_line}'s FileCheck does not fail on its module: "
            "nothing to reduce",
            hint="the tool before FileCheck must succeed and FileCheck fail; `pytest FILE` "
            "or `lit FILE` shows how the line fails",
        )
    return Problem(
        f"{name}: its module does not fail through the pipeline: nothing to reduce",
        hint="reduce a module that fails: `mlirpipe-opt FILE --pass-pipeline TEXT` (or "
        "--pipeline P) shows how it does",
    )


def _check_flags(args: argparse.Namespace) -> None:
    problems = [
        Problem(f"--{flag} must be a number of seconds > 0 (got {value:g})")
        for flag, value in (("budget", args.budget), ("timeout", args.timeout))
        if not value > 0
    ]
    if args.run_line is not None and args.input == "-":
        problems.append(Problem("--run-line needs a test file, not standard input"))
    if (args.stop_after or args.start_after) and not args.pipeline:
        problems.append(Problem("--stop-after and --start-after need --pipeline"))
    folder = Path(args.output).parent if args.output not in (None, "-") else None
    if folder is not None and not folder.is_dir():
        problems.append(
            Problem(
                f"-o {args.output}: there is no folder {folder}",
                hint="name a file in a folder that exists (the module found is written there)",
            )
        )
    if problems:
        raise UsageError(problems)


def _printed(text: str, name: str) -> str:
    """The module as the bindings print it (the form every candidate has)."""
    from ..mlir_env import new_context, parse_module

    ctx = new_context()
    ctx.allow_unregistered_dialects = True
    return str(parse_module(text, name, ctx))


def _oracle(args: argparse.Namespace, text: str, name: str):
    """The oracle of the failure to keep, and a scratch folder to remove afterwards (or None)."""
    from ..lowering.reduce import pipeline_oracle
    from ..lowering.stages import run_pass_pipeline, run_stages

    if args.run_line is not None:
        import tempfile

        from ..filetests.reduce_line import run_line
        from ..filetests.runner import FileTestRunner

        path = Path(args.input).absolute()
        if not path.is_file():
            raise UsageError(Problem("no such test file", Location(args.input)))
        with tempfile.TemporaryDirectory(prefix="mlirpipe-reduce-") as exec_root:
            line = run_line(FileTestRunner(exec_root), path, args.run_line, name)
        return line.oracle(args.timeout)
    if args.pass_pipeline:
        from ..tools.opt import checked_pass_pipeline

        pass_pipeline = checked_pass_pipeline(args.pass_pipeline)
        return pipeline_oracle(
            lambda t: run_pass_pipeline(t, pass_pipeline, source_name=name), args.timeout
        ), None
    pipeline = named_pipelines(args.pipelines_dir, [args.pipeline])[0]

    def lower(t: str) -> None:
        run_stages(
            t,
            pipeline,
            source_name=name,
            start_after=args.start_after,
            stop_after=args.stop_after,
            capture=False,
        )

    return pipeline_oracle(lower, args.timeout), None
