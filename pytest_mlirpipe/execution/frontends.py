"""Front ends: a torch module, an ONNX model or MLIR text, chosen once, imported to MLIR."""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import os
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
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
from .refusal import COMPILER, TORCH, Refusal, RefusedError
from .samples import Draws, draws_of
from .signature import EntrySignature, entry_signature, scalar_results_as_tensors

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
_NOT_OPTIONS = frozenset(
    {
        "model",
        "inputs",
        "name",
        "_imports",
        "proto",
        "_model_digest",
        "exported",  # what an import computes (cached properties), not how it is asked for
        "_result_dtypes",
    }
)


# Named import profiles: the backend_legal_ops another runner imports with, by import target.
# "torch-mlir-e2e": those of torch-mlir's e2e test runner (its lower_module), so a suite can
# import as that runner does; e.g. its adaptive max-pool models need their ops kept whole.
_POOLS = (
    "aten.adaptive_avg_pool1d",
    "aten.adaptive_avg_pool2d",
    "aten.adaptive_max_pool1d",
    "aten.adaptive_max_pool2d",
)
IMPORT_PROFILES: dict[str, dict[str, tuple[str, ...]]] = {
    "torch-mlir-e2e": {
        "torch": (),
        "linalg": ("aten.flatten.using_ints", *_POOLS, "aten.unflatten.int"),
        "tosa": ("aten.flatten.using_ints", "aten.native_layer_norm", *_POOLS, "aten.linear"),
    },
}


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """How a torch module is imported: the ops torch-mlir keeps whole (`backend_legal_ops`,
    e.g. "aten.adaptive_max_pool2d", or those of a named `profile` of IMPORT_PROFILES) and the
    decompositions run on the exported program (op names such as "aten.gelu"; None:
    torch-mlir's default table, (): none at all)."""

    backend_legal_ops: tuple[str, ...] = ()
    decompositions: tuple[str, ...] | None = None
    profile: str = ""

    @classmethod
    def of(
        cls,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        profile: str | None = None,
    ) -> ImportOptions:
        """Options from what a caller gives: op names or torch op objects, any sequence."""
        if isinstance(backend_legal_ops, str) or isinstance(decompositions, str):
            raise UsageError(
                Problem(
                    "backend_legal_ops and decompositions take a list of op names, not a string",
                    hint="e.g. backend_legal_ops=['aten.adaptive_max_pool2d']",
                )
            )
        if profile and profile not in IMPORT_PROFILES:
            raise UsageError(
                Problem(
                    f"unknown import profile {profile!r}",
                    hint=f"the profiles: {', '.join(sorted(IMPORT_PROFILES))}",
                )
            )
        if profile and backend_legal_ops:
            raise UsageError(
                Problem(
                    f"import_profile {profile!r} sets the backend_legal_ops: give one of the two",
                    hint="drop backend_legal_ops, or the profile",
                )
            )
        decomps = None if decompositions is None else tuple(_op_name(d) for d in decompositions)
        return cls(tuple(_op_name(o) for o in backend_legal_ops), decomps, profile or "")

    @property
    def is_default(self) -> bool:
        return not self.backend_legal_ops and self.decompositions is None and not self.profile

    def legal_ops(self, to: str) -> tuple[str, ...]:
        """The ops torch-mlir keeps whole when importing to `to` (torch, linalg, tosa)."""
        if self.profile:
            return IMPORT_PROFILES[self.profile][to]
        return self.backend_legal_ops

    def decomposition_table(self) -> dict[Any, Any]:
        """The decomposition table these options ask for (op overload -> function)."""
        if self.decompositions is None:
            from torch_mlir.extras.fx_decomp_util import get_decomposition_table

            return get_decomposition_table()
        from torch._decomp import get_decompositions

        return get_decompositions([_torch_op(n) for n in self.decompositions])


def _op_name(op: Any) -> str:
    """ "aten.gelu" for torch.ops.aten.gelu (packet or overload) or the text itself."""
    return op if isinstance(op, str) else str(op).removesuffix(".default")


