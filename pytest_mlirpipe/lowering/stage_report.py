"""A stage-by-stage report of one lowering: each stage's IR, diff, time and ops per dialect."""

from __future__ import annotations

import collections
import difflib
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..errors import StageFailure
from ..mlir_env import ir, new_context, parse_module, print_ir
from ..model import Pipeline, Snapshot
from .stages import PassOptions, run_stages

_NO_OPTIONS: PassOptions = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class StageView:
    """One column of the report: the input (number 0) or the IR after a stage."""

    number: int
    name: str
    passes: tuple[str, ...]
    seconds: float | None  # None for the input
    ir: str
    counts: Mapping[str, int] | None  # ops per dialect; None when the IR did not parse
    diff: tuple[str, ...]  # unified diff against the view before (empty: no change)

    @property
    def changed(self) -> bool:
        return bool(self.diff) or self.number == 0

    @property
    def line_count(self) -> int:
        return self.ir.count("\n")

    def diff_stat(self) -> tuple[int, int]:
        """Lines added and removed against the view before."""
        added = sum(1 for ln in self.diff if ln.startswith("+") and not ln.startswith("+++"))
        removed = sum(1 for ln in self.diff if ln.startswith("-") and not ln.startswith("---"))
        return added, removed


@dataclass(frozen=True, slots=True)
class StageReport:
    """What the HTML page shows: the views in order, and what went wrong, if anything."""

    source_name: str
    pipeline: str
    views: tuple[StageView, ...]
    failure: str = ""  # a stage that failed: its formatted error
    note: str = ""  # e.g. which RUN line checked which stage
    checked: str = ""  # the stage whose output a failing RUN line checked: shown open, marked

    @property
    def dialects(self) -> list[str]:
        """Every dialect with an op in some view, most ops first (at their peak)."""
        peak: collections.Counter[str] = collections.Counter()
        for view in self.views:
            for dialect, n in (view.counts or {}).items():
                peak[dialect] = max(peak[dialect], n)
        return sorted(peak, key=lambda d: (-peak[d], d))


def dialect_context() -> ir.Context:
    """The context `dialect_counts` parses in: an external tool's dialects still count."""
    context = new_context()
    context.allow_unregistered_dialects = True
    return context


def dialect_counts(ir_text: str, context: ir.Context) -> dict[str, int] | None:
    """Ops per dialect in the IR (the top-level module not counted), from the MLIR bindings;
    None when the text does not parse (a dialect these bindings do not know)."""
    counts: collections.Counter[str] = collections.Counter()
    with context:
        try:
            module = ir.Module.parse(ir_text)
        except ir.MLIRError:
            return None

        def count(op) -> ir.WalkResult:
            counts[op.name.split(".", 1)[0]] += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(count)
    counts["builtin"] -= 1  # the module itself
    return {d: n for d, n in counts.items() if n > 0}


def build_report(
    input_ir: str,
    snapshots: Sequence[Snapshot],
    *,
    source_name: str,
    pipeline: str,
    first_number: int = 1,
    input_name: str = "input",
    failure: str = "",
    note: str = "",
) -> StageReport:
    """The report of `snapshots` (stages `first_number`, ... of `pipeline`) after `input_ir`."""
    context = dialect_context()
    views = [StageView(0, input_name, (), None, input_ir, dialect_counts(input_ir, context), ())]
    for offset, snap in enumerate(snapshots):
        text = _ending_newline(snap.ir or "")
        views.append(
            StageView(
                first_number + offset,
                snap.stage,
                snap.passes,
                snap.seconds,
                text,
                dialect_counts(text, context),
                _unified_diff(views[-1], text, snap.stage),
            )
        )
    return StageReport(source_name, pipeline, tuple(views), failure, note)


def _unified_diff(before: StageView, after: str, stage: str) -> tuple[str, ...]:
    lines = difflib.unified_diff(
        before.ir.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=before.name if before.number == 0 else f"after {before.name}",
        tofile=f"after {stage}",
    )
    return tuple(ln if ln.endswith("\n") else ln + "\n" for ln in lines)


def report_stages(
    text: str,
    pipeline: Pipeline,
    *,
    source_name: str,
    start_after: str | None = None,
    stop_after: str | None = None,
    pass_options: PassOptions = _NO_OPTIONS,
    note: str = "",
) -> StageReport:
    """Run the selected stages of `pipeline` on `text` and build their report. A stage that
    fails ends the report: the stages before it are shown, then its error."""
    input_ir = _ending_newline(print_ir(parse_module(text, source_name, new_context()).operation))
    run = functools.partial(
        run_stages,
        text,
        pipeline,
        source_name=source_name,
        start_after=start_after,
        pass_options=pass_options,
    )
    failure = ""
    try:
        snapshots = run(stop_after=stop_after).snapshots
    except StageFailure as exc:
        failure = exc.format()
        before = pipeline.stage_before(exc.stage)
        snapshots = ()
        if before is not None and before != start_after:
            snapshots = run(stop_after=before).snapshots
    first = pipeline.stage_index(start_after) + 2 if start_after else 1
    return build_report(
        input_ir,
        snapshots,
        source_name=source_name,
        pipeline=pipeline.name,
        first_number=first,
        input_name=f"after {start_after}" if start_after else "input",
        failure=failure,
        note=note,
    )


def _ending_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
