"""Front ends: a torch module, an ONNX model or MLIR text, chosen once, imported to MLIR."""

from __future__ import annotations

import contextlib
import inspect
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MlirpipeError, Problem, UsageError, first_line
from ..model import IRLevel, Location, Pipeline
from .cache import ArtifactCache
from .compare import as_numpy, flatten_results
from .import_cache import (
    Unkeyable,
    load_imported,
    options_fingerprint,
    store_imported,
    torch_import_key,
    torch_model_digest,
)
from .signature import EntrySignature, entry_signature

if TYPE_CHECKING:
    import onnx
    import torch

# `import_torch(to=...)` -> torch_mlir.fx.export_and_import's output_type.
IMPORT_TARGETS: dict[str, str] = {
    "torch": "raw",  # the torch dialect as imported: the input of the torch-to-linalg pipeline
    "linalg": "linalg-on-tensors",
    "tosa": "tosa",
}
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


@dataclass(frozen=True, slots=True)
class ImportedModel:
    """A model as MLIR at a pipeline's input level, with its entry signature."""

    text: str
    level: IRLevel
    signature: EntrySignature
    seconds: float
    cached: bool = False  # read from the artifact cache


# Frontend attributes that are not import options (all others are part of an import's key).
_NOT_OPTIONS = frozenset({"model", "inputs", "name", "_imports", "proto", "_model_digest"})


class Frontend:
    """A model and its example inputs as one of the three front ends (chosen by
    `frontend_for`): how it becomes MLIR, what results it expects, what torch can time.

    Each input level is imported once and shared by the pipelines that take it.
    """

    name = "model"  # the case name when a check gives none

    def __init__(self, model: Any, inputs: Sequence[Any]):
        self.model = model
        self.inputs = tuple(inputs)
        self._imports: dict[IRLevel, ImportedModel] = {}

    def imported(self, pipeline: Pipeline, cache: ArtifactCache | None = None) -> ImportedModel:
        """The model as MLIR at `pipeline`'s input level (from `cache` when it holds it)."""
        level = pipeline.input
        if level not in self._imports:
            t0 = time.perf_counter()
            key = self._cache_key(pipeline) if cache is not None and cache.enabled else None
            found = load_imported(cache, key) if cache is not None and key else None
            if found is None:
                text, signature = self._import(pipeline)
                found = ImportedModel(text, level, signature, 0.0)
                if cache is not None and key:
                    store_imported(cache, key, found)
            else:
                found = replace(found, cached=True)
            self._imports[level] = replace(found, seconds=time.perf_counter() - t0)
        return self._imports[level]

    def _cache_key(self, pipeline: Pipeline) -> str | None:
        """The artifact-cache key of the import for `pipeline` (None: never cached)."""
        try:
            extra = [
                type(self).__name__,
                pipeline.input.value,
                options_fingerprint(self, _NOT_OPTIONS),
            ]
        except Unkeyable:
            return None
        return self._model_key(extra)

    def _model_key(self, extra: list[str]) -> str | None:
        return None

    def _import(self, pipeline: Pipeline) -> tuple[str, EntrySignature]:
        raise NotImplementedError

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        """The results to compare with, from the model's own reference run."""
        raise NotImplementedError

    def eager(self) -> Callable[..., Any] | None:
        """What torch runs when the native code is timed against it (None: nothing)."""
        return None


class TorchFrontend(Frontend):
    """A torch.nn.Module (or FX graph), exported by torch.export; torch eager is the reference."""

    def __init__(self, model: Any, inputs: Sequence[Any]):
        super().__init__(model, inputs)
        self.name = type(model).__name__

    def _import(self, pipeline: Pipeline) -> tuple[str, EntrySignature]:
        level = pipeline.input
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
        text = import_torch(self.model, list(self.inputs), _TORCH_TARGETS[level])
        return text, entry_signature(text, _forward_names(self.model))

    def _model_key(self, extra: list[str]) -> str | None:
        digest = self._model_digest
        return torch_import_key(digest, extra) if digest is not None else None

    @cached_property
    def _model_digest(self) -> str | None:
        """Hashed once for all the levels this model is imported at."""
        return torch_model_digest(self.model, self.inputs)

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        """torch eager on cloned inputs (the model may write to them), as numpy arrays."""
        import torch

        cloned = [x.clone() if isinstance(x, torch.Tensor) else x for x in self.inputs]
        shapes = ", ".join(_describe(x) for x in self.inputs) or "no inputs"
        try:
            with torch.no_grad():
                out = self.model(*cloned)
        except Exception as exc:
            raise MlirpipeError(
                Problem(
                    f"module '{self.name}' fails on the example inputs ({shapes}): "
                    f"{type(exc).__name__}: {first_line(exc)}",
                    hint="give one example input per forward() argument, with the shapes and "
                    "dtypes the model expects",
                )
            ) from None
        return [as_numpy(r) for r in flatten_results(out)]

    def eager(self) -> Callable[..., Any] | None:
        return self.model


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
            from ..lowering.stages import run_pass_pipeline
            from .blas_library import blas_pass_options

            text = run_pass_pipeline(
                text, _ONNX_TO_LINALG, source_name=self.name, pass_options=blas_pass_options()
            ).final_ir
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
        graph = self.proto.graph
        return entry_signature(text, [i.name for i in graph.input], [o.name for o in graph.output])

    def onnx_signature(self) -> EntrySignature:
        """The entry signature of the model as imported (its declared inputs and results)."""
        return self._signature(import_onnx(self.model))

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        """ONNX's reference evaluator on the inputs (an ONNX model has no torch twin)."""
        from onnx.reference import ReferenceEvaluator

        signature = self.imported(first_pipeline()).signature
        feeds = {t.name: as_numpy(x) for t, x in zip(signature.inputs, self.inputs, strict=False)}
        return [as_numpy(r) for r in ReferenceEvaluator(self.proto).run(None, feeds)]


