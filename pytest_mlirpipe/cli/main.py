"""`mlirpipe`: pipelines, passes, stages, model import and runs, showcase, merge, expectations."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TextIO

from ..tools.common import (
    ArgumentParser,
    add_version_option,
    console_main,
    run_tool,
)
from .expectations import add_expectations
from .import_model import add_import
from .init_command import add_init
from .lint_checks import add_lint_checks
from .listing import add_list, add_passes
from .merge import add_merge
from .reduce import add_reduce
from .run_model import add_run
from .showcase_command import add_showcase
from .stages import add_stages
from .sweep_command import add_sweep
from .update_checks import add_update_checks


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
        add_list,
        add_stages,
        add_import,
        add_run,
        add_sweep,
        add_passes,
        add_showcase,
        add_merge,
        add_expectations,
        add_init,
        add_update_checks,
        add_reduce,
        add_lint_checks,
    ):
        add(sub)
    for command in sub.choices.values():  # its usage errors start `mlirpipe COMMAND: error:`
        command.set_defaults(prog=command.prog)
    return p


def run(argv: Sequence[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The tool as a function: (argv, streams) -> exit status. The console script wraps it."""
    return run_tool(_main, build_parser(), argv, stdin, stdout, stderr)


def _main(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..execution.workdir import private_torch_cache

    with private_torch_cache():  # torch's own cache is not left in $TMPDIR
        return args.body(args, stdin, stdout, stderr)


def main() -> None:
    console_main(run, "mlirpipe")


if __name__ == "__main__":
    main()
