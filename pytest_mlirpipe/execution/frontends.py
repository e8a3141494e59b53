"""Front ends: input specs, example tensors, model loading, and PyTorch/ONNX import to MLIR."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import itertools
import os
import re
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MlirpipeError, Problem, UsageError, did_you_mean
from ..model import Location

if TYPE_CHECKING:
    import onnx
    import torch

# Element type of an input spec -> name of the torch dtype.
DTYPES: dict[str, str] = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "bf16": "bfloat16",
    "i1": "bool",
    "i8": "int8",
    "i32": "int32",
    "i64": "int64",
}

# `import_torch(to=...)` -> torch_mlir.fx.export_and_import's output_type.
IMPORT_TARGETS: dict[str, str] = {
    "torch": "raw",  # the torch dialect as imported: the input of the torch-to-linalg pipeline
    "linalg": "linalg-on-tensors",
    "tosa": "tosa",
}

_SPEC_HINT = (
    "write DIMSxTYPE items separated by commas, e.g. 2x3xf32,10xi64 "
    "(a scalar is its type alone, e.g. f32)"
)
_DIM = re.compile(r"[0-9]+")
_MODULE_NUMBERS = itertools.count()


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """One model input: its shape (empty for a scalar) and its MLIR-style element type."""

    shape: tuple[int, ...]
    dtype: str

    def __str__(self) -> str:
        return "x".join([*map(str, self.shape), self.dtype])


def parse_input_spec(text: str, where: Location | None = None) -> list[TensorSpec]:
    """`2x2xf32,10xi64,f32` -> TensorSpecs; every bad item is reported at once."""
    if not text.strip():
        return []
    specs: list[TensorSpec] = []
    problems: list[Problem] = []
    for number, raw in enumerate(text.split(","), 1):
        item = raw.strip()
        if not item:
            problems.append(
                Problem(f"input spec item {number} of '{text}' is empty", where, _SPEC_HINT)
            )
            continue
        *dims, dtype = item.split("x")
        if dtype not in DTYPES:
            problems.append(
                Problem(
                    f"input spec '{item}': unknown element type '{dtype}' "
                    f"(accepted: {', '.join(DTYPES)})",
                    where,
                    _SPEC_HINT,
                )
            )
            continue
        bad = [d for d in dims if not _DIM.fullmatch(d)]
        if bad:
            problems.append(
                Problem(
                    f"input spec '{item}': dimension '{bad[0]}' is not a non-negative integer",
                    where,
                    _SPEC_HINT,
                )
            )
            continue
        specs.append(TensorSpec(tuple(int(d) for d in dims), dtype))
    if problems:
        raise UsageError(problems)
    return specs


def example_inputs(specs: Sequence[TensorSpec], seed: int = 0) -> list[torch.Tensor]:
    """Seeded random tensors: normal floats, integers in [-10, 10), random booleans for i1."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    tensors = []
    for spec in specs:
        dtype = getattr(torch, DTYPES[spec.dtype])
        if dtype == torch.bool:
            tensor = torch.randint(0, 2, spec.shape, generator=gen).to(torch.bool)
        elif dtype.is_floating_point:
            tensor = torch.randn(spec.shape, generator=gen, dtype=dtype)
        else:
            tensor = torch.randint(-10, 10, spec.shape, generator=gen, dtype=dtype)
        tensors.append(tensor)
    return tensors


def load_model(ref: str) -> torch.nn.Module:
    """The model `path/to/model.py::Name` names: an nn.Module subclass (built with no
    arguments), an nn.Module instance, or a zero-argument function returning one."""
    path_text, sep, name = ref.rpartition("::")
    if not sep or not path_text or not name:
        raise UsageError(
            Problem(
                f"model reference '{ref}' does not name a model",
                Location(path_text or ref),
                "write FILE.py::Name, e.g. models/mlp.py::MLP",
            )
        )
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(
            Problem(
                "no model file at this path",
                Location(path_text),
                "the part before '::' is a Python file (relative to the current directory)",
            )
        )
    if path.suffix != ".py":
        raise UsageError(
            Problem(
                f"a model file is Python source (.py), not '{path.suffix or path.name}'",
                Location(path_text),
                "an ONNX model is imported with `mlirpipe import MODEL.onnx --to onnx`",
            )
        )
    module = _exec_file(path, path_text)
    import torch

    if name not in vars(module):
        public = [n for n in vars(module) if not n.startswith("_")]
        models = [n for n in public if _is_model_like(vars(module)[n], module.__name__, torch)]
        raise UsageError(
            Problem(
                f"'{path_text}' defines no '{name}'",
                Location(path_text),
                did_you_mean(name, public) or f"models it defines: {', '.join(models) or '(none)'}",
            )
        )
    obj = vars(module)[name]
    if isinstance(obj, torch.nn.Module):
        return obj
    if (isinstance(obj, type) and not issubclass(obj, torch.nn.Module)) or not callable(obj):
        kind = "class" if isinstance(obj, type) else type(obj).__name__
        raise UsageError(
            Problem(
                f"'{name}' is {_a(kind)}, not an nn.Module subclass, instance or factory",
                Location(path_text, _line_of(obj)),
                "name a torch.nn.Module subclass, an instance of one, or a function returning one",
            )
        )
    try:
        made = obj()
    except Exception as exc:
        raise UsageError(
            Problem(
                f"calling '{name}()' raised {type(exc).__name__}: {_first_line(exc)}",
                _frame_in(exc, path, path_text) or Location(path_text, _line_of(obj)),
                "the model is built with no arguments: give its parameters defaults, or name "
                "a zero-argument function that builds it",
            )
        ) from exc
    if not isinstance(made, torch.nn.Module):
        raise UsageError(
            Problem(
                f"'{name}()' returned {_a(type(made).__name__)}, not an nn.Module",
                Location(path_text, _line_of(obj)),
                "a factory function must return the torch.nn.Module to import",
            )
        )
    return made


