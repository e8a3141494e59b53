"""A lowered model made native: JIT-compiled, or linked into a cached shared library."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import contain
from ...errors import MlirpipeError, Problem, UsageError
from ...model import Pipeline
from ..cache import ArtifactCache, cache_key, host_cpu
from ..frontends import ImportedModel
from ..workdir import WorkDir
from . import aot
from .blas_library import library_for
from .c_compiler import find_c_compiler
from .jit import Abi, NativeFunction, detect_abi, jit
from .model_lowering import LoweredModel, lower_model
from .openmp import openmp_runtime, uses_openmp
from .signature import EntrySignature

MODES = ("jit", "aot")


@dataclass
class CompiledModel:
    """A model compiled through one pipeline: call it with arrays or tensors."""

    function: NativeFunction
    pipeline: str
    mode: str
    seconds: dict[str, float]
    cached: bool
    library: Path | None = None  # the .so (mode="aot")
    header: Path | None = None
    # The folder the .so and header were built in stays while the model is held.
    work: WorkDir | None = field(default=None, repr=False, compare=False)

    @property
    def signature(self) -> EntrySignature:
        return self.function.signature

    @property
    def abi(self) -> Abi:
        return self.function.native_abi

    def __call__(self, *inputs: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        outs = self.function(*inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise UsageError(
            Problem(f"unknown execution mode '{mode}'", hint=f"accepted: {', '.join(MODES)}")
        )


def compile_model(
    imported: ImportedModel,
    pipeline: Pipeline,
    name: str,
    mode: str,
    cache: ArtifactCache,
    work: WorkDir,
) -> CompiledModel:
    """Lower the imported model through `pipeline` and make it native (`mode` jit or aot);
    an ahead-of-time build goes to a new folder under `work`."""
    check_mode(mode)
    lowered = lower_model(imported, pipeline, name, cache)
    seconds = {"import": imported.seconds}
    seconds.update((f"stage {stage}", s) for stage, s in lowered.stage_seconds)
    seconds["lower"] = lowered.seconds
    t0 = time.perf_counter()
    contain.note(f"compiling the lowered module to native code ({mode})")
    compiled = None
    if mode == "aot":
        compiled = _shared_library(lowered, imported.signature, cache, seconds, work)
    elif _cacheable_library(cache, imported.signature):
        try:
            compiled = _shared_library(lowered, imported.signature, cache, seconds, work)
            compiled.mode = mode
        except MlirpipeError:
            compiled = None  # the JIT compiles it (or says why it cannot)
    if compiled is None:
        fn = jit(lowered.text, imported.signature)
        compiled = CompiledModel(fn, pipeline.name, mode, seconds, lowered.cached)
    seconds["native"] = time.perf_counter() - t0
    return compiled


def ready_for_forks() -> None:
    """Import and compute, once in this process, what every compile_model call needs: the
    stage runner, the JIT's bindings, the pieces of every cache key (the project's code
    digest) and the two MLIR contexts it makes. A forked child that compiles a model inherits
    them instead of redoing them for each model."""
    import torch_mlir.execution_engine  # noqa: F401

    from ...lowering import stages  # noqa: F401
    from ...mlir_env import make_contexts_ahead

    cache_key(())
    make_contexts_ahead(2)  # the stage runner's and the JIT's


def _cacheable_library(cache: ArtifactCache, sig: EntrySignature) -> bool:
    """Whether a JIT compile goes through a cached .so instead: the same -O3 object code,
    linked once and loaded (about a millisecond) by every later run that finds it.

    It needs the cache, a C compiler, static results and element types the C shim knows."""
    if not cache.enabled or not all(t.is_static for t in sig.results):
        return False
    if any(t.dtype not in aot.C_TYPES for t in (*sig.inputs, *sig.results)):
        return False
    try:
        find_c_compiler()
    except MlirpipeError:
        return False
    return True


def native_key(lowered: LoweredModel) -> str:
    """The key of a model's .so: its lowering, the CPU the code is compiled for, the linker
    (and the OpenMP runtime, for parallel code)."""
    try:
        compiler = find_c_compiler()
    except MlirpipeError:
        compiler = "no C compiler"
    parts = [lowered.key, host_cpu(), "cc " + compiler]
    if uses_openmp(lowered.text):  # linked to libomp, or carrying the one-core stand-in
        parts.append(openmp_runtime().identity)
    return cache_key(parts)


def _shared_library(
    lowered: LoweredModel,
    sig: EntrySignature,
    cache: ArtifactCache,
    seconds: dict[str, float],
    work: WorkDir,
) -> CompiledModel:
    """The model's .so and header: from the cache, or built and then cached."""
    abi = detect_abi(lowered.text, sig)
    key = native_key(lowered)
    lib_name = f"lib{aot.entry_name(sig)}.so"
    library = cache.path(key, lib_name)
    header = cache.path(key, f"{aot.entry_name(sig)}.h")
    cached = lowered.cached and library is not None and header is not None
    if library is None or header is None:
        built = aot.build_shared_library(
            lowered.text, sig, abi, work.new_folder(f"aot-{lowered.pipeline}-")
        )
        library, header = built.library, built.header
        stored = cache.store_file(key, lib_name, built.library)
        stored_h = cache.store_file(key, built.header.name, built.header)
        if stored is not None and stored_h is not None:
            library, header = stored, stored_h
    fn = aot.load_shared_library(library, sig, abi)
    fn.blas = library_for(lowered.text)
    return CompiledModel(fn, lowered.pipeline, "aot", seconds, cached, library, header, work)
