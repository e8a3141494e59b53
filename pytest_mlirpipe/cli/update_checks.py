"""`mlirpipe update-checks`: new CHECK lines for the RUN lines whose FileCheck fails."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..tools.common import (
    read_input,
)
from .common import refuse_missing, test_files


def add_update_checks(sub) -> None:
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

    refuse_missing(args.files)
    status = 0
    # `%t` files of a file outside any lit suite go to a folder removed afterwards.
    with tempfile.TemporaryDirectory(prefix="mlirpipe-update-") as scratch:
        runner = FileTestRunner(scratch)
        names = test_files(runner, args.files)
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