def _torch_op(name: str) -> Any:
    """The torch op (packet or overload) an op name such as "aten.gelu" names."""
    import torch

    target: Any = torch.ops
    try:
        for part in name.split("."):
            target = getattr(target, part)
    except (AttributeError, RuntimeError):
        target = None
    if not isinstance(target, torch._ops.OpOverloadPacket | torch._ops.OpOverload):
        raise UsageError(
            Problem(
                f"decompositions: '{name}' is not a torch op",
                hint="name ops as torch.ops spells them, e.g. 'aten.gelu' or 'aten.gelu.default'",
            )
        )
    return target


@dataclass(frozen=True, slots=True)
class ExportedModule:
    """A torch module as torch.export traced it: its program (decomposed), the export mode
    that traced it, and the role of each result of the imported function."""

    program: Any
    mode: str  # "non-strict" (torch.export's default) or "strict" (the fallback)
    roles: tuple[tuple[str, str], ...]

    @property
    def mutates(self) -> bool:
        return any(kind != "output" for kind, _ in self.roles)

    def result_names(self) -> list[str]:
        """Names of the imported function's results: a mutated input reads `x (after the
        call)`, the model's own results `result{i}`."""
        return [
            f"result{i}" if kind == "output" else f"{target} (after the call)"
            for i, (kind, target) in enumerate(self.roles)
        ]


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
                text = scalar_results_as_tensors(text, signature)
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

    def export_mode(self) -> str:
        """How torch.export traced the model ("" when it was not exported)."""
        return ""

    def draws(self) -> Draws | None:
        """The random ops the model calls and the samples they draw (None: it draws none)."""
        return None


class TorchFrontend(Frontend):
    """A torch.nn.Module (or FX graph), exported by torch.export; torch eager is the reference."""

    def __init__(self, model: Any, inputs: Sequence[Any], options: ImportOptions | None = None):
        super().__init__(model, inputs)
        self.name = type(model).__name__
        self.options = options or ImportOptions()

    @cached_property
    def exported(self) -> ExportedModule:
        """The program torch.export traced, shared by every import level."""
        return export_module(self.model, self.inputs, self.options)

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
        exported = self.exported
        text = lower_exported(exported, _TORCH_TARGETS[level], self.name, self.options)
        names = exported.result_names() if exported.mutates else []
        torch_dtypes = ([str(x.dtype) for x in self.inputs], self._result_dtypes)
        return text, entry_signature(
            text, _forward_names(self.model), names, torch_dtypes=torch_dtypes
        )

    def export_mode(self) -> str:
        exported = self.__dict__.get("exported")  # the cached_property, if it was computed
        return exported.mode if exported is not None else ""

    def draws(self) -> Draws | None:
        try:
            return draws_of(self.exported.program)
        except MlirpipeError:
            return None  # the import reports it, pipeline by pipeline

    def _with_mutations(self, outputs: list[np.ndarray], cloned: Sequence[Any]) -> list[np.ndarray]:
        """The expected results in the imported function's order: the model's own results,
        and each input (or buffer) it writes to, as it is after the eager call."""
        try:
            exported = self.exported
        except MlirpipeError:
            return outputs  # the import reports it, pipeline by pipeline
        if not exported.mutates:
            return outputs
        program = exported.program
        user_inputs = [str(n) for n in program.graph_signature.user_inputs]
        buffers = dict(self.model.named_buffers())
        own = iter(outputs)
        arranged = []
        for kind, target in exported.roles:
            if kind == "input":
                arranged.append(as_numpy(cloned[user_inputs.index(target)]))
            elif kind == "buffer":
                arranged.append(as_numpy(buffers[target].detach().clone()))
            else:
                arranged.append(next(own))
        return arranged

    @cached_property
    def _result_dtypes(self) -> list[str]:
        """torch's dtype of each result of the exported program, in the imported function's
        order (e.g. torch.uint8, which MLIR's signless i8 loses); "" for a Python scalar."""
        graph = self.exported.program.graph
        output = next(n for n in graph.nodes if n.op == "output")
        values = [getattr(a, "meta", {}).get("val") for a in output.args[0]]
        return [str(getattr(v, "dtype", "")) for v in values]

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

        with contextlib.suppress(MlirpipeError):  # the import reports it, pipeline by pipeline
            _ = self.exported  # exported first: eager may write to the module's buffers
        cloned = [x.clone() if isinstance(x, torch.Tensor) else x for x in self.inputs]
        shapes = ", ".join(_describe(x) for x in self.inputs) or "no inputs"
        try:
            with torch.no_grad():
                out = self.model(*cloned)
        except Exception as exc:
            why = f"{type(exc).__name__}: {first_line(exc)}"
            raise RefusedError(
                Problem(
                    f"module '{self.name}' fails on the example inputs ({shapes}): {why}",
                    hint="give one example input per forward() argument, with the shapes and "
                    "dtypes the model expects",
                ),
                Refusal(TORCH, "eager", reason=why),
            ) from None
        return self._with_mutations([as_numpy(r) for r in flatten_results(out)], cloned)

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


