"""Front ends: a torch module, an ONNX model or MLIR text, chosen once, imported to MLIR."""

from __future__ import annotations

from ...model import IMPORT_TARGETS
from .base import (
    IMPORT_PROFILES,
    Frontend,
    ImportedModel,
    ImportOptions,
    reference_results,
)
from .choose import frontend_for
from .mlir_text import MlirTextFrontend
from .onnx_model import OnnxFrontend, import_onnx
from .torch_module import ExportedModule, TorchFrontend, export_module, import_torch, lower_exported

__all__ = [
    "IMPORT_PROFILES",
    "IMPORT_TARGETS",
    "ExportedModule",
    "Frontend",
    "ImportOptions",
    "ImportedModel",
    "MlirTextFrontend",
    "OnnxFrontend",
    "TorchFrontend",
    "export_module",
    "frontend_for",
    "import_onnx",
    "import_torch",
    "lower_exported",
    "reference_results",
]
