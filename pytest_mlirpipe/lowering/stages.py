"""Run a pipeline stage by stage in-process and keep a snapshot of the IR after each stage."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import sys
import time
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..capture import Captured, capture_fds
from ..contain import note
from ..errors import PipelineSpecError, Problem, StageFailure, UsageError, did_you_mean
from ..mlir_env import (
    diagnostics_of,
    ir,
    new_context,
    parse_module,
    passmanager,
    print_ir,
    to_diagnostic,
)
from ..model import Diagnostic, IRLevel, LazyText, Location, Pipeline, Snapshot, Stage
from . import external, prefix_cache
from . import passes as python_passes
from .pipeline_text import Element, PipelineSyntaxError, parse_options, parse_pipeline
from .prefix_cache import CachedPrefix, prefix_key


@dataclass(frozen=True, slots=True)
class StageRun:
    """What a run produced: one snapshot per stage run, and the final module."""

    snapshots: tuple[Snapshot, ...]
    module: Any  # ir.Module; None when an external tool ran the stages
    context: Any  # ir.Context; keep alive as long as the module is used

    @property
    def final_ir(self) -> str:
        if self.module is None:
            return self.snapshots[-1].ir or ""
        return print_ir(self.module.operation)


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
                f"--stop-after {stop_after}"
                if stop_after
                else f"no stage to run: --start-after {start_after} is the last stage",
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


# Defaults for options of the project's Python passes, by pass name, used when the pipeline text
# does not set them, over the pass's own (`register(..., defaults=)`):
# `{"mlirpipe-matmul-to-blas": {"prefix": "mkl_"}}`. Values are read when the pass is built
# (callers may compute them lazily).
PassOptions = Mapping[str, Mapping[str, str]]
_NO_OPTIONS: PassOptions = MappingProxyType({})


def build_pass_manager(
    elements: Sequence[Element], context: ir.Context, pass_options: PassOptions = _NO_OPTIONS
) -> passmanager.PassManager:
    """A module-level pass manager for `elements`; Python-defined passes are added by object,
    their options from the text over those of `pass_options`."""
    with context:
        pm = passmanager.PassManager("builtin.module")
        pending: list[str] = []
        for el in elements:
            py = None if el.is_anchor else python_passes.get(el.name)
            if py is None:
                _refuse_nested_python_pass(el)
                pending.append(el.text)
                continue
            if pending:
                pm.add(",".join(pending))
                pending = []
            options = _python_pass_options(py, el, pass_options)
            pm.add(
                _failing_on_exceptions(py.factory(options), py.argument),
                name=py.argument,
                argument=py.argument,
                description=py.description,
            )
        if pending:
            pm.add(",".join(pending))
        return pm


def _failing_on_exceptions(body, argument: str):
    """A Python-defined pass's body whose exceptions fail the pass with an error at the
    operation it ran on, naming the pass, the exception and where it was raised (a bug in a
    pass is the stage's failure, reported as any other; it does not end the run)."""
    import traceback

    def run(op, pass_) -> None:
        try:
            body(op, pass_)
        except Exception as exc:
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            text = " ".join(str(exc).split()) or "(no message)"
            op.location.emit_error(
                f"Python pass '{argument}' raised {type(exc).__name__} at "
                f"{frame.filename}:{frame.lineno}: {text}"
            )
            pass_.signal_pass_failure()

    return run


def _refuse_nested_python_pass(el: Element) -> None:
    for p, anchors in el.passes():
        if python_passes.get(p.name):
            raise UsageError(
                Problem(
                    f"Python-defined pass '{p.name}' must run on the module, not "
                    f"nested in {'('.join(anchors)}(...)",
                    hint=f"move '{p.name}' to the top level of the pipeline",
                )
            )


def _python_pass_options(
    py: python_passes.PythonPass, el: Element, pass_options: PassOptions
) -> dict[str, str]:
    """The options of `el` (checked against the pass's), over the defaults given for it."""
    options = parse_options(el.options)
    unknown = sorted(set(options) - set(py.options))
    if unknown:
        raise UsageError(
            Problem(
                f"pass '{py.argument}' has no option {', '.join(repr(u) for u in unknown)}",
                hint=f"its options: {', '.join(py.options) or '(none)'}",
            )
        )
    defaults = _option_defaults(py, pass_options)
    # A default is read only when the text does not set the option (it may be computed).
    return {**{k: defaults[k] for k in defaults if k not in options}, **options}


def _option_defaults(py: python_passes.PythonPass, pass_options: PassOptions) -> Mapping:
    """The defaults of `py`'s options: the caller's `pass_options` over the pass's own (both
    read lazily, on lookup)."""
    # ChainMap only reads them here; typeshed asks for mutable maps all the same
    return ChainMap(pass_options.get(py.argument, {}), py.defaults)  # type: ignore[arg-type]


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
    pass_options: PassOptions = _NO_OPTIONS,
) -> StageRun:
    """Run the selected stages of `pipeline` on the MLIR text `source`.

    With `capture`, each snapshot holds the IR text after its stage; otherwise only the final
    module is kept (the cost of one uninterrupted run). A failing stage raises StageFailure
    naming the stage, the pass and the diagnostics (located in `source_name`).
    `before_stage(stage, module)` is called before each stage runs (not for cached ones).
    `pass_options` gives defaults for options of the project's Python passes (see PassOptions).
    """
    stages = tuple(select_stages(pipeline, start_after, stop_after))
    cache = prefix_cache.active() if context is None else None
    job = _Job(
        source,
        source_name,
        pipeline,
        stages,
        verify_each,
        pass_options,
        capture or cache is not None,  # a cached prefix must carry its snapshots
    )
    if pipeline.tool is not None:
        return _run_with_tool(job, cache)
    ctx = context or (cache.ensure_context() if cache is not None else new_context())
    done, module, snapshots = _cached_prefix(job, cache) if cache is not None else (0, None, [])
    if module is None:
        module = parse_module(source, source_name, ctx)
    for i in range(done, len(stages)):
        note(f"stage '{stages[i].name}' of pipeline '{pipeline.name}'")
        if before_stage is not None:
            before_stage(stages[i], module)
        if cache is None:
            snapshots.append(_run_stage(job, i, module, ctx, snapshots))
            continue
        printed: list[str] = []
        with _passing_on_output(printed):
            snap = _run_stage(job, i, module, ctx, snapshots)
        snapshots.append(dataclasses.replace(snap, printed=(printed[0], printed[1])))
        cache.entries[job.key(i + 1)] = CachedPrefix(module.operation.clone(), tuple(snapshots))
    return StageRun(tuple(snapshots), module, ctx)