def import_torch(
    module: torch.nn.Module,
    inputs: Sequence[torch.Tensor],
    to: str,
    options: ImportOptions | None = None,
) -> str:
    """MLIR text of `module` traced by torch.export with `inputs`, as `func.func @forward`.

    `to` is "torch" (the torch dialect as imported), "linalg" or "tosa".
    """
    _check_target(to)
    options = options or ImportOptions()
    exported = export_module(module, inputs, options)
    return lower_exported(exported, to, type(module).__name__, options)


def _check_target(to: str) -> None:
    if to not in IMPORT_TARGETS:
        raise UsageError(
            Problem(
                f"unknown import target '{to}'",
                hint=f"accepted targets: {', '.join(IMPORT_TARGETS)}",
            )
        )


def export_module(
    module: torch.nn.Module, inputs: Sequence[torch.Tensor], options: ImportOptions
) -> ExportedModule:
    """torch.export's program of `module` with the decompositions of `options` applied."""
    program, how = _export(module, inputs)
    table = options.decomposition_table()
    if table:
        program = _decompose(program, table, type(module).__name__)
    roles = _result_roles(program)
    for kind, target in roles:
        if kind == "buffer":  # imported as it is now, not as a later eager call leaves it
            program.state_dict[target] = program.state_dict[target].detach().clone()
    return ExportedModule(program, how, roles)


def _decompose(program: Any, table: Any, what: str) -> Any:
    """The exported program with `table`'s decompositions run; torch's refusal (an op it
    cannot functionalize, such as a prims op whose result aliases its input) as a RefusedError."""
    try:
        with _quiet_torch():
            return program.run_decompositions(table)
    except Exception as exc:
        why = f"{type(exc).__name__}: {first_line(exc)}"
        raise RefusedError(
            Problem(
                f"module '{what}' was exported but torch could not decompose its program: {why}",
                hint="torch's run_decompositions functionalizes every op: an op outside ATen "
                "whose result aliases an input (prims.view_of, prims.squeeze, ...) cannot be; "
                "use the ATen op (x.view, x.squeeze) or add .clone()",
            ),
            Refusal(TORCH, "decompose", reason=why),
        ) from None


def lower_exported(exported: ExportedModule, to: str, what: str, options: ImportOptions) -> str:
    """An exported (and decomposed) program as MLIR at import target `to`."""
    _check_target(to)
    return _fx_import(exported.program, IMPORT_TARGETS[to], what, options.legal_ops(to))


# The second export mode, tried when the first fails: TorchDynamo traces forward() and keeps
# int(t) / t.item() as data-dependent ops, where non-strict tracing must guard on their value.
_EXPORT_MODES = (("non-strict", False), ("strict", True))