class MlirTextFrontend(Frontend):
    """MLIR text, taken as already at a pipeline's input level; it has no reference run."""

    name = "mlir"

    def _import(self, pipeline: Pipeline) -> tuple[str, EntrySignature]:
        return self.model, entry_signature(self.model)

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        raise UsageError(
            Problem(
                "MLIR text has no torch eager to compare with",
                hint="pass reference=a function computing the expected results from the inputs",
            )
        )


def frontend_for(model: Any, inputs: Sequence[Any]) -> Frontend:
    """The front end of `model`: a .onnx path or an ONNX ModelProto, other text as MLIR, else
    a torch module."""
    is_path = isinstance(model, str | os.PathLike)
    if (is_path and str(model).endswith(".onnx")) or (
        type(model).__name__ == "ModelProto" and type(model).__module__.startswith("onnx")
    ):
        return OnnxFrontend(model, inputs)
    if isinstance(model, str):
        return MlirTextFrontend(model, inputs)
    return TorchFrontend(model, inputs)


def reference_results(reference: Callable[..., Any], inputs: Sequence[Any]) -> list[np.ndarray]:
    """A user's reference function on cloned inputs, as numpy arrays."""
    import torch

    cloned = [x.clone() if isinstance(x, torch.Tensor) else np.copy(x) for x in inputs]
    with torch.no_grad():
        return [as_numpy(r) for r in flatten_results(reference(*cloned))]


def _forward_names(model: Any) -> list[str]:
    try:
        params = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError, AttributeError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _describe(x: Any) -> str:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", type(x).__name__)
    if shape is None:
        return f"{type(x).__name__}"
    return "x".join([*map(str, shape), str(dtype).replace("torch.", "")])


# ---- the importers ---------------------------------------------------------------------------


def import_torch(module: torch.nn.Module, inputs: Sequence[torch.Tensor], to: str) -> str:
    """MLIR text of `module` traced by torch.export with `inputs`, as `func.func @forward`.

    `to` is "torch" (the torch dialect as imported), "linalg" or "tosa".
    """
    if to not in IMPORT_TARGETS:
        raise UsageError(
            Problem(
                f"unknown import target '{to}'",
                hint=f"accepted targets: {', '.join(IMPORT_TARGETS)}",
            )
        )
    program = _export(module, inputs)
    return _fx_import(program, IMPORT_TARGETS[to], type(module).__name__)


def _export(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> Any:
    """torch.export's program of `module` traced with `inputs`."""
    import torch

    try:
        with _quiet_torch():
            return torch.export.export(module, tuple(inputs), strict=False)
    except Exception as exc:
        raise MlirpipeError(
            Problem(
                f"module '{type(module).__name__}' could not be exported by torch.export: "
                f"{type(exc).__name__}: {first_line(exc)}",
                hint="torch.export traces forward() once with the example inputs: branch on "
                "tensor values with torch.cond, avoid .item()/.tolist()/.numpy(); "
                "torch.export.export(model, inputs) shows the whole error",
            )
        ) from exc


def _fx_import(program: Any, output_type: str, what: str) -> str:
    """An exported program through torch-mlir's FX importer, lowered to `output_type`."""
    from torch_mlir import fx
    from torch_mlir.compiler_utils import TorchMlirCompilerError
    from torch_mlir.extras.fx_importer import FxImporter

    from ..mlir_env import new_context, print_ir, to_diagnostic

    context = new_context()
    diagnostics = []

    def collect(diag: Any) -> bool:
        diagnostics.append(to_diagnostic(diag))
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        with _quiet_torch(), _private_tempdir():
            imported = fx.export_and_import(
                program,
                output_type=output_type,
                func_name="forward",
                fx_importer=FxImporter(context=context),
            )
    except TorchMlirCompilerError:
        errors = [d for d in diagnostics if d.severity == "error"]
        raise MlirpipeError(
            Problem(
                f"module '{what}' was exported but could not be lowered to {output_type}: "
                + (errors[0].message if errors else "torch-mlir's lowering pipeline failed"),
                errors[0].location if errors else None,
                "import it with to='torch' (`--to torch`) and run "
                "`mlirpipe stages FILE --pipeline torch-to-linalg` to see the failing pass",
            )
        ) from None
    finally:
        handler.detach()
    return print_ir(imported.operation)


@contextlib.contextmanager
def _private_tempdir() -> Iterator[None]:
    """torch-mlir writes the module of a failing lowering to $TMPDIR/UnnammedModule.mlir (its
    `run_pipeline_with_repro_report`, with no option to send it elsewhere); our own error
    says how to reproduce, so that file goes to a private folder, removed afterwards."""
    import tempfile

    saved = tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="mlirpipe-import-") as private:
        tempfile.tempdir = private
        try:
            yield
        finally:
            tempfile.tempdir = saved


@contextlib.contextmanager
def _quiet_torch() -> Iterator[None]:
    """Hide torch.export's warning about its own use of a deprecated pytree API."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning
        )
        yield


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

    from ..mlir_env import new_context, print_ir

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
        return onnx_module.load(path)
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
