"""`mlirpipe showcase`: lower the seed examples stage by stage and run their checks."""

from __future__ import annotations

import collections
import re
from pathlib import Path
from typing import TextIO

_RUN_PIPELINE = re.compile(r"--pipeline\s+([\w-]+)")
_OP = re.compile(r"^\s*(?:%[^=]+=\s*)?\"?([a-z_][\w]*)\.[\w.]+", re.MULTILINE)


def dialect_counts(ir_text: str) -> collections.Counter[str]:
    """How many ops of each dialect the IR holds (by op name, from the printed IR)."""
    return collections.Counter(m.group(1) for m in _OP.finditer(ir_text))


def _summary(counts: collections.Counter[str]) -> str:
    return ", ".join(f"{d} {n}" for d, n in sorted(counts.items()))


def showcase(paths: list[Path], stdout: TextIO) -> int:
    """For each RUN/CHECK file: its pipeline stage by stage (time, ops per dialect), then lit's
    verdict on its checks. Returns the number of files whose checks failed."""
    from ..errors import MlirpipeError
    from ..filetests.runner import FileTestRunner
    from ..lowering.catalog import catalog_for
    from ..lowering.stages import run_stages
    from ..tools.opt import split_input

    catalog = catalog_for([])
    runner = FileTestRunner(Path("build") / "showcase")
    failed = 0
    files = sorted(
        p for root in paths for p in ([root] if root.is_file() else root.rglob("*.mlir"))
    )
    for path in files:
        text = path.read_text()
        m = _RUN_PIPELINE.search(text)
        if not m or m.group(1) not in catalog:
            continue
        pipeline = catalog.get(m.group(1))
        title = next(
            (
                ln[3:].strip()
                for ln in text.splitlines()
                if ln.startswith("// ") and "RUN:" not in ln
            ),
            "",
        )
        stdout.write(
            f"\n== {path}  [{pipeline.name}: {pipeline.input.value} -> "
            f"{pipeline.output.value}]\n   {title}\n"
        )
        start_after = re.search(r"--start-after\s+([\w-]+)", text)
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
            failed += 1
            continue
        stdout.write(f"   {'stage':<26}{'ms':>7}   ops by dialect after the stage\n")
        for snap in run.snapshots:
            stdout.write(
                f"   {snap.stage:<26}{snap.seconds * 1e3:>7.1f}   "
                f"{_summary(dialect_counts(snap.ir or ''))}\n"
            )
        verdict = runner.run(path)
        runs = text.count("RUN:")
        ok = not verdict.is_failure
        failed += not ok
        stdout.write(f"   checks: {runs} RUN lines with FileCheck -> {verdict.code}\n")
        if not ok:
            stdout.write(verdict.output + "\n")
    stdout.write(f"\n{len(files) - failed} of {len(files)} seed files passed their checks.\n")
    return failed
