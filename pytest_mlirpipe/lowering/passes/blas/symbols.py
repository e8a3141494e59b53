"""The prefix of the CBLAS symbols the BLAS pass calls: the one default every caller shares."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from ....errors import MlirpipeError, Problem

LIBRARY_ENV = "MLIRPIPE_BLAS_LIBRARY"
PREFIX_ENV = "MLIRPIPE_BLAS_PREFIX"
# What scipy-openblas32 prefixes its C symbols with (`scipy_cblas_sgemm`); it reports it in the
# Cflags of its pkg-config text, which `package_prefix()` reads.
SCIPY_PREFIX = "scipy_"
_PREFIX_FLAG = re.compile(r"-DBLAS_SYMBOL_PREFIX=(\S*)")
_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^$")


class BlasLibraryError(MlirpipeError):
    """The BLAS library cannot be found or its configuration is wrong."""


def package_prefix() -> str:
    """The symbol prefix scipy-openblas32 reports (its `-DBLAS_SYMBOL_PREFIX=` flag)."""
    try:
        import scipy_openblas32
    except ImportError:
        return SCIPY_PREFIX
    try:
        text = scipy_openblas32.get_pkg_config()
    except (OSError, KeyError):  # a broken install: its .pc file is missing or incomplete
        return SCIPY_PREFIX
    m = _PREFIX_FLAG.search(text)
    return m.group(1) if m else SCIPY_PREFIX


def symbol_prefix(prefix: str | None = None, library: str | os.PathLike | None = None) -> str:
    """The prefix of CBLAS symbols: `prefix`, else $MLIRPIPE_BLAS_PREFIX, else the package's.

    A library given without a prefix (argument or $MLIRPIPE_BLAS_LIBRARY) is taken to export plain
    `cblas_*` names unless it is a scipy-openblas build, as a system OpenBLAS, BLIS or MKL does.
    """
    if prefix is None:
        prefix = os.environ.get(PREFIX_ENV)
    if prefix is None:
        chosen = library if library is not None else os.environ.get(LIBRARY_ENV)
        plain = chosen and "scipy_openblas" not in Path(chosen).name
        prefix = "" if plain else package_prefix()
    if not _SYMBOL.match(prefix):
        raise BlasLibraryError(
            Problem(
                f"BLAS symbol prefix {prefix!r} is not a C identifier prefix",
                hint=f"set {PREFIX_ENV} to letters, digits and '_' (e.g. 'scipy_'), "
                "or to '' for plain cblas_* names",
            )
        )
    return prefix


class PrefixDefault(Mapping[str, str]):
    """The BLAS pass's option defaults, {"prefix": symbol_prefix()}: the value is computed on
    each lookup, so the environment of the run that builds the pass decides it."""

    def __getitem__(self, key: str) -> str:
        if key != "prefix":
            raise KeyError(key)
        return symbol_prefix()

    def __iter__(self) -> Iterator[str]:
        return iter(("prefix",))

    def __len__(self) -> int:
        return 1