def _exec_file(path: Path, path_text: str) -> Any:
    """Import a Python file under a fresh module name (two files named model.py never clash)."""
    stem = re.sub(r"\W", "_", path.stem)
    mod_name = f"_mlirpipe_model_{next(_MODULE_NUMBERS)}_{stem}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None  # a .py file always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses and pickling look the module up here
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[mod_name]
        raise UsageError(
            Problem(
                f"the model file has a syntax error: {exc.msg}",
                Location(path_text, exc.lineno or 0, exc.offset or 0),
                "the file must import on its own, like `python FILE.py` runs it",
            )
        ) from None
    except Exception as exc:
        del sys.modules[mod_name]
        raise UsageError(
            Problem(
                f"importing the model file raised {type(exc).__name__}: {_first_line(exc)}",
                _frame_in(exc, path, path_text) or Location(path_text),
                "the file must import on its own, like `python FILE.py` runs it "
                "(its directory is not on sys.path)",
            )
        ) from exc
    return module


def _is_model_like(obj: object, module_name: str, torch: Any) -> bool:
    if isinstance(obj, torch.nn.Module):
        return True
    return (
        isinstance(obj, type) and issubclass(obj, torch.nn.Module) and obj.__module__ == module_name
    )


def _line_of(obj: object) -> int:
    try:
        return inspect.getsourcelines(obj)[1]  # type: ignore[arg-type]
    except (TypeError, OSError):
        return 0


def _frame_in(exc: BaseException, path: Path, path_text: str) -> Location | None:
    """The innermost traceback line of `exc` that is in the file `path`."""
    target = path.resolve()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename).resolve() == target:
            return Location(path_text, frame.lineno or 0)
    return None


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else "(no message)"


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
    import torch
    from torch_mlir import fx
    from torch_mlir.compiler_utils import TorchMlirCompilerError
    from torch_mlir.extras.fx_importer import FxImporter

    from ..mlir_env import new_context, print_ir, to_diagnostic

    what = type(module).__name__
    try:
        with _quiet_torch():
            program = torch.export.export(module, tuple(inputs), strict=False)
    except Exception as exc:
        raise MlirpipeError(
            Problem(
                f"module '{what}' could not be exported by torch.export: "
                f"{type(exc).__name__}: {_first_line(exc)}",
                hint="torch.export traces forward() once with the example inputs: branch on "
                "tensor values with torch.cond, avoid .item()/.tolist()/.numpy(); "
                "torch.export.export(model, inputs) shows the whole error",
            )
        ) from exc
    context = new_context()
    diagnostics = []

    def collect(diag: Any) -> bool:
        diagnostics.append(to_diagnostic(diag))
        return True

    handler = context.attach_diagnostic_handler(collect)
    output_type = IMPORT_TARGETS[to]
    try:
        with _quiet_torch():
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
def _quiet_torch() -> Iterator[None]:
    """Hide torch.export's warning about its own use of a deprecated pytree API."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning
        )
        yield


def import_onnx(model_or_path: onnx.ModelProto | str | os.PathLike[str]) -> str:
    """Torch-dialect MLIR (`torch.operator "onnx.*"` ops) of an ONNX model or .onnx file."""
    try:
        import onnx
    except ImportError:
        raise MlirpipeError(
            Problem(
                "importing an ONNX model needs the 'onnx' package, which is not installed",
                hint="pip install onnx (or pip install 'pytest-mlirpipe[onnx]')",
            )
        ) from None
    from torch_mlir.extras import onnx_importer

    from ..mlir_env import new_context, print_ir

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
                f"ONNX shape inference failed: {_first_line(exc)}",
                where,
                "onnx.checker.check_model(model, full_check=True) shows every problem",
            )
        ) from None
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
                    f"the ONNX importer failed: {_first_line(exc)}",
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
                f"not an ONNX model: {_first_line(exc)}",
                where,
                "give a model saved with onnx.save (a serialized ModelProto)",
            )
        ) from None