def _run_with_tool(job: _Job, cache: prefix_cache.PrefixCache | None) -> StageRun:
    """Run the job's stages in one run of the pipeline's external tool. The cache serves only
    a whole run: a tool resumed from printed IR would locate diagnostics in that IR, not in
    the input."""
    tool = job.pipeline.tool
    hit = cache.entries.get(job.key(len(job.stages))) if cache is not None else None
    if hit is not None:
        cache.hits += 1  # type: ignore[union-attr]
        cache.stages_reused += len(job.stages)  # type: ignore[union-attr]
        snapshots = list(hit.snapshots)
    else:
        note(
            f"stages '{job.stages[0].name}' to '{job.stages[-1].name}' of pipeline "
            f"'{job.pipeline.name}', run by {tool.name}"  # type: ignore[union-attr]
        )
        snapshots = external.run_tool_stages(
            tool,  # type: ignore[arg-type]
            job.source,
            pipeline=job.pipeline.name,
            stages=job.stages,
            source_name=job.source_name,
            verify_each=job.verify_each,
        )
        if cache is not None:
            for i in range(len(snapshots)):
                cache.entries[job.key(i + 1)] = CachedPrefix(None, tuple(snapshots[: i + 1]))
    for snap in snapshots:
        _print_again(*snap.printed)
    return StageRun(tuple(snapshots), None, None)