def _export(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> tuple[Any, str]:
    """torch.export's program of `module` traced with `inputs`, and the mode that traced it.

    First as torch-mlir's e2e runner exports (torch.export's default, non-strict), then with
    strict=True."""
    import torch

    failures: list[tuple[str, Exception]] = []
    for how, strict in _EXPORT_MODES:
        # a failed first attempt is retried: what torch prints about it (a warning, the graph
        # so far on stderr) is not news
        quiet = ("torch.fx.experimental.symbolic_shapes",) if not failures else ()
        printed = contextlib.redirect_stderr(io.StringIO()) if not failures else nullcontext()
        try:
            with _quiet_torch(*quiet), _torch_logs_off(), printed:
                return torch.export.export(module, tuple(inputs), strict=strict), how
        except Exception as exc:
            failures.append((how, exc))
    (_, first), (second_how, second) = failures
    why = (
        f"{type(first).__name__}: {first_line(first)} (in {second_how} mode: "
        f"{type(second).__name__}: {first_line(second)})"
    )
    raise RefusedError(
        Problem(
            f"module '{type(module).__name__}' could not be exported by torch.export: {why}",
            hint="torch.export traces forward() once with the example inputs: branch on "
            "tensor values with torch.cond, avoid .tolist()/.numpy(); "
            "torch.export.export(model, inputs) shows the whole error",
        ),
        Refusal(TORCH, "export", reason=why),
    ) from first


def _result_roles(program: Any) -> tuple[tuple[str, str], ...]:
    """What each result of the imported function is, in order: ("output", ""), ("input",
    name) for a user input the model writes to, ("buffer", name) for a mutated buffer."""
    from torch.export.graph_signature import OutputKind

    kinds = {
        OutputKind.USER_OUTPUT: "output",
        OutputKind.USER_INPUT_MUTATION: "input",
        OutputKind.BUFFER_MUTATION: "buffer",
    }
    roles = []
    for spec in program.graph_signature.output_specs:
        kind = kinds.get(spec.kind)
        if kind is None:
            continue  # gradients and tokens do not come back from a frozen import
        roles.append((kind, spec.target or ""))
    return tuple(roles)


def _fx_import(
    program: Any, output_type: str, what: str, backend_legal_ops: Sequence[str] = ()
) -> str:
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
                decomposition_table={},  # export_module ran them
                backend_legal_ops=list(backend_legal_ops) or None,
            )
    except TorchMlirCompilerError:
        errors = [d for d in diagnostics if d.severity == "error"]
        why = errors[0].message if errors else "torch-mlir's lowering pipeline failed"
        raise RefusedError(
            Problem(
                f"module '{what}' was exported but could not be lowered to {output_type}: {why}",
                errors[0].location if errors else None,
                "import it with to='torch' (`--to torch`) and run "
                "`mlirpipe stages FILE --pipeline torch-to-linalg` to see the failing pass",
            ),
            Refusal(COMPILER, "import", f"torch-backend-to-{output_type}-backend-pipeline", why),
        ) from None
    except Exception as exc:
        refused = _importer_refusal(exc, what)
        if refused is None:
            raise
        raise refused from None
    finally:
        handler.detach()
    return print_ir(imported.operation)


def _importer_refusal(exc: Exception, what: str) -> RefusedError | None:
    """An exception torch-mlir's FX importer raised from its own code (say a KeyError for a
    dtype its tables lack) as its refusal of the model; None when it rose elsewhere."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or "torch_mlir" not in frames[-1].filename:
        return None
    why = f"{type(exc).__name__}: {first_line(exc)} (in torch-mlir's {frames[-1].name})"
    return RefusedError(
        Problem(
            f"module '{what}' was exported but torch-mlir's FX importer failed on it: {why}",
            hint="the FX importer cannot express something in this graph (an op, a dtype, a "
            "literal): torch-mlir's limit; torch_mlir.fx.export_and_import(model, *inputs) "
            "shows its traceback",
        ),
        Refusal(COMPILER, "import", reason=f"FX importer: {why}"),
    )


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
def _quiet_torch(*loggers: str) -> Iterator[None]:
    """Hide torch.export's warning about its own use of a deprecated pytree API, its
    structured-trace records (DEBUG `torch.__trace`, which pytest would show with a failure)
    unless TORCH_TRACE asks for them, and the records of `loggers`."""
    silenced = [logging.getLogger(name) for name in loggers]
    trace = logging.getLogger("torch.__trace")
    if not os.environ.get("TORCH_TRACE"):
        silenced.append(trace)
    saved = [(logger, logger.disabled) for logger in silenced]
    for logger in silenced:
        logger.disabled = True
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning
            )
            yield
    finally:
        for logger, disabled in saved:
            logger.disabled = disabled


# torch logs a failed trace at ERROR, with its traceback (fake tensors, torch.export, TorchDynamo):
# ~40 lines before our own error, which says what failed and how to see torch's whole error.
_EXPORT_LOGGERS = ("torch._subclasses.fake_tensor", "torch.export", "torch._dynamo")


@contextlib.contextmanager
def _torch_logs_off() -> Iterator[None]:
    """torch's own error records while it exports (the loggers' levels raised, then restored),
    unless TORCH_LOGS asks torch for logs."""
    if os.environ.get("TORCH_LOGS"):
        yield
        return
    loggers = [logging.getLogger(name) for name in _EXPORT_LOGGERS]
    saved = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


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
