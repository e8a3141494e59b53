"""Locate the BLAS library that `mlirpipe-matmul-to-blas` calls into, and its symbol prefix."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import Problem
from ...lowering.passes.blas.symbols import (
    LIBRARY_ENV,
    PREFIX_ENV,
    SCIPY_PREFIX,
    BlasLibraryError,
    package_prefix,
    symbol_prefix,
)

# The symbol prefix is the BLAS pass's own default (lowering.passes.blas.symbols); its names
# stay importable from here.
__all__ = [
    "LIBRARY_ENV",
    "PREFIX_ENV",
    "SCIPY_PREFIX",
    "BlasLibrary",
    "BlasLibraryError",
    "called_blas_symbols",
    "find_blas_library",
    "library_for",
    "package_prefix",
    "set_blas_threads",
    "symbol_prefix",
]


@dataclass(frozen=True, slots=True)
class BlasLibrary:
    """A BLAS shared library with the CBLAS interface, and the prefix of its symbols."""

    path: Path
    prefix: str
    source: (
        str  # where the path came from: "argument", "$MLIRPIPE_BLAS_LIBRARY", "scipy-openblas32"
    )

    def symbol(self, name: str) -> str:
        """`cblas_sgemm` -> the symbol the library exports, e.g. `scipy_cblas_sgemm`."""
        return f"{self.prefix}{name}"


def find_blas_library(
    library: str | os.PathLike | None = None, prefix: str | None = None
) -> BlasLibrary:
    """The BLAS library to load or link: `library`, else $MLIRPIPE_BLAS_LIBRARY, else the
    `libscipy_openblas` of the scipy-openblas32 package. Raises BlasLibraryError saying what is
    missing and how to fix it."""
    if library is not None:
        return _existing(Path(library), "argument", prefix, "pass an existing file")
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return _existing(
            Path(env), f"${LIBRARY_ENV}", prefix, f"point {LIBRARY_ENV} at an existing file"
        )
    try:
        import scipy_openblas32
    except ImportError:
        raise BlasLibraryError(
            Problem(
                "no BLAS library: the scipy-openblas32 package is not installed and "
                f"{LIBRARY_ENV} is not set",
                hint="pip install scipy-openblas32 (or pip install 'pytest-mlirpipe[blas]'), or "
                f"set {LIBRARY_ENV}=/path/to/libopenblas.so (and {PREFIX_ENV} if its symbols "
                "carry a prefix)",
            )
        ) from None
    lib_dir = Path(scipy_openblas32.get_lib_dir())
    found = sorted(lib_dir.glob("libscipy_openblas*.so*")) if lib_dir.is_dir() else []
    if not found:
        raise BlasLibraryError(
            Problem(
                f"scipy-openblas32 is installed but has no libscipy_openblas*.so in {lib_dir}",
                hint="reinstall it: pip install --force-reinstall scipy-openblas32, "
                f"or set {LIBRARY_ENV} to another BLAS library",
            )
        )
    return BlasLibrary(found[0], symbol_prefix(prefix, found[0]), "scipy-openblas32")


def _existing(path: Path, source: str, prefix: str | None, fix: str) -> BlasLibrary:
    if not path.is_file():
        what = "does not exist" if not path.exists() else "is not a file"
        raise BlasLibraryError(
            Problem(
                f"BLAS library {path} (from {source}) {what}",
                hint=f"{fix}: a shared library with the CBLAS interface "
                "(libopenblas.so, libblis.so, libmkl_rt.so, ...)",
            )
        )
    return BlasLibrary(path.resolve(), symbol_prefix(prefix, path), source)


# An external CBLAS declaration in LLVM-dialect text, e.g. `llvm.func @scipy_cblas_sgemm(i32, ...)`
# (a declaration has no body: no `{` after its signature).
_CBLAS_DECL = re.compile(r"^\s*llvm\.func\s+(?:private\s+)?@([\w$.]*cblas_\w+)\(([^\n{]*)$", re.M)


def called_blas_symbols(llvm_ir: str) -> list[str]:
    """The CBLAS functions an LLVM-dialect module declares and so calls, in order."""
    return [m.group(1) for m in _CBLAS_DECL.finditer(llvm_ir)]


def library_for(llvm_ir: str) -> BlasLibrary | None:
    """The BLAS library the lowered module needs loaded or linked (None if it calls no CBLAS).

    Raises BlasLibraryError when there is none, or when it lacks a symbol the code calls (the
    code was lowered with another symbol prefix than the library's).
    """
    symbols = called_blas_symbols(llvm_ir)
    if not symbols:
        return None
    lib = find_blas_library()
    import ctypes

    try:
        handle = ctypes.CDLL(str(lib.path))
    except OSError as exc:
        raise BlasLibraryError(
            Problem(
                f"BLAS library {lib.path} (from {lib.source}) cannot be loaded: {exc}",
                hint=f"point {LIBRARY_ENV} at a shared library for this machine",
            )
        ) from None
    missing = [s for s in symbols if not hasattr(handle, s)]
    if missing:
        raise BlasLibraryError(
            Problem(
                f"BLAS library {lib.path} (from {lib.source}) does not export "
                f"{', '.join(missing)}, which the lowered code calls",
                hint=f"set {PREFIX_ENV} to the prefix of the library's cblas_* symbols ('' for "
                f"none) and compile again, or point {LIBRARY_ENV} at a library that exports them",
            )
        )
    return lib


# Thread-count setters of the common CBLAS libraries, without their symbol prefix.
_THREAD_SETTERS = ("openblas_set_num_threads", "bli_thread_set_num_threads", "MKL_Set_Num_Threads")


def set_blas_threads(lib: BlasLibrary, threads: int) -> bool:
    """Give the BLAS library `threads` threads (OpenBLAS, BLIS or MKL); False if it has no
    setter this knows. Timing compares torch and BLAS code at the same thread count."""
    import ctypes

    handle = ctypes.CDLL(str(lib.path))
    for name in _THREAD_SETTERS:
        for symbol in (lib.symbol(name), name):
            setter = getattr(handle, symbol, None)
            if setter is not None:
                setter.argtypes = [ctypes.c_int64 if name.startswith("bli_") else ctypes.c_int]
                setter.restype = None
                setter(threads)
                return True
    return False
