"""`mlirpipe showcase`: lower the seed examples stage by stage and run their checks."""

from __future__ import annotations

import collections
import re
from pathlib import Path
from typing import TextIO

_RUN_PIPELINE = re.compile(r"--pipeline\s+([\w-]+)")
_START_AFTER = re.compile(r"--start-after\s+([\w-]+)")
_OP = re.compile(r"^\s*(?:%[^=]+=\s*)?\"?([a-z_][\w]*)\.[\w.]+", re.MULTILINE)


def dialect_counts(ir_text: str) -> collections.Counter[str]:
    """How many ops of each dialect the IR holds (by op name, from the printed IR)."""
    return collections.Counter(m.group(1) for m in _OP.finditer(ir_text))


def _summary(counts: collections.Counter[str]) -> str:
    return ", ".join(f"{d} {n}" for d, n in sorted(counts.items()))


def showcase(paths: list[Path], stdout: TextIO) -> int:
    """For each RUN/CHECK file: its pipeline stage by stage (time, ops per dialect), then lit's
    verdict on its checks. Returns the number of files whose checks failed."""
    from ..filetests.runner import FileTestRunner
    from ..lowering.catalog import catalog_for

    catalog = catalog_for([])
    runner = FileTestRunner(Path("build") / "showcase")
    files = sorted(
        p for root in paths for p in ([root] if root.is_file() else root.rglob("*.mlir"))
    )
    failed = 0
    for path in files:
        text = path.read_text()
        m = _RUN_PIPELINE.search(text)
        if m and m.group(1) in catalog:
            failed += not _show_file(path, text, catalog.get(m.group(1)), runner, stdout)
    stdout.write(f"\n{len(files) - failed} of {len(files)} seed files passed their checks.\n")
    return failed


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

    rows = [
        (snap.stage, snap.seconds * 1e3, _summary(dialect_counts(snap.ir or "")))
        for snap in snapshots
    ]
    table = tabulate(
        rows,
        headers=("stage", "ms", "ops by dialect after the stage"),
        tablefmt="plain",
        floatfmt=".1f",
    )
    return "\n".join("   " + line for line in table.splitlines())