@contextlib.contextmanager
def _passing_on_output(record: list[str]) -> Iterator[None]:
    """Record what the block's passes print, C++ included, and pass it on to this process's
    Python streams (the in-process tool's); `record` gets [stdout, stderr] even on failure."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    fds = None
    try:
        with capture_fds() as fds:
            sys.stdout, sys.stderr = out, err
            try:
                yield
            finally:
                sys.stdout, sys.stderr = saved
    finally:
        native = fds or Captured()
        record[:] = [
            native.stdout.decode("utf-8", "replace") + out.getvalue(),
            native.stderr.decode("utf-8", "replace") + err.getvalue(),
        ]
        _print_again(record[0], record[1])


def _print_again(stdout: str, stderr: str) -> None:
    """Write what passes printed to the current streams. The stage runner itself prints
    nothing: this is the passes' own output, said once per RUN line as the process would."""
    if stdout:
        sys.stdout.write(stdout)
    if stderr:
        sys.stderr.write(stderr)


@dataclass(frozen=True, slots=True)
class _Job:
    """What one `run_stages` call runs: the input, the selected stages and how."""

    source: str
    source_name: str
    pipeline: Pipeline
    stages: tuple[Stage, ...]
    verify_each: bool
    pass_options: PassOptions
    capture: bool
    # Option defaults each selected stage takes, by index: read once per run.
    defaults_taken: dict[int, tuple] = field(default_factory=dict)

    def key(self, n: int) -> tuple:
        """The prefix-cache key of the module after the first `n` selected stages."""
        first = self.pipeline.stage_index(self.stages[0].name)
        names = [s.name for s in self.stages[:n]]
        for i in range(n):
            if i not in self.defaults_taken:
                self.defaults_taken[i] = _defaults_used(self.stages[i], self.pass_options)
        defaults = tuple(d for i in range(n) for d in self.defaults_taken[i])
        return prefix_key(
            self.source, self.source_name, self.pipeline, first, names, self.verify_each, defaults
        )


def _defaults_used(stage: Stage, pass_options: PassOptions) -> tuple:
    """(pass, option, value) of each option default the stage's passes take (the caller's
    `pass_options` or the pass's own)."""
    try:
        elements = _stage_elements(stage)
    except PipelineSyntaxError:  # the stage fails to build when it runs; say it there
        return ()
    used = []
    for el in elements:
        py = None if el.is_anchor else python_passes.get(el.name)
        defaults = {} if py is None else _option_defaults(py, pass_options)
        if defaults:
            try:
                explicit = parse_options(el.options)
            except PipelineSyntaxError:
                explicit = {}
            used += [(el.name, k, defaults[k]) for k in defaults if k not in explicit]
    return tuple(used)


def _cached_prefix(job: _Job, cache: prefix_cache.PrefixCache) -> tuple:
    """(stages done, a clone of the module after them, their snapshots) for the longest
    prefix of the selected stages that is cached; (0, None, []) when none is."""
    for n in range(len(job.stages), 0, -1):
        hit = cache.entries.get(job.key(n))
        if hit is not None:
            cache.hits += 1
            cache.stages_reused += n
            for snap in hit.snapshots:  # what those stages' passes printed, printed again
                _print_again(*snap.printed)
            return n, hit.module.clone(), list(hit.snapshots)  # type: ignore[attr-defined]
    return 0, None, []


def _run_stage(
    job: _Job, i: int, module: ir.Module, ctx: ir.Context, snapshots: Sequence[Snapshot]
) -> Snapshot:
    """Run stage `i` of the job on `module`; raise StageFailure when one of its passes fails."""
    stage = job.stages[i]
    elements = _stage_elements(stage)
    pm = _stage_pass_manager(job, stage, elements, ctx)
    pm.enable_verifier(job.verify_each)
    collected: list[Diagnostic] = []
    with ctx:
        handler = ctx.attach_diagnostic_handler(_collector(collected, job.source_name))
        t0 = time.perf_counter()
        try:
            pm.run(module.operation)
        except ir.MLIRError as exc:
            handler.detach()
            raise _stage_failure(job, i, elements, collected, exc, snapshots) from None
        seconds = time.perf_counter() - t0
        handler.detach()
    # A clone is cheap (resources are shared); printing it waits until someone reads it.
    text = (
        LazyText(render=functools.partial(print_ir, module.operation.clone()))
        if job.capture
        else LazyText()
    )
    return Snapshot(stage.name, stage.passes, seconds, tuple(collected), text)


