"""An ONNX model: imported by torch-mlir's ONNX importer, run by ONNX's evaluator."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MlirpipeError, Problem, UsageError, first_line
from ...model import IRLevel, Location, Pipeline
from ..native.signature import EntrySignature, entry_signature
from ..results.compare import as_numpy

if TYPE_CHECKING:
    import onnx

from .base import Frontend

# ONNX (torch.operator "onnx.*") to linalg-on-tensors: the first three stages of onnx-linalg.
_ONNX_TO_LINALG = (
    "builtin.module(torch-onnx-to-torch-backend-pipeline,mlirpipe-decompose-tanh-gelu,"
    "torch-backend-to-linalg-on-tensors-backend-pipeline)"
)


class OnnxFrontend(Frontend):
    """An ONNX ModelProto or .onnx file, imported by torch-mlir's ONNX importer; ONNX's
    reference evaluator gives the expected results."""

    def __init__(self, model: Any, inputs: Sequence[Any]):
        super().__init__(model, inputs)
        is_path = isinstance(model, str | os.PathLike)
        self.name = Path(model).stem if is_path else (model.graph.name or "onnx")

    @cached_property
    def proto(self) -> onnx.ModelProto:
        if not isinstance(self.model, str | os.PathLike):
            return self.model
        path = os.fspath(self.model)
        return _load_onnx(_onnx_package(), path, Location(path))

    def _import(self, pipeline: Pipeline) -> tuple[str, EntrySignature]:
        level = pipeline.input
        text = import_onnx(self.model)
        if level is IRLevel.LINALG_ON_TENSORS:
            from ...lowering.stages import run_pass_pipeline

            text = run_pass_pipeline(text, _ONNX_TO_LINALG, source_name=self.name).final_ir
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
        return text, self._signature(text)

    def _signature(self, text: str) -> EntrySignature:
        """The imported function's signature, named as the graph names its inputs and outputs
        (an initializer listed among the graph inputs is a constant, not an argument)."""
        graph = self.proto.graph
        constants = {t.name for t in graph.initializer}
        inputs = [i.name for i in graph.input if i.name not in constants]
        return entry_signature(text, inputs, [o.name for o in graph.output])

    def onnx_signature(self) -> EntrySignature:
        """The entry signature of the model as imported (its declared inputs and results)."""
        return self._signature(import_onnx(self.model))

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        """ONNX's reference evaluator on the inputs (an ONNX model has no torch twin)."""
        from onnx.reference import ReferenceEvaluator

        signature = self.imported(first_pipeline()).signature
        feeds = {t.name: as_numpy(x) for t, x in zip(signature.inputs, self.inputs, strict=False)}
        return [as_numpy(r) for r in ReferenceEvaluator(self.proto).run(None, feeds)]


def import_onnx(model_or_path: onnx.ModelProto | str | os.PathLike[str]) -> str:
    """Torch-dialect MLIR (`torch.operator "onnx.*"` ops) of an ONNX model or .onnx file."""
    onnx = _onnx_package()
    where = None
    if isinstance(model_or_path, str | os.PathLike):
        where = Location(os.fspath(model_or_path))
        model = _load_onnx(onnx, os.fspath(model_or_path), where)
    else:
        model = model_or_path
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except onnx.shape_inference.InferenceError as exc:
        raise MlirpipeError(
            Problem(
                f"ONNX shape inference failed: {first_line(exc)}",
                where,
                "onnx.checker.check_model(model, full_check=True) shows every problem",
            )
        ) from None
    return _onnx_to_mlir(model, where)


def _onnx_to_mlir(model: onnx.ModelProto, where: Location | None) -> str:
    """A shape-inferred ModelProto through torch-mlir's ONNX importer."""
    from torch_mlir.extras import onnx_importer

    from ...mlir_env import new_context, print_ir

    context = new_context()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Found a node without a valid type proto", UserWarning)
        try:
            info = onnx_importer.ModelInfo(model)
            module = info.create_module(context=context).operation
            importer = onnx_importer.NodeImporter.define_function(info.main_graph, module)
            importer.import_all()
        except onnx_importer.OnnxImportError as exc:
            raise MlirpipeError(
                Problem(
                    f"the ONNX importer failed: {first_line(exc)}",
                    where,
                    "onnx.checker.check_model(model, full_check=True) shows what is wrong",
                )
            ) from None
        except UserWarning:
            raise MlirpipeError(
                Problem(
                    "the ONNX model has a value of unknown type (a node output that shape "
                    "inference could not type)",
                    where,
                    "shape inference cannot type custom-domain ops: declare their outputs in "
                    "graph.value_info",
                )
            ) from None
    return print_ir(module)


def _onnx_package() -> Any:
    try:
        import onnx
    except ImportError:
        raise MlirpipeError(
            Problem(
                "importing an ONNX model needs the 'onnx' package, which is not installed",
                hint="pip install onnx (or pip install 'pytest-mlirpipe[onnx]')",
            )
        ) from None
    return onnx


def _load_onnx(onnx_module: Any, path: str, where: Location) -> onnx.ModelProto:
    try:
        model = onnx_module.load(path)
    except OSError as exc:
        raise UsageError(
            Problem(f"cannot read the ONNX model: {exc.strerror}", where, "check the path")
        ) from None
    except Exception as exc:
        raise UsageError(
            Problem(
                f"not an ONNX model: {first_line(exc)}",
                where,
                "give a model saved with onnx.save (a serialized ModelProto)",
            )
        ) from None
    if not model.HasField("graph"):  # any bytes that parse, an empty file among them
        what = "the file is empty" if os.path.getsize(path) == 0 else "it holds no graph"
        raise UsageError(
            Problem(
                f"not an ONNX model: {what}",
                where,
                "give a model saved with onnx.save (a serialized ModelProto)",
            )
        )
    return model
