"""The lowering of a model: its imported MLIR through a pipeline to the LLVM dialect, cached."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from ...errors import Problem, UsageError
from ...model import IRLevel, Pipeline
from ..cache import ArtifactCache, cache_key, file_digest
from ..frontends import ImportedModel
from ..refusal import COMPILER, Refusal, RefusedError
from .blas_library import BlasLibraryError, find_blas_library, symbol_prefix

LOWERED_FILE = "lowered.mlir"  # the name of the lowered text in the artifact cache


@dataclass(frozen=True, slots=True)
class LoweredModel:
    """The LLVM-dialect text of a model after a pipeline, and where the time went."""

    text: str
    pipeline: str
    key: str  # the artifact-cache key of everything the lowered text depends on
    stage_seconds: tuple[tuple[str, float], ...]  # empty when the text came from the cache
    cached: bool
    seconds: float  # cache lookup, the stages and the cache write


def require_llvm_output(pipeline: Pipeline) -> None:
    if pipeline.output is not IRLevel.LLVM:
        raise UsageError(
            Problem(
                f"pipeline '{pipeline.name}' ends in {pipeline.output.value}, not in the llvm "
                "dialect, so its output cannot be run",
                pipeline.location,
                'execution tests need a pipeline with output = "llvm" '
                "(e.g. refbackend, tosa, onnx-linalg); chain this one into such a pipeline",
            )
        )


def lower_model(
    imported: ImportedModel, pipeline: Pipeline, source_name: str, cache: ArtifactCache
) -> LoweredModel:
    """Run every stage of `pipeline` on the imported model (or read the result from `cache`);
    the result must be in the llvm dialect."""
    key = lowering_key(imported, pipeline)
    t0 = time.perf_counter()
    text = cache.read_text(key, LOWERED_FILE)
    if text is not None:
        return LoweredModel(text, pipeline.name, key, (), True, time.perf_counter() - t0)
    from ...lowering.stages import run_stages

    require_llvm_output(pipeline)
    run = run_stages(
        imported.text,
        pipeline,
        source_name=source_name,
        capture=False,
    )
    check_llvm_only(run.final_ir, pipeline.name)
    cache.write_text(key, LOWERED_FILE, run.final_ir)
    stage_seconds = tuple((s.stage, s.seconds) for s in run.snapshots)
    return LoweredModel(
        run.final_ir, pipeline.name, key, stage_seconds, False, time.perf_counter() - t0
    )


# Compiled at import, in the test process: the contained child that lowers a model inherits
# them instead of compiling them again for each model.
_TRANSFORM_SCRIPT = re.compile(r'mlirpipe-transform\{script="([^"]*)"')
_OP_NAME = re.compile(r"^\s*(?:%[\w:#, ]+=\s*)?\"?([a-z_]+\.[a-z_.]+)", re.M)


def lowering_key(imported: ImportedModel, pipeline: Pipeline) -> str:
    """The artifact-cache key of `imported` lowered through `pipeline`."""
    return cache_key(
        [
            imported.text,
            pipeline.pipeline_text,
            *_blas_settings(pipeline),
            *_tool(pipeline),
            *_transform_scripts(pipeline),
        ]
    )


def _transform_scripts(pipeline: Pipeline) -> list[str]:
    """The digest of each transform script the pipeline runs (read when it runs, so an edited
    script is a new lowering)."""
    return [
        f"transform script {path} {file_digest(Path(path))}"
        for path in _TRANSFORM_SCRIPT.findall(pipeline.pipeline_text)
    ]


def _tool(pipeline: Pipeline) -> list[str]:
    """What the cache key needs of a pipeline's own `*-opt` (none in-process): the program
    found, and its size and time, so a rebuilt tool is not served an old lowering."""
    if pipeline.tool is None:
        return []
    from ...lowering.external import find_tool

    found = find_tool(pipeline.tool)
    if found is None:
        return [f"tool {pipeline.tool.command} (not found)"]
    stat = Path(found).stat()
    return [f"tool {found} {stat.st_size} {stat.st_mtime_ns}"]


def check_llvm_only(llvm_ir: str, pipeline: str) -> None:
    """Raise when ops other than llvm.* (and omp.*, which the translation to LLVM IR turns
    into OpenMP runtime calls) are left (the pipeline does not reach LLVM)."""
    left = sorted(
        {
            m.group(1)
            for m in _OP_NAME.finditer(llvm_ir)
            if not m.group(1).startswith(("llvm.", "builtin.", "omp.")) and m.group(1) != "module"
        }
    )
    if left:
        ops = ", ".join(left[:8]) + (" ..." if len(left) > 8 else "")
        raise RefusedError(
            Problem(
                f"pipeline '{pipeline}' left non-LLVM ops: {ops}",
                hint="an execution test needs a pipeline that ends in the llvm dialect; "
                "`mlirpipe stages FILE --pipeline P` shows which stage leaves them",
            ),
            Refusal(COMPILER, "llvm", reason=f"left {ops}"),
        )


def _blas_settings(pipe: Pipeline) -> list[str]:
    """What else a pipeline's BLAS calls depend on: the symbol prefix the pass writes and the
    library the .so links (both from the environment, so part of the artifact's key)."""
    if "mlirpipe-matmul-to-blas" not in pipe.pipeline_text:
        return []
    try:
        library = str(find_blas_library().path)
    except BlasLibraryError:
        library = "no BLAS library"  # compiling it will say why
    return [f"blas prefix {symbol_prefix()}", f"blas library {library}"]
