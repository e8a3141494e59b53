"""`mlirpipe expectations`: the expected failures of a project, kept from its runs' results."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..atomic import write_atomic
from ..errors import Problem, UsageError
from ..execution.results.report import read_report
from ..expectations import format_expectations, results_of, update_expectations


def add_expectations(sub) -> None:
    ex = sub.add_parser(
        "expectations",
        help="list the failures of runs (--mlirpipe-json reports) as expected failures",
        description="Write FILE, an expectations file listing every failing test of the runs "
        "(pytest --mlirpipe-json reports; several shards' reports add up): RUN/CHECK files, "
        "and each failing pipeline of an execution check, with the reason it failed. "
        "pytest --mlirpipe-expectations=FILE then makes each a strict xfail. With --update, "
        "rewrite FILE from new runs instead: entries that now pass go, new failures are added, "
        "comments stay.",
        epilog="Exit status: 0 written; 2 bad arguments, a report or FILE that cannot be read.",
    )
    ex.add_argument("reports", nargs="+", metavar="RUN.json", help="the runs' reports")
    ex.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the expectations file to write"
    )
    ex.add_argument(
        "--update",
        action="store_true",
        help="rewrite FILE (it must exist) from the runs, keeping its comments and the entries "
        "of tests the runs did not judge",
    )
    ex.set_defaults(body=expectations_command)


def expectations_command(
    args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    output = Path(args.output)
    if args.update and not output.is_file():
        raise UsageError(
            Problem(
                f"no expectations file {args.output} to update",
                hint=f"write it first: mlirpipe expectations {' '.join(args.reports)} "
                f"-o {args.output}",
            )
        )
    if not args.update and output.exists():
        raise UsageError(
            Problem(
                f"{args.output} exists: without --update a new file is written, never over "
                "an old one",
                hint=f"rewrite it from the runs, keeping its comments: mlirpipe expectations "
                f"--update {' '.join(args.reports)} -o {args.output}",
            )
        )
    results = results_of([read_report(Path(p)) for p in args.reports])
    if not args.update:
        write_atomic(output, format_expectations(results.failures), make_parents=True)
        count = len(results.failures)
        stdout.write(
            f"mlirpipe expectations: {count} expected failure{'s' * (count != 1)} "
            f"in {args.output}\n"
        )
        return 0
    update = update_expectations(output.read_text(encoding="utf-8"), args.output, results)
    write_atomic(output, update.text)
    stdout.write(f"mlirpipe expectations: {args.output}: {update.summary()}\n")
    for entry in update.removed:
        stdout.write(f"  removed {entry.describe()}: it passes now\n")
    for entry in update.added:
        stdout.write(f"  added {entry.describe()}: {entry.reason}\n")
    return 0
