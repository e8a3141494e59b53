"""Keys of imported models (code, parameters, inputs, import options) and their cache entries."""

from __future__ import annotations

import functools
import hashlib
import marshal
import pickle
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .cache import ArtifactCache, cache_key, file_digest

IMPORTED_FILE = "imported.pickle"  # the ImportedModel in the artifact cache
_MAX_DEPTH = 8
# nn.Module attributes covered otherwise (parameters and buffers by value, submodules each).
_MODULE_STATE = frozenset({"_parameters", "_buffers", "_modules"})


class Unkeyable(Exception):
    """Something that decides the import has no stable fingerprint: do not cache it."""


def torch_model_digest(model: Any, inputs: Sequence[Any]) -> str | None:
    """A digest of what `model` imported with `inputs` depends on, or None when some part of
    the model has no stable fingerprint (an object printed with its address, a tensor off the
    CPU...). Hashing reads every parameter once: cheap next to an export."""
    h = hashlib.sha256()
    try:
        for part in _torch_model_parts(model, inputs):
            h.update(len(part).to_bytes(8, "little") + part)
    except (Unkeyable, TypeError, ValueError, RuntimeError, AttributeError):
        return None  # imported afresh each time, as without a cache
    return h.hexdigest()


def torch_import_key(model_digest: str, extra: Sequence[str]) -> str:
    """The cache key of a torch model's import: its digest, torch's version, `extra`."""
    import torch

    return cache_key(["import", "torch " + torch.__version__, *extra, model_digest])


def options_fingerprint(frontend: Any, own: frozenset[str]) -> str:
    """The import options a front end holds (every attribute but `own`), as one digest."""
    options = {k: v for k, v in vars(frontend).items() if k not in own}
    return "options " + hashlib.sha256(Fingerprint({}).of(options)).hexdigest()


def _torch_model_parts(model: Any, inputs: Sequence[Any]) -> Iterator[bytes]:
    """What the exported program depends on: every submodule's class code and plain state,
    every parameter and buffer, every input (values too: export may specialize on them)."""
    import torch

    if not isinstance(model, torch.nn.Module):
        yield b"callable " + Fingerprint({}).of(model)
        return
    named = dict(model.named_modules(remove_duplicate=False))
    fp = Fingerprint({id(m): name for name, m in named.items()})
    for name, sub in named.items():
        yield f"module {name}".encode() + _class_code(type(sub))
        if isinstance(sub, torch.fx.GraphModule):
            yield sub.code.encode()
        for key in sorted(vars(sub)):
            if key not in _MODULE_STATE:
                yield f"attr {key}".encode() + fp.of(vars(sub)[key])
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        yield f"tensor {name}".encode() + fp.of(t)
    for i, x in enumerate(inputs):
        yield f"input {i}".encode() + fp.of(x)


def _class_code(cls: type) -> bytes:
    """The source files of the classes a module is made of (torch's own: torch's version)."""
    out = []
    for c in cls.__mro__:
        mod = c.__module__ or ""
        if mod.split(".")[0] in ("torch", "builtins"):
            continue
        source = getattr(sys.modules.get(mod), "__file__", None)
        if not source:
            raise Unkeyable(f"class {c.__qualname__} has no source file")
        out.append(f"{mod}.{c.__qualname__} {file_digest(Path(source))}")
    return " ".join(out).encode()


