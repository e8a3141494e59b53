"""One object per run that compiles, checks and times models, and keeps the outcomes for reports."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import contain
from ..errors import MlirpipeError, Problem, UsageError
from ..model import Pipeline
from . import runner
from .blas_library import library_for, set_blas_threads
from .cache import ArtifactCache, cache_key
from .compare import Comparison, compare
from .native import Abi, NativeFunction, detect_abi, jit
from .runner import MODES, Imported, Lowered, Outcome
from .signature import EntrySignature
from .timing import TimingConfig, measure

DEFAULT_PIPELINES = ("refbackend",)


class ExecutionMismatch(MlirpipeError):
    """A model's native results differ from torch's, or it failed to compile or run."""

    def __init__(self, case: str, outcomes: Sequence[Outcome]):
        self.case = case
        self.outcomes = tuple(outcomes)
        failed = [o for o in outcomes if o.verdict == "FAIL"]
        super().__init__(
            [
                Problem(
                    f"case '{case}' through pipeline '{o.pipeline}' ({o.mode}"
                    + (f", {o.abi}" if o.abi else "")
                    + "): "
                    + (o.error or (o.comparison.format() if o.comparison else "failed")),
                )
                for o in failed
            ]
        )


@dataclass
class Compiled:
    """A model compiled through one pipeline: call it with arrays or tensors."""

    function: NativeFunction
    pipeline: str
    mode: str
    seconds: dict[str, float]
    cached: bool
    library: Path | None = None  # the .so (mode="aot")
    header: Path | None = None

    @property
    def signature(self) -> EntrySignature:
        return self.function.signature

    @property
    def abi(self) -> Abi:
        return self.function.native_abi

    def __call__(self, *inputs: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        outs = self.function(*inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)


class ExecutionSession:
    """Compiles models through pipelines, checks them against torch, times them.

    Keeps every Outcome in `outcomes` for the end-of-run table and JSON.
    """

    def __init__(
        self,
        pipeline_dirs: Sequence[str | Path] = (),
        cache_dir: Path | str | None = None,
        timing: TimingConfig | None = None,
        mode: str = "jit",
        default_pipelines: Sequence[str] = DEFAULT_PIPELINES,
        isolation: str = "fork",
        timeout: float = 0.0,
    ):
        if mode not in MODES:
            raise UsageError(
                Problem(f"unknown execution mode '{mode}'", hint=f"accepted: {', '.join(MODES)}")
            )
        self.pipeline_dirs = [str(d) for d in pipeline_dirs]
        self.cache = ArtifactCache(cache_dir)
        self.timing = timing
        self.mode = mode
        self.default_pipelines = tuple(default_pipelines)
        self.outcomes: list[Outcome] = []
        self._catalog = None
        # "fork": compiled code first runs (and is compared) in a forked child, so a crash or
        # a hang fails one pipeline of one case; "none": everything runs in this process.
        self.isolation = isolation
        self.timeout = timeout

    # -- pipelines ---------------------------------------------------------------------------
    def pipeline(self, name: str) -> Pipeline:
        if self._catalog is None:
            from ..lowering.catalog import catalog_for

            self._catalog = catalog_for(self.pipeline_dirs)
        return self._catalog.get(name)

    # -- compile -----------------------------------------------------------------------------
    def compile(
        self, model: Any, *inputs: Any, pipeline: str = "refbackend", mode: str | None = None
    ) -> Compiled:
        """Import `model` with `inputs`, lower it through `pipeline`, make it native."""
        pipe = self.pipeline(pipeline)
        runner.require_llvm_output(pipe)
        imported = runner.import_model(model, inputs, pipe)
        return self.compile_imported(imported, pipe, runner.model_name(model), mode)

    def compile_imported(
        self, imported: Imported, pipe: Pipeline, name: str, mode: str | None = None
    ) -> Compiled:
        mode = mode or self.mode
        if mode not in MODES:
            raise UsageError(
                Problem(f"unknown execution mode '{mode}'", hint=f"accepted: {', '.join(MODES)}")
            )
        key = cache_key([imported.text, pipe.pipeline_text, *_blas_settings(pipe)])
        seconds: dict[str, float] = {"import": imported.seconds}
        t0 = time.perf_counter()
        text = self.cache.read_text(key, "lowered.mlir")
        cached = text is not None
        if text is None:
            lowered: Lowered = runner.lower(imported, pipe, name)
            text = lowered.text
            self.cache.write_text(key, "lowered.mlir", text)
            for stage, s in lowered.stage_seconds:
                seconds[f"stage {stage}"] = s
        seconds["lower"] = time.perf_counter() - t0
        sig = imported.signature
        abi = detect_abi(text, sig)
        t0 = time.perf_counter()
        library = header = None
        contain.note(f"compiling the lowered module to native code ({mode})")
        if mode == "jit":
            fn = jit(text, sig)
        else:
            from . import aot

            lib_name = f"lib{aot.entry_name(sig)}.so"
            cached_lib = self.cache.path(key, lib_name)
            cached_header = self.cache.path(key, f"{aot.entry_name(sig)}.h")
            if cached_lib is not None and cached_header is not None:
                library, header = cached_lib, cached_header
            else:
                cached = False
                built = aot.build_in_temp(text, sig, abi)
                library, header = built.library, built.header
                stored = self.cache.store_file(key, lib_name, built.library)
                stored_h = self.cache.store_file(key, built.header.name, built.header)
                if stored is not None and stored_h is not None:
                    library, header = stored, stored_h
            fn = aot.load_shared_library(library, sig, abi)
            fn.blas = library_for(text)
        seconds["native"] = time.perf_counter() - t0
        return Compiled(fn, pipe.name, mode, seconds, cached, library, header)

    # -- check -------------------------------------------------------------------------------
    def check(
        self,
        model: Any,
        *inputs: Any,
        pipelines: Sequence[str] | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        reference: Callable[..., Any] | None = None,
        name: str | None = None,
        flops: float | None = None,
        mode: str | None = None,
        per_dtype: Mapping[str, tuple[float, float]] | None = None,
        time_it: bool | None = None,
    ) -> list[Outcome]:
        """Run `model` through each pipeline and compare with torch eager (or `reference`).

        Raises ExecutionMismatch listing every pipeline that failed; the outcomes (with
        timings when the session times) are kept in `self.outcomes` either way.
        """
        case = name or runner.model_name(model)
        pipes = list(pipelines or self.default_pipelines)
        if not pipes:
            raise UsageError(Problem("check() got an empty list of pipelines"))
        expected = self._reference(model, inputs, reference, pipes)
        outcomes: list[Outcome] = []
        bound: dict[str, Callable[[], object]] = {}
        blas = {}  # the BLAS libraries the compiled code calls, by path
        imports: dict[Any, Imported] = {}  # one import per input level, shared by pipelines
        do_time = self.timing is not None if time_it is None else time_it
        for p in pipes:
            outcome, call, fn = self._check_one(
                case,
                model,
                inputs,
                p,
                expected,
                (rtol, atol, per_dtype),
                mode,
                flops,
                imports,
                do_time,
            )
            outcomes.append(outcome)
            if call is not None:
                bound[p] = call
            if fn is not None and fn.blas is not None:
                blas[fn.blas.path] = fn.blas
        if do_time and bound:
            config = self.timing or TimingConfig()
            for lib in blas.values():  # the same thread count as torch gets
                set_blas_threads(lib, config.threads)
            outcomes = self._time(model, inputs, reference, bound, outcomes)
        self.outcomes.extend(outcomes)
        if any(o.verdict == "FAIL" for o in outcomes):
            raise ExecutionMismatch(case, outcomes)
        return outcomes

    def _reference(
        self, model: Any, inputs: Sequence[Any], reference: Callable[..., Any] | None, pipes
    ) -> list[Any]:
        from .compare import as_numpy, flatten_results

        if reference is not None:
            import torch

            cloned = [x.clone() if isinstance(x, torch.Tensor) else np.copy(x) for x in inputs]
            with torch.no_grad():
                return [as_numpy(r) for r in flatten_results(reference(*cloned))]
        if runner.is_mlir_text(model):
            raise UsageError(
                Problem(
                    "MLIR text has no torch eager to compare with",
                    hint="pass reference=a function computing the expected results from the inputs",
                )
            )
        if runner.is_onnx_model(model):
            sig = runner.import_model(model, inputs, self.pipeline(pipes[0])).signature
            return runner.onnx_reference(_loaded_onnx(model), sig, inputs)
        return runner.eager_reference(model, inputs)

    def _check_one(
        self, case, model, inputs, pipeline, expected, tolerances, mode, flops, imports, do_time
    ) -> tuple[Outcome, Callable[[], object] | None, NativeFunction | None]:
        mode = mode or self.mode
        try:
            pipe = self.pipeline(pipeline)
            runner.require_llvm_output(pipe)
            if pipe.input not in imports:
                imports[pipe.input] = runner.import_model(model, inputs, pipe)
        except MlirpipeError as exc:
            return (
                Outcome(case, pipeline, "FAIL", mode=mode, error=runner.describe_failure(exc)),
                None,
                None,
            )
        imported = imports[pipe.input]
        args = (case, imported, pipe, inputs, expected, tolerances, mode, flops)
        if self.isolation != "fork" or not contain.is_available():
            outcome, compiled = self._compile_and_compare(*args)
        else:
            from .runtime import runtime_library

            runtime_library()  # built once here, so children inherit it instead of rebuilding
            ended = contain.run_contained(
                lambda: self._compile_and_compare(*args)[0], timeout=self.timeout or None
            )
            if not ended.ok:
                error = _contained_failure(ended, case, pipe, imported, self.timeout)
                return Outcome(case, pipeline, "FAIL", mode=mode, error=error), None, None
            outcome, compiled = ended.value, None
            if outcome.verdict == "PASS" and do_time:
                # It ran once, contained; timing needs it here (the lowering is cached).
                compiled = self.compile_imported(imported, pipe, case, mode)
        if compiled is None or outcome.verdict != "PASS":
            return outcome, None, None
        fn = compiled.function
        return outcome, fn.bind(*inputs), fn

    def _compile_and_compare(
        self, case, imported, pipe, inputs, expected, tolerances, mode, flops
    ) -> tuple[Outcome, Compiled | None]:
        """Lower, compile, call once and compare: the steps a broken compiler can crash in."""
        rtol, atol, per_dtype = tolerances
        try:
            compiled = self.compile_imported(imported, pipe, case, mode)
            fn = compiled.function
            contain.note("running the compiled code")
            actual = fn(*inputs)
            comparison: Comparison = compare(
                actual,
                expected,
                [f"result {i} ('{t.name}')" for i, t in enumerate(fn.signature.results)],
                rtol,
                atol,
                per_dtype,
            )
        except MlirpipeError as exc:
            error = runner.describe_failure(exc)
            return Outcome(case, pipe.name, "FAIL", mode=mode, error=error), None
        outcome = Outcome(
            case,
            pipe.name,
            "PASS" if comparison.ok else "FAIL",
            abi=compiled.abi.value,
            mode=mode,
            comparison=comparison,
            compile_seconds=dict(compiled.seconds),
            flops=flops,
            cached=compiled.cached,
        )
        return outcome, compiled

    def _time(self, model, inputs, reference, bound, outcomes) -> list[Outcome]:
        import torch

        config = self.timing or TimingConfig()
        target = reference or (
            model if not (runner.is_mlir_text(model) or runner.is_onnx_model(model)) else None
        )
        candidates: dict[str, Callable[[], object]] = {}
        if target is not None:
            cloned = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            candidates["torch"] = lambda: target(*cloned)
        candidates.update(bound)
        with torch.no_grad():
            timings = measure(candidates, config)
        torch_timing = timings.get("torch")
        return [
            replace(o, timing=timings.get(o.pipeline), torch_timing=torch_timing)
            if o.pipeline in timings
            else o
            for o in outcomes
        ]


def _contained_failure(ended, case: str, pipe: Pipeline, imported: Imported, limit: float) -> str:
    """What ended the contained compile-and-run, where, and how to reproduce it."""
    import tempfile

    where = ended.notes[-1] if ended.notes else "compiling"
    if ended.kind == "timeout":
        what = f"no result after {limit:g} s (mlirpipe_timeout), while {where}"
    elif ended.kind == "error":
        what = f"internal error, while {where}: {ended.detail.strip().splitlines()[-1]}"
    else:
        what = f"{ended.detail}, while {where}"
    folder = Path(tempfile.mkdtemp(prefix="mlirpipe-repro-"))
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in case)
    source = folder / f"{safe}.input.mlir"
    source.write_text(imported.text)
    return (
        f"{what}\n  the imported module is in {source}; lower it with: "
        f"mlirpipe-opt {source} --pipeline {pipe.name} -o {folder / (safe + '.llvm.mlir')}"
    )


def _blas_settings(pipe: Pipeline) -> list[str]:
    """What else a pipeline's BLAS calls depend on: the symbol prefix the pass writes and the
    library the .so links (both from the environment, so part of the artifact's key)."""
    if "mlirpipe-matmul-to-blas" not in pipe.pipeline_text:
        return []
    from .blas_library import BlasLibraryError, find_blas_library, symbol_prefix

    try:
        library = str(find_blas_library().path)
    except BlasLibraryError:
        library = "no BLAS library"  # compiling it will say why
    return [f"blas prefix {symbol_prefix()}", f"blas library {library}"]


def _loaded_onnx(model: Any) -> Any:
    if isinstance(model, str | Path):
        import onnx

        return onnx.load(str(model))
    return model
