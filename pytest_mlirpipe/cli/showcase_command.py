"""`mlirpipe showcase`: the seed examples lowered stage by stage, with their checks."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..errors import Problem, UsageError
from ..tools.common import (
    named_pipelines,
)


def add_showcase(sub) -> None:
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
