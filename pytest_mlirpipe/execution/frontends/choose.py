"""The front end of a model: torch module, ONNX model or MLIR text."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ...errors import Problem, UsageError
from .base import Frontend, ImportOptions
from .mlir_text import MlirTextFrontend
from .onnx_model import OnnxFrontend
from .torch_module import TorchFrontend


def frontend_for(
    model: Any, inputs: Sequence[Any], options: ImportOptions | None = None
) -> Frontend:
    """The front end of `model`: a .onnx path or an ONNX ModelProto, other text as MLIR, else
    a torch module (the only one that takes import options)."""
    is_path = isinstance(model, str | os.PathLike)
    if (is_path and str(model).endswith(".onnx")) or (
        type(model).__name__ == "ModelProto" and type(model).__module__.startswith("onnx")
    ):
        frontend: Frontend = OnnxFrontend(model, inputs)
    elif isinstance(model, str):
        frontend = MlirTextFrontend(model, inputs)
    else:
        return TorchFrontend(model, inputs, options)
    if options is not None and not options.is_default:
        raise UsageError(
            Problem(
                f"backend_legal_ops and decompositions apply to a torch module, not to "
                f"{'an ONNX model' if isinstance(frontend, OnnxFrontend) else 'MLIR text'}",
                hint="drop them, or check the torch module itself",
            )
        )
    return frontend