def _stage_pass_manager(
    job: _Job, stage: Stage, elements: Sequence[Element], ctx: ir.Context
) -> passmanager.PassManager:
    try:
        return build_pass_manager(elements, ctx, job.pass_options)
    except ValueError as exc:  # MLIR rejects a pass's options or where it is nested
        detail = "; ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
        raise PipelineSpecError(
            Problem(
                f"stage '{stage.name}' of pipeline '{job.pipeline.name}' cannot be built: {detail}",
                stage.location,
                "check the pass options and the op each pass is nested in "
                "(e.g. a module pass inside func.func(...))",
            )
        ) from None


def _stage_failure(
    job: _Job,
    i: int,
    elements: Sequence[Element],
    collected: list[Diagnostic],
    exc: ir.MLIRError,
    snapshots: Sequence[Snapshot],
) -> StageFailure:
    """The failure of stage `i`, naming the failing pass (found by re-running it pass by pass
    from the stage's input when the stage has several)."""
    stage = job.stages[i]
    diags = diagnostics_of(exc, job.source_name)
    stage_input = _input_of(i, job, snapshots)
    flat = _flat_passes(elements)
    culprit: str | None
    if len(flat) == 1:
        culprit = _pass_name(flat[0])
    elif stage_input is not None:
        culprit = _find_failing_pass(stage_input, elements, job.source_name, job.pass_options)
    else:
        culprit = None
    return StageFailure(
        job.pipeline.name,
        stage.name,
        stage.passes,
        [*collected, *diags],
        f"pass '{culprit}' failed" if culprit else "one of its passes failed",
        stage_input=stage_input,
    )


def run_pass_pipeline(
    source: str,
    text: str,
    *,
    source_name: str = "<input>",
    verify_each: bool = True,
    before_stage: Callable[[Stage, ir.Module], None] | None = None,
    pass_options: PassOptions = _NO_OPTIONS,
) -> StageRun:
    """Run an ad-hoc textual pass pipeline as a single stage named 'pass-pipeline'."""
    # Located at the option, not the input: a stage that cannot be built is the option's fault.
    stage = Stage(
        "pass-pipeline", (text,), "given on the command line", Location("--pass-pipeline")
    )
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
        pass_options=pass_options,
    )


def _collector(out: list[Diagnostic], source_name: str):
    def handle(diag) -> bool:
        d = to_diagnostic(diag, source_name)
        if d.severity == "error":
            return False  # left for the MLIRError of the failing run
        out.append(d)
        return True

    return handle


def _find_failing_pass(
    before: str, elements: Sequence[Element], source_name: str, pass_options: PassOptions
) -> str | None:
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
                build_pass_manager([el], ctx, pass_options).run(module.operation)
            except ir.MLIRError:
                return _pass_name(el)
            except Exception:
                return None
    return None


def _pass_name(el: Element) -> str:
    """The pass of a one-pass element, without the op anchors around it."""
    return el.passes()[0][0].name


def _input_of(index: int, job: _Job, snapshots: Sequence[Snapshot]) -> str | None:
    """The IR a stage started from (recomputed from the source when snapshots were not kept)."""
    if index == 0:
        return job.source
    if snapshots[index - 1].ir is not None:
        return snapshots[index - 1].ir
    try:
        prefix = run_stages(
            job.source,
            job.pipeline,
            source_name=job.source_name,
            start_after=job.pipeline.stage_before(job.stages[0].name),
            stop_after=job.stages[index - 1].name,
            capture=False,
            pass_options=job.pass_options,
        )
    except Exception:
        return None
    return prefix.final_ir
