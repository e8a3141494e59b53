"""Run a pipeline stage by stage in-process and keep a snapshot of the IR after each stage."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..contain import note
from ..errors import PipelineSpecError, Problem, StageFailure, UsageError, did_you_mean
from ..mlir_env import diagnostics_of, ir, new_context, parse_module, passmanager, print_ir
from ..model import Diagnostic, LazyText, Pipeline, Snapshot, Stage
from . import passes as python_passes
from . import prefix_cache
from .pipeline_text import Element, parse_options, parse_pipeline
from .prefix_cache import CachedPrefix, prefix_key


@dataclass(frozen=True, slots=True)
class StageRun:
    """What a run produced: one snapshot per stage run, and the final module."""

    snapshots: tuple[Snapshot, ...]
    module: object  # ir.Module
    context: object  # ir.Context; keep alive as long as the module is used

    @property
    def final_ir(self) -> str:
        return print_ir(self.module.operation)  # type: ignore[attr-defined]


def select_stages(
    pipeline: Pipeline, start_after: str | None = None, stop_after: str | None = None
) -> list[Stage]:
    """The stages between `start_after` (exclusive) and `stop_after` (inclusive)."""
    names = pipeline.stage_names()
    problems = []
    for flag, value in (("--start-after", start_after), ("--stop-after", stop_after)):
        if value is not None and value not in names:
            problems.append(
                Problem(
                    f"{flag}: pipeline '{pipeline.name}' has no stage '{value}'",
                    None,
                    did_you_mean(value, names) or f"its stages: {', '.join(names)}",
                )
            )
    if problems:
        raise UsageError(problems)
    lo = names.index(start_after) + 1 if start_after else 0
    hi = names.index(stop_after) + 1 if stop_after else len(names)
    if lo >= hi:
        raise UsageError(
            Problem(
                f"no stage to run: --start-after {start_after} is not before "
                f"--stop-after {stop_after}",
                hint=f"stages in order: {', '.join(names)}",
            )
        )
    return list(pipeline.stages[lo:hi])


def _unwrap_module(elements: Sequence[Element]) -> list[Element]:
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].is_anchor:
        return list(elements[0].children or ())
    return list(elements)


def _stage_elements(stage: Stage) -> list[Element]:
    out: list[Element] = []
    for fragment in stage.passes:
        out.extend(_unwrap_module(parse_pipeline(fragment)))
    return out


def build_pass_manager(elements: Sequence[Element], context: ir.Context) -> passmanager.PassManager:
    """A module-level pass manager for `elements`; Python-defined passes are added by object."""
    with context:
        pm = passmanager.PassManager("builtin.module")
        pending: list[str] = []
        for el in elements:
            py = None if el.is_anchor else python_passes.get(el.name)
            if py is None:
                for p, anchors in el.passes():
                    if python_passes.get(p.name):
                        raise UsageError(
                            Problem(
                                f"Python-defined pass '{p.name}' must run on the module, not "
                                f"nested in {'('.join(anchors)}(...)",
                                hint=f"move '{p.name}' to the top level of the pipeline",
                            )
                        )
                pending.append(el.text)
                continue
            if pending:
                pm.add(",".join(pending))
                pending = []
            options = parse_options(el.options)
            unknown = sorted(set(options) - set(py.options))
            if unknown:
                raise UsageError(
                    Problem(
                        f"pass '{py.argument}' has no option {', '.join(repr(u) for u in unknown)}",
                        hint=f"its options: {', '.join(py.options) or '(none)'}",
                    )
                )
            pm.add(
                py.factory(options),
                name=py.argument,
                argument=py.argument,
                description=py.description,
            )
        if pending:
            pm.add(",".join(pending))
        return pm


def _flat_passes(elements: Sequence[Element]) -> list[Element]:
    """One element per pass (`func.func(a,b)` -> `func.func(a)`, `func.func(b)`)."""
    out: list[Element] = []
    for el in elements:
        for p, anchors in el.passes():
            text = p.text
            for anchor in reversed(anchors):
                text = f"{anchor}({text})"
            out.append(
                Element(p.name, p.options, None, p.offset, text)
                if not anchors
                else parse_pipeline(text)[0]
            )
    return out


def run_stages(
    source: str,
    pipeline: Pipeline,
    *,
    source_name: str = "<input>",
    start_after: str | None = None,
    stop_after: str | None = None,
    capture: bool = True,
    verify_each: bool = True,
    context: ir.Context | None = None,
    before_stage: Callable[[Stage, ir.Module], None] | None = None,
) -> StageRun:
    """Run the selected stages of `pipeline` on the MLIR text `source`.

    With `capture`, each snapshot holds the IR text after its stage; otherwise only the final
    module is kept (the cost of one uninterrupted run). A failing stage raises StageFailure
    naming the stage, the pass and the diagnostics (located in `source_name`).
    `before_stage(stage, module)` is called before each stage runs (not for cached ones).
    """
    stages = select_stages(pipeline, start_after, stop_after)
    cache = prefix_cache.active() if context is None else None
    capture = capture or cache is not None  # a cached prefix must carry its snapshots
    ctx = context or (cache.ensure_context() if cache is not None else new_context())
    first = pipeline.stage_index(stages[0].name)
    names = [s.name for s in stages]

    def key(n: int) -> tuple:
        return prefix_key(source, source_name, pipeline, first, names[:n], verify_each)

    snapshots: list[Snapshot] = []
    done, module = 0, None
    if cache is not None:
        for n in range(len(stages), 0, -1):
            hit = cache.entries.get(key(n))
            if hit is not None:
                done, module = n, hit.module.clone()  # type: ignore[attr-defined]
                snapshots = list(hit.snapshots)
                cache.hits += 1
                cache.stages_reused += n
                break
    if module is None:
        module = parse_module(source, source_name, ctx)
    for i, stage in enumerate(stages):
        if i < done:
            continue
        note(f"stage '{stage.name}' of pipeline '{pipeline.name}'")
        if before_stage is not None:
            before_stage(stage, module)
        elements = _stage_elements(stage)
        try:
            pm = build_pass_manager(elements, ctx)
        except ValueError as exc:  # MLIR rejects a pass's options or where it is nested
            detail = "; ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
            raise PipelineSpecError(
                Problem(
                    f"stage '{stage.name}' of pipeline '{pipeline.name}' cannot be built: {detail}",
                    stage.location,
                    "check the pass options and the op each pass is nested in "
                    "(e.g. a module pass inside func.func(...))",
                )
            ) from None
        pm.enable_verifier(verify_each)
        collected: list[Diagnostic] = []
        with ctx:
            handler = ctx.attach_diagnostic_handler(_collector(collected, source_name))
            t0 = time.perf_counter()
            try:
                pm.run(module.operation)
            except ir.MLIRError as exc:
                handler.detach()
                diags = diagnostics_of(exc, source_name)
                stage_input = _input_of(i, source, snapshots, stages, pipeline, source_name)
                flat = _flat_passes(elements)
                if len(flat) == 1:
                    culprit = _pass_name(flat[0])
                elif stage_input is not None:
                    culprit = _find_failing_pass(stage_input, elements, source_name)
                else:
                    culprit = None
                raise StageFailure(
                    pipeline.name,
                    stage.name,
                    stage.passes,
                    [*collected, *diags],
                    f"pass '{culprit}' failed" if culprit else "one of its passes failed",
                    stage_input=stage_input,
                ) from None
            seconds = time.perf_counter() - t0
            handler.detach()
        # A clone is cheap (resources are shared); printing it waits until someone reads it.
        text = (
            LazyText(render=functools.partial(print_ir, module.operation.clone()))
            if capture
            else LazyText()
        )
        snapshots.append(Snapshot(stage.name, stage.passes, seconds, tuple(collected), text))
        if cache is not None:
            cache.entries[key(i + 1)] = CachedPrefix(module.operation.clone(), tuple(snapshots))
    return StageRun(tuple(snapshots), module, ctx)


def run_pass_pipeline(
    source: str,
    text: str,
    *,
    source_name: str = "<input>",
    verify_each: bool = True,
    before_stage: Callable[[Stage, ir.Module], None] | None = None,
) -> StageRun:
    """Run an ad-hoc textual pass pipeline as a single stage named 'pass-pipeline'."""
    from ..model import Location

    # Located at the option, not the input: a stage that cannot be built is the option's fault.
    stage = Stage(
        "pass-pipeline", (text,), "given on the command line", Location("--pass-pipeline")
    )
    from ..model import IRLevel

    pipe = Pipeline(
        "--pass-pipeline", "", IRLevel.LINALG_ON_TENSORS, IRLevel.LLVM, (stage,), stage.location
    )
    return run_stages(
        source,
        pipe,
        source_name=source_name,
        capture=False,
        verify_each=verify_each,
        before_stage=before_stage,
    )


def _collector(out: list[Diagnostic], source_name: str):
    from ..mlir_env import to_diagnostic

    def handle(diag) -> bool:
        d = to_diagnostic(diag, source_name)
        if d.severity == "error":
            return False  # left for the MLIRError of the failing run
        out.append(d)
        return True

    return handle


def _find_failing_pass(before: str, elements: Sequence[Element], source_name: str) -> str | None:
    """Re-run the stage pass by pass from its input to name the pass that fails."""
    ctx = new_context()
    try:
        module = parse_module(before, source_name, ctx)
    except Exception:
        return None
    with ctx:
        ctx.attach_diagnostic_handler(lambda d: True)
        for el in _flat_passes(elements):
            try:
                build_pass_manager([el], ctx).run(module.operation)
            except ir.MLIRError:
                return _pass_name(el)
            except Exception:
                return None
    return None


def _pass_name(el: Element) -> str:
    """The pass of a one-pass element, without the op anchors around it."""
    return el.passes()[0][0].name


def _input_of(
    index: int,
    source: str,
    snapshots: Sequence[Snapshot],
    stages: Sequence[Stage],
    pipeline: Pipeline,
    source_name: str,
) -> str | None:
    """The IR a stage started from (recomputed from the source when snapshots were not kept)."""
    if index == 0:
        return source
    if snapshots[index - 1].ir is not None:
        return snapshots[index - 1].ir
    try:
        prefix = run_stages(
            source,
            pipeline,
            source_name=source_name,
            start_after=pipeline.stage_before(stages[0].name),
            stop_after=stages[index - 1].name,
            capture=False,
        )
    except Exception:
        return None
    return prefix.final_ir
