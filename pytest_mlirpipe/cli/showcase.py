"""`mlirpipe showcase`: lower the seed examples stage by stage and run their checks."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

_RUN_PIPELINE = re.compile(r"--pipeline\s+([\w-]+)")
_START_AFTER = re.compile(r"--start-after\s+([\w-]+)")


def _summary(counts: Mapping[str, int] | None) -> str:
    if counts is None:
        return "(IR the bindings cannot parse)"
    return ", ".join(f"{d} {n}" for d, n in sorted(counts.items()))


def showcase(paths: list[Path], stdout: TextIO) -> int:
    """For each RUN/CHECK file: its pipeline stage by stage (time, ops per dialect), then lit's
    verdict on its checks. Returns the number of files whose checks failed."""
    from ..filetests.runner import FileTestRunner
    from ..lowering.catalog import catalog_for

    catalog = catalog_for([])
    seeds = _seed_files(paths, catalog)
    runner = FileTestRunner(Path("build") / "showcase")
    failed = 0
    for path, text, pipeline in seeds:
        failed += not _show_file(path, text, catalog.get(pipeline), runner, stdout)
    stdout.write(f"\n{len(seeds) - failed} of {len(seeds)} seed files passed their checks.\n")
    return failed


def _seed_files(paths: list[Path], catalog) -> list[tuple[Path, str, str]]:
    """(path, text, pipeline name) of each file whose RUN line names a known --pipeline, read
    before any work; a file named on its own that is no such file is an error, as is none."""
    from ..errors import Problem, UsageError
    from ..model import Location
    from ..tools.common import read_input

    seeds, problems = [], []
    for root in paths:
        for path in [root] if root.is_file() else sorted(root.rglob("*.mlir")):
            text = read_input(str(path), stdin=io.StringIO())[0]  # a path, never '-'

            m = _RUN_PIPELINE.search(text)
            if m and m.group(1) in catalog:
                seeds.append((path, text, m.group(1)))
            elif path == root:
                problems.append(
                    Problem(
                        "no RUN line names a known pipeline (--pipeline NAME)",
                        Location(str(path)),
                        "`mlirpipe list` shows the pipelines; a stage test runs "
                        "mlirpipe-opt %s --pipeline NAME",
                    )
                )
    if not seeds and not problems:
        where = ", ".join(map(str, paths))
        problems.append(
            Problem(
                f"no stage tests under {where}: no .mlir file has a RUN line naming a "
                "known pipeline (--pipeline NAME)",
                hint="give the stage tests' folder, e.g. test/pipelines",
            )
        )
    if problems:
        raise UsageError(problems)
    return sorted(seeds)


def _show_file(path: Path, text: str, pipeline, runner, stdout: TextIO) -> bool:
    """The file's title, stage table and check verdict; False when the lowering or the checks
    fail."""
    from ..errors import MlirpipeError
    from ..lowering.stages import run_stages
    from ..tools.opt import split_input

    title = next(
        (ln[3:].strip() for ln in text.splitlines() if ln.startswith("// ") and "RUN:" not in ln),
        "",
    )
    stdout.write(
        f"\n== {path}  [{pipeline.name}: {pipeline.input.value} -> "
        f"{pipeline.output.value}]\n   {title}\n"
    )
    start_after = _START_AFTER.search(text)
    if "--split-input-file" in text:
        text = split_input(text)[0]  # the stage table of the first case; lit runs them all
    try:
        run = run_stages(
            text,
            pipeline,
            source_name=str(path),
            start_after=start_after.group(1) if start_after else None,
        )
    except MlirpipeError as exc:
        stdout.write(exc.format() + "\n")
        return False
    stdout.write(_stage_table(run.snapshots) + "\n")
    verdict = runner.run(path)
    stdout.write(f"   checks: {text.count('RUN:')} RUN lines with FileCheck -> {verdict.code}\n")
    if verdict.is_failure:
        stdout.write(verdict.output + "\n")
    return not verdict.is_failure


def _stage_table(snapshots) -> str:
    """One row per stage: its name, milliseconds, ops per dialect after it (indented)."""
    from tabulate import tabulate

    from ..lowering.stage_report import dialect_context, dialect_counts

    context = dialect_context()
    rows = [
        (snap.stage, snap.seconds * 1e3, _summary(dialect_counts(snap.ir or "", context)))
        for snap in snapshots
    ]
    table = tabulate(
        rows,
        headers=("stage", "ms", "ops by dialect after the stage"),
        tablefmt="plain",
        floatfmt=".1f",
    )
    return "\n".join("   " + line for line in table.splitlines())
