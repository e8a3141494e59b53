"""Model -> pipeline -> native callable -> compared with torch: each step data in, data out."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MlirpipeError, Problem, StageFailure, UsageError
from ..model import IRLevel, Pipeline
from .blas_library import blas_pass_options
from .compare import Comparison, as_numpy, flatten_results
from .signature import EntrySignature, entry_signature

# Pipeline input level -> import_torch's `to`.
_TORCH_TARGETS = {
    IRLevel.TORCH: "torch",
    IRLevel.LINALG_ON_TENSORS: "linalg",
    IRLevel.TOSA: "tosa",
}
# ONNX (torch.operator "onnx.*") to linalg-on-tensors: the first two stages of onnx-linalg.
_ONNX_TO_LINALG = (
    "builtin.module(torch-onnx-to-torch-backend-pipeline,"
    "torch-backend-to-linalg-on-tensors-backend-pipeline)"
)
MODES = ("jit", "aot")


@dataclass(frozen=True, slots=True)
class Imported:
    """A model as MLIR at a pipeline's input level, with its entry signature."""

    text: str
    level: IRLevel
    signature: EntrySignature
    seconds: float


@dataclass(frozen=True, slots=True)
class Lowered:
    """The LLVM-dialect text of a model after a pipeline, and the time per stage."""

    text: str
    pipeline: str
    stage_seconds: tuple[tuple[str, float], ...]
    cached: bool = False


def is_onnx_model(model: Any) -> bool:
    if isinstance(model, str | os.PathLike) and str(model).endswith(".onnx"):
        return True
    return type(model).__name__ == "ModelProto" and type(model).__module__.startswith("onnx")


def is_mlir_text(model: Any) -> bool:
    return isinstance(model, str) and not model.endswith(".onnx")


def model_name(model: Any) -> str:
    if is_mlir_text(model):
        return "mlir"
    if isinstance(model, str | os.PathLike):
        return Path(model).stem
    if is_onnx_model(model):
        return model.graph.name or "onnx"
    return type(model).__name__


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


def _forward_names(model: Any) -> list[str]:
    try:
        params = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError, AttributeError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def import_model(model: Any, inputs: Sequence[Any], pipeline: Pipeline) -> Imported:
    """MLIR text of `model` at `pipeline`'s input level: an nn.Module, an ONNX model (file or
    ModelProto) or MLIR text (taken as already at that level)."""
    from . import frontends

    level = pipeline.input
    t0 = time.perf_counter()
    if is_mlir_text(model):
        text = model
        sig = entry_signature(text)
    elif is_onnx_model(model):
        text = frontends.import_onnx(model)
        if level is IRLevel.LINALG_ON_TENSORS:
            text = _run_text(text, _ONNX_TO_LINALG, model_name(model))
        elif level is not IRLevel.ONNX:
            raise UsageError(
                Problem(
                    f"an ONNX model cannot feed pipeline '{pipeline.name}', which takes "
                    f"{level.value}",
                    pipeline.location,
                    "run an ONNX model through onnx-linalg, or a pipeline taking "
                    "linalg-on-tensors (e.g. refbackend)",
                )
            )
        onnx_model = model if not isinstance(model, str | os.PathLike) else None
        names = [i.name for i in onnx_model.graph.input] if onnx_model is not None else []
        outs = [o.name for o in onnx_model.graph.output] if onnx_model is not None else []
        sig = entry_signature(text, names, outs)
    else:
        if level not in _TORCH_TARGETS:
            raise UsageError(
                Problem(
                    f"a torch module cannot feed pipeline '{pipeline.name}', which takes "
                    f"{level.value}",
                    pipeline.location,
                    "export the model to ONNX first, or use a pipeline taking "
                    "torch, linalg-on-tensors or tosa",
                )
            )
        text = frontends.import_torch(model, list(inputs), _TORCH_TARGETS[level])
        sig = entry_signature(text, _forward_names(model))
    return Imported(text, level, sig, time.perf_counter() - t0)


def _run_text(text: str, pipeline_text: str, name: str) -> str:
    from ..lowering.stages import run_pass_pipeline

    options = blas_pass_options()
    return run_pass_pipeline(text, pipeline_text, source_name=name, pass_options=options).final_ir


def lower(imported: Imported, pipeline: Pipeline, source_name: str) -> Lowered:
    """Run every stage of `pipeline`; the result must be in the llvm dialect."""
    from ..lowering.stages import run_stages
    from .native import check_llvm_only

    require_llvm_output(pipeline)
    options = blas_pass_options()
    run = run_stages(
        imported.text, pipeline, source_name=source_name, capture=False, pass_options=options
    )
    text = run.final_ir
    check_llvm_only(text, pipeline.name)
    return Lowered(text, pipeline.name, tuple((s.stage, s.seconds) for s in run.snapshots))


def eager_reference(model: Any, inputs: Sequence[Any]) -> list[Any]:
    """torch eager on cloned inputs (the model may write to them), as numpy arrays."""
    import torch

    cloned = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    shapes = ", ".join(_describe(x) for x in inputs) or "no inputs"
    try:
        with torch.no_grad():
            out = model(*cloned)
    except Exception as exc:
        text = str(exc).strip()
        first_line = text.splitlines()[0] if text else "(no message)"
        raise MlirpipeError(
            Problem(
                f"module '{model_name(model)}' fails on the example inputs ({shapes}): "
                f"{type(exc).__name__}: {first_line}",
                hint="give one example input per forward() argument, with the shapes and "
                "dtypes the model expects",
            )
        ) from None
    return [as_numpy(r) for r in flatten_results(out)]


def onnx_reference(model: Any, signature: EntrySignature, inputs: Sequence[Any]) -> list[Any]:
    """ONNX's reference evaluator on the inputs (for an ONNX model with no torch twin)."""
    from onnx.reference import ReferenceEvaluator

    feeds = {t.name: as_numpy(x) for t, x in zip(signature.inputs, inputs, strict=False)}
    return [as_numpy(r) for r in ReferenceEvaluator(model).run(None, feeds)]


def _describe(x: Any) -> str:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", type(x).__name__)
    if shape is None:
        return f"{type(x).__name__}"
    return "x".join([*map(str, shape), str(dtype).replace("torch.", "")])


@dataclass(frozen=True, slots=True)
class Outcome:
    """One case through one pipeline: verdict, comparison, timings; plain picklable data."""

    case: str
    pipeline: str
    verdict: str  # PASS, FAIL, UNSUPPORTED
    abi: str = ""
    mode: str = "jit"
    comparison: Comparison | None = None
    error: str | None = None
    compile_seconds: Mapping[str, float] = field(default_factory=dict)
    timing: Any = None  # timing.Timing of the native code
    torch_timing: Any = None  # timing.Timing of torch eager
    flops: float | None = None
    cached: bool = False

    @property
    def max_abs(self) -> float | None:
        return self.comparison.max_abs if self.comparison is not None else None


def describe_failure(exc: BaseException) -> str:
    if isinstance(exc, StageFailure | MlirpipeError):
        return exc.format()
    return f"{type(exc).__name__}: {exc}"


Reference = Callable[..., Any]
