"""Access to the MLIR Python bindings bundled with torch-mlir: contexts, parsing, diagnostics."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .errors import IRParseError, MlirpipeError, Problem, missing_extra
from .model import Diagnostic, Location

try:
    # Importing the torch dialect loads torch-mlir's extension, which registers its passes
    # (torch-*, refback-*, tm-tensor-*) next to the upstream ones.
    from torch_mlir import ir, passmanager
    from torch_mlir.dialects import torch as torch_dialect
except ImportError as exc:  # the core install: file tests of lit suites only
    raise (missing_extra(exc) or exc) from exc

__all__ = ["ir", "passmanager"]

_LOC_RE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


# torch-mlir's bindings register only the torch dialect directly. Running these passes once on
# an empty module loads the dialects they produce: torch_c, tm_tensor, stablehlo and chlo (a
# build without the stablehlo backend has only the first pass).
_LOADERS = ("convert-torch-to-tmtensor", "convert-torch-to-stablehlo")


def new_context() -> ir.Context:
    """A fresh context that parses every dialect torch-mlir can emit (torch, torch_c,
    tm_tensor, stablehlo, chlo) next to the upstream ones; every pass is available.

    In a forked child, a context its parent made ahead (make_contexts_ahead) and never
    used, if one is left: as fresh, without the cost of making one."""
    pid = os.getpid()
    for i, (owner, ctx) in enumerate(_AHEAD):
        if owner != pid:
            del _AHEAD[i]
            ctx.enable_multithreading(True)  # a thread pool of the child's own
            return ctx
    return _made_context()


# Contexts made by a process (its pid) for its forked children, which inherit them unused.
_AHEAD: list[tuple[int, ir.Context]] = []


def make_contexts_ahead(count: int) -> None:
    """Have `count` fresh contexts ready for forked children of this process (this process
    never uses them): in a child, making a context costs about twice what it costs here, every
    page it writes being first copied from the parent's."""
    pid = os.getpid()
    for _ in range(count - sum(owner == pid for owner, _ in _AHEAD)):
        ctx = _made_context()
        # No thread pool crosses the fork: a pool's threads would not exist in the child.
        ctx.enable_multithreading(False)
        _AHEAD.append((pid, ctx))


def _made_context() -> ir.Context:
    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    with ctx:
        empty = ir.Module.parse("module {}")
        _dialect_loader().run(empty.operation)
    return ctx


def _dialect_loader() -> passmanager.PassManager:
    """A pass manager (in the current context) whose passes load torch-mlir's dialects."""
    loaders = [p for p in _LOADERS if is_registered_pass(f"func.func({p})")]
    return passmanager.PassManager.parse(f"builtin.module(func.func({','.join(loaders)}))")


def location_of(loc: object, source_name: str | None = None) -> Location | None:
    """The first file:line:col in an MLIR location; '-' (parsed from a string) -> source_name."""
    m = _LOC_RE.search(str(loc))
    if not m:
        return None
    path = m.group(1)
    if path in ("-", "") and source_name:
        path = source_name
    return Location(path, int(m.group(2)), int(m.group(3)))


def to_diagnostic(info: Any, source_name: str | None = None) -> Diagnostic:
    """Convert a binding DiagnosticInfo/Diagnostic into our located Diagnostic."""
    severity = str(info.severity).rsplit(".", 1)[-1].lower()
    notes = tuple(to_diagnostic(n, source_name) for n in getattr(info, "notes", ()))
    return Diagnostic(
        severity, str(info.message).strip(), location_of(info.location, source_name), notes
    )


def diagnostics_of(error: ir.MLIRError, source_name: str | None = None) -> list[Diagnostic]:
    diags = [to_diagnostic(d, source_name) for d in error.error_diagnostics]
    if not diags:
        diags = [Diagnostic("error", str(error.message), None)]
    return diags


def parse_module(text: str, source_name: str, context: ir.Context) -> ir.Module:
    """Parse MLIR text; errors become IRParseError located in `source_name`."""
    if not text.strip():
        raise MlirpipeError(
            Problem(
                "the input is empty: there is no MLIR to run",
                Location(source_name),
                "give a file with at least one operation, e.g. a func.func",
            )
        )
    with context:
        try:
            return ir.Module.parse(text)
        except ir.MLIRError as exc:
            raise IRParseError(source_name, diagnostics_of(exc, source_name)) from None


def print_ir(op: object, large_elements_limit: int | None = None) -> str:
    """The IR of `op` as text; assumes it was verified."""
    return op.get_asm(  # type: ignore[attr-defined]
        large_elements_limit=large_elements_limit, assume_verified=True
    )


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pytest-mlirpipe"


@functools.cache
def is_registered_pass(name: str) -> bool:
    """Whether `name` is a pass or pass pipeline the bindings know (upstream or torch-mlir)."""
    try:
        passmanager.PassManager.parse(f"builtin.module({name})", context=_probe_context())
    except ValueError as exc:
        return "does not refer to a registered pass" not in str(exc)
    return True


@functools.lru_cache(maxsize=1)
def _probe_context() -> ir.Context:
    """A context for parsing pass pipelines (passes are registered globally, not per context)."""
    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    return ctx


@functools.lru_cache(maxsize=1)
def registered_pass_names() -> tuple[str, ...]:
    """All pass names the bindings know, for listing and "did you mean" hints.

    MLIR has no API to list registered passes, so candidate names are read from the bindings'
    shared libraries and each is confirmed with the pass-pipeline parser. The result is cached
    per torch-mlir build (a few seconds the first time).
    """
    import torch_mlir

    lib_dir = Path(next(iter(torch_mlir.__path__))) / "_mlir_libs"
    libs = sorted(lib_dir.glob("*.so"))
    key = "-".join(f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}" for p in libs)
    import hashlib

    cache = _cache_dir() / f"passes-{hashlib.sha256(key.encode()).hexdigest()[:16]}.txt"
    try:
        return tuple(cache.read_text().split())
    except OSError:
        pass
    token = re.compile(rb"[a-z][a-z0-9\-]{1,80}")
    candidates: set[str] = set()
    for lib in libs:
        for m in token.finditer(lib.read_bytes()):
            parts = m.group(0).decode().strip("-").split("-")
            candidates.update("-".join(parts[i:]) for i in range(len(parts)))
    names = tuple(sorted(c for c in candidates if c and is_registered_pass(c)))
    is_registered_pass.cache_clear()
    _write_cache(cache, "\n".join(names) + "\n")  # a read-only home only costs the cache
    return names


def _write_cache(path: Path, text: str) -> str | None:
    """Write a cache file; None, or why it cannot be written (for a caller that wants to say)."""
    try:
        write_atomic(path, text, make_parents=True)
    except OSError as exc:
        return f"cannot write cache {path}: {exc}"
    return None
