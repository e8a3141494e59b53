"""A model named on the command line (FILE.py::Name) and seeded example inputs from a spec."""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import traceback
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Problem, UsageError, did_you_mean, first_line
from ..model import Location
from .commands import PLAIN, CommandContext

if TYPE_CHECKING:
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

_SPEC_HINT = (
    "write DIMSxTYPE items separated by commas, e.g. 2x3xf32,10xi64 "
    "(a scalar is its type alone, e.g. f32)"
)
_DIM = re.compile(r"[0-9]+")


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
        parsed = _parse_item(raw.strip(), number, text, where)
        if isinstance(parsed, Problem):
            problems.append(parsed)
        else:
            specs.append(parsed)
    if problems:
        raise UsageError(problems)
    return specs


def _parse_item(item: str, number: int, text: str, where: Location | None) -> TensorSpec | Problem:
    if not item:
        return Problem(f"input spec item {number} of '{text}' is empty", where, _SPEC_HINT)
    *dims, dtype = item.split("x")
    if dtype not in DTYPES:
        return Problem(
            f"input spec '{item}': unknown element type '{dtype}' (accepted: {', '.join(DTYPES)})",
            where,
            _SPEC_HINT,
        )
    bad = [d for d in dims if not _DIM.fullmatch(d)]
    if bad:
        return Problem(
            f"input spec '{item}': dimension '{bad[0]}' is not a non-negative integer",
            where,
            _SPEC_HINT,
        )
    return TensorSpec(tuple(int(d) for d in dims), dtype)


def example_inputs(specs: Sequence[TensorSpec], seed: int = 0) -> list[torch.Tensor]:
    """Seeded random tensors: normal floats, integers in [-10, 10), random booleans for i1."""
    import torch

    if not -(2**63) <= seed < 2**64:  # what torch.Generator.manual_seed takes
        raise UsageError(
            Problem(
                f"seed {seed} is out of range: a seed is an integer from -2**63 to 2**64-1",
                hint="e.g. --seed 0",
            )
        )
    gen = torch.Generator().manual_seed(seed)
    tensors = []
    for spec in specs:
        dtype = getattr(torch, DTYPES[spec.dtype])
        try:
            tensors.append(_random_tensor(torch, spec.shape, dtype, gen))
        except RuntimeError as exc:  # a shape too large to allocate
            raise UsageError(
                Problem(
                    f"input spec '{spec}': cannot make a random tensor of that shape: "
                    f"{first_line(exc)}",
                    hint="give shapes the model can run with in this machine's memory",
                )
            ) from None
    return tensors


def _random_tensor(torch: Any, shape: tuple[int, ...], dtype: Any, gen: Any) -> torch.Tensor:
    """Normal floats, integers in [-10, 10), random booleans."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=dtype)
    return torch.randint(-10, 10, shape, generator=gen, dtype=dtype)


def load_model(ref: str) -> torch.nn.Module:
    """The model `path/to/model.py::Name` names: an nn.Module subclass (built with no
    arguments), an nn.Module instance, or a zero-argument function returning one."""
    path_text, name = _split_reference(ref)
    path = _python_file(path_text)
    module = _exec_file(path, path_text)
    import torch

    obj = _defined(module, name, path_text, torch)
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
    return _built(obj, name, path, path_text, torch)


def _split_reference(ref: str) -> tuple[str, str]:
    path_text, sep, name = ref.rpartition("::")
    if not sep or not path_text or not name:
        raise UsageError(
            Problem(
                f"model reference '{ref}' does not name a model",
                Location(path_text or ref),
                "write FILE.py::Name, e.g. models/mlp.py::MLP",
            )
        )
    return path_text, name


def _python_file(path_text: str) -> Path:
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
    return path


def _defined(module: Any, name: str, path_text: str, torch: Any) -> Any:
    """What the model file defines as `name`; a missing name gets close matches."""
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
    return vars(module)[name]


def _built(obj: Any, name: str, path: Path, path_text: str, torch: Any) -> torch.nn.Module:
    """The module a class or factory function builds with no arguments."""
    try:
        made = obj()
    except Exception as exc:
        raise UsageError(
            Problem(
                f"calling '{name}()' raised {type(exc).__name__}: {first_line(exc)}",
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
    mod_name = f"_mlirpipe_model_{uuid.uuid4().hex[:12]}_{stem}"
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
    except SystemExit as exc:  # a script's argparse or sys.exit() at the top level
        del sys.modules[mod_name]
        raise UsageError(
            Problem(
                f"importing the model file called sys.exit({exc.code!r})",
                _frame_in(exc, path, path_text) or Location(path_text),
                "the file must import without running a script: put its script part under "
                '`if __name__ == "__main__":`',
            )
        ) from None
    except Exception as exc:
        del sys.modules[mod_name]
        raise UsageError(
            Problem(
                f"importing the model file raised {type(exc).__name__}: {first_line(exc)}",
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


def run_command(
    model: Any,
    inputs: Sequence[Any],
    pipelines: Sequence[str],
    root: Path | None = None,
    options: dict[str, Any] | None = None,
    commands: CommandContext | None = None,
) -> str | None:
    """The `mlirpipe run FILE.py::Name --inputs SPEC ...` that checks `model` again outside
    pytest, when it can: the model's class is defined at the top of a file and built with no
    arguments, every input is a tensor of a spec's dtype, and `options` (rtol, atol, mode)
    have flags. None otherwise. A file under `root` is named from there (`cd ROOT && ...`);
    `commands` adds the pipeline folders and pass modules the run had."""
    import torch

    options = {k: v for k, v in (options or {}).items() if v is not None}
    flags = {"rtol": "--rtol", "atol": "--atol", "mode": "--mode"}
    if not isinstance(model, torch.nn.Module) or set(options) - set(flags):
        return None
    cls = type(model)
    module = sys.modules.get(cls.__module__)
    if getattr(module, cls.__qualname__, None) is not cls or not _built_without_arguments(cls):
        return None
    try:
        source = Path(inspect.getsourcefile(cls) or "")
    except TypeError:
        return None
    if source.suffix != ".py":
        return None
    dtypes = {name: spec for spec, name in DTYPES.items()}
    specs = []
    for x in inputs:
        name = str(getattr(x, "dtype", "")).removeprefix("torch.")
        if not isinstance(x, torch.Tensor) or x.layout != torch.strided or name not in dtypes:
            return None
        specs.append(str(TensorSpec(tuple(x.shape), dtypes[name])))
    cwd = None
    if root is not None and source.is_relative_to(root):
        source, cwd = source.relative_to(root), root
    words = [f"{source}::{cls.__qualname__}", "--inputs", ",".join(specs)]
    words += ["--pipeline", ",".join(pipelines)]
    for key, value in options.items():
        words += [flags[key], str(value)]
    return (commands or PLAIN).line("mlirpipe", "run", *words, cwd=cwd)


def _built_without_arguments(cls: type) -> bool:
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters
    )
