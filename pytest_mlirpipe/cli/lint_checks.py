"""`mlirpipe lint-checks`: the CHECK lines FileCheck would ignore, one warning each."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .common import refuse_missing, test_files


def add_lint_checks(sub) -> None:
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

    refuse_missing(args.files)
    found, files = 0, 0
    with tempfile.TemporaryDirectory(prefix="mlirpipe-lint-") as scratch:
        runner = FileTestRunner(scratch)
        for name in test_files(runner, args.files):
            path = Path(name).absolute()  # lit's %s is absolute; so must the file's own path be
            findings = lint_file(runner.make_test(path), path) or []
            files += 1
            found += len(findings)
            for finding in findings:
                stdout.write(finding.format(name) + "\n")
    in_files = f"{files} file{'s' if files != 1 else ''}"
    stderr.write(f"mlirpipe lint-checks: {found or 'nothing'} found in {in_files}\n")
    return 1 if found else 0
