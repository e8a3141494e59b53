"""A torch module: exported by torch.export, imported by torch-mlir's FX importer."""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import os
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import MlirpipeError, Problem, UsageError, first_line
from ...model import Pipeline
from ..import_cache import (
    torch_import_key,
    torch_model_digest,
)
from ..native.signature import EntrySignature, entry_signature
from ..refusal import COMPILER, TORCH, Refusal, RefusedError
from ..results.compare import as_numpy, flatten_results
from ..results.samples import Draws, draws_of

if TYPE_CHECKING:
    import torch

from ...model import IMPORT_TARGETS
from .base import TORCH_TARGETS, Frontend, ImportOptions, describe, private_tempdir
from .integer_division import divides_integers, exact_floor_division
from .tanh_gelu import exact_tanh_gelu, has_tanh_gelu


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
        if level not in TORCH_TARGETS:
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
        text = lower_exported(exported, TORCH_TARGETS[level], self.name, self.options)
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
        try:
            with torch.no_grad():
                out = self.model(*cloned)
        except Exception as exc:
            raise _eager_refusal(self.name, self.inputs, exc) from None
        return self._with_mutations([as_numpy(r) for r in flatten_results(out)], cloned)

    def eager(self) -> Callable[..., Any] | None:
        return self.model


def _eager_refusal(name: str, inputs: Sequence[Any], exc: Exception) -> RefusedError:
    """The model's own failure on its example inputs (torch eager), as torch's refusal."""
    shapes = ", ".join(describe(x) for x in inputs) or "no inputs"
    why = f"{type(exc).__name__}: {first_line(exc)}"
    return RefusedError(
        Problem(
            f"module '{name}' fails on the example inputs ({shapes}): {why}",
            hint="give one example input per forward() argument, with the shapes and "
            "dtypes the model expects",
        ),
        Refusal(TORCH, "eager", reason=why),
    )


def _eager_failure(module: Any, inputs: Sequence[Any]) -> Exception | None:
    """What torch eager raises calling `module` on (clones of) `inputs`, or None."""
    import torch

    cloned = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    try:
        with torch.no_grad(), _quiet_torch():
            module(*cloned)
    except Exception as exc:
        return exc
    return None


def _forward_names(model: Any) -> list[str]:
    try:
        params = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError, AttributeError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


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
    """An exported (and decomposed) program as MLIR at import target `to`; to linalg with its
    integer floor divisions made exact (integer_division.py), to torch or linalg with its tanh
    GELUs written out with torch's constant (tanh_gelu.py)."""
    _check_target(to)
    program = exported.program
    if to == "linalg" and divides_integers(program):
        program = _decompose(program, exact_floor_division(), what)
    if to in ("torch", "linalg") and has_tanh_gelu(program):
        program = _decompose(program, exact_tanh_gelu(), what)
    return _fx_import(program, IMPORT_TARGETS[to], what, options.legal_ops(to))


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
    # a model that fails on these inputs in eager too (a wrong shape): its own error, not
    # advice on tracing
    eager = _eager_failure(module, inputs)
    if eager is not None:
        raise _eager_refusal(type(module).__name__, inputs, eager) from None
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

    from ...mlir_env import new_context, print_ir, to_diagnostic

    context = new_context()
    diagnostics = []

    def collect(diag: Any) -> bool:
        diagnostics.append(to_diagnostic(diag))
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        with _quiet_torch(), private_tempdir():
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