class Fingerprint:
    """Stable bytes for values; raises Unkeyable when a value has none. The model's own
    modules (`modules`: id -> dotted name) appear by name: their state is keyed apart."""

    def __init__(self, modules: dict[int, str]):
        self.modules = modules

    def of(self, value: Any, depth: int = 0) -> bytes:
        if depth > _MAX_DEPTH:
            raise Unkeyable("too deeply nested")
        if value is None or isinstance(value, bool | int | float | complex | str | bytes):
            return f"{type(value).__name__}:{value!r}".encode()
        if id(value) in self.modules:
            return f"own module {self.modules[id(value)]}".encode()
        if isinstance(value, list | tuple | set | frozenset | dict):
            return self._collection(value, depth)
        if isinstance(value, functools.partial):
            return b"partial" + self.of((value.func, value.args, value.keywords), depth + 1)
        if hasattr(value, "__code__"):
            return self._function(value, depth)
        if isinstance(value, types.BuiltinFunctionType | types.BuiltinMethodType):
            owner = value.__self__
            owner_name = owner.__name__ if isinstance(owner, type | types.ModuleType) else "?"
            return f"builtin {value.__module__} {owner_name}.{value.__qualname__}".encode()
        array = _tensor_bytes(value)
        if array is not None:
            return array
        return self._other(value, depth)

    def _collection(self, value: Any, depth: int) -> bytes:
        if isinstance(value, dict):
            items = [self.of(k, depth + 1) + b"=" + self.of(v, depth + 1) for k, v in value.items()]
        else:
            items = [self.of(v, depth + 1) for v in value]
        if isinstance(value, set | frozenset | dict):
            items.sort()
        return type(value).__name__.encode() + _joined(items)

    def _function(self, fn: Any, depth: int) -> bytes:
        """A function: its code object, its file, defaults and the values it closes over."""
        code = fn.__code__
        source = Path(code.co_filename)
        cells = [c.cell_contents for c in (fn.__closure__ or ())]
        return b"function" + _joined(
            [
                f"{getattr(fn, '__module__', '')}.{fn.__qualname__}".encode(),
                hashlib.sha256(marshal.dumps(code)).digest(),
                file_digest(source).encode() if source.is_file() else b"no file",
                self.of(fn.__defaults__, depth + 1),
                self.of(fn.__kwdefaults__, depth + 1),
                self.of(cells, depth + 1),
                self.of(getattr(fn, "__self__", None), depth + 1),
            ]
        )

    def _other(self, value: Any, depth: int) -> bytes:
        """Another object: torch's and numpy's by their repr, others by class and state."""
        cls = type(value)
        name = f"{cls.__module__}.{cls.__qualname__}".encode()
        state = getattr(value, "__dict__", None)
        own = (cls.__module__ or "").split(".")[0] not in ("torch", "numpy", "builtins")
        if own and state is not None and not isinstance(value, type):
            if sys.modules["torch"].nn.Module in cls.__mro__:
                raise Unkeyable("a module that is not part of the model")
            return name + self.of(state, depth + 1)
        text = repr(value)
        if " at 0x" in text or " object at " in text:
            raise Unkeyable(f"{text} has no stable fingerprint")
        return name + text.encode()


def _joined(items: list[bytes]) -> bytes:
    return b"[" + b"".join(len(i).to_bytes(8, "little") + i for i in items) + b"]"


def _tensor_bytes(value: Any) -> bytes | None:
    """A torch tensor or numpy array: dtype, shape, strides and a digest of its values."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu" or value.layout != torch.strided or value.is_quantized:
            raise Unkeyable(f"a {value.device.type} {value.layout} tensor")
        flat = value.detach().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy() if flat.numel() else b""
        head = f"tensor {value.dtype} {tuple(value.shape)} {value.stride()} {value.requires_grad}"
        return head.encode() + hashlib.sha256(data).digest()
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray | np.generic):
        arr = np.ascontiguousarray(value)
        head = f"array {arr.dtype.str} {arr.shape} {getattr(value, 'strides', ())}"
        return head.encode() + hashlib.sha256(arr.view(np.uint8).reshape(-1)).digest()
    return None


def load_imported(cache: ArtifactCache, key: str) -> Any | None:
    """The ImportedModel stored under `key`, if any.

    Pickle is as trusted here as the cached .so files the cache also loads: the cache folder
    is the user's own, and the key covers this project's code, so the classes match.
    """
    path = cache.path(key, IMPORTED_FILE)
    if path is None:
        return None
    try:
        return pickle.loads(path.read_bytes())
    except Exception:  # a damaged entry costs a fresh import, nothing else
        return None


def store_imported(cache: ArtifactCache, key: str, imported: Any) -> None:
    cache.write_bytes(key, IMPORTED_FILE, pickle.dumps(imported, protocol=pickle.HIGHEST_PROTOCOL))
