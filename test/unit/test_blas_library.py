"""Where the BLAS library and its symbol prefix come from, and what is said when it is missing."""

from __future__ import annotations

import sys

import pytest

from pytest_mlirpipe.execution.native import blas_library
from pytest_mlirpipe.execution.native.blas_library import (
    BlasLibraryError,
    find_blas_library,
    symbol_prefix,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("MLIRPIPE_BLAS_LIBRARY", raising=False)
    monkeypatch.delenv("MLIRPIPE_BLAS_PREFIX", raising=False)


def test_default_is_scipy_openblas_with_the_prefix_the_package_reports():
    pytest.importorskip("scipy_openblas32")
    lib = find_blas_library()
    assert lib.path.name.startswith("libscipy_openblas") and lib.path.is_file()
    assert (lib.prefix, lib.source) == ("scipy_", "scipy-openblas32")
    assert lib.symbol("cblas_sgemm") == "scipy_cblas_sgemm"


def test_environment_names_another_library_with_plain_symbols(monkeypatch, tmp_path):
    lib_file = tmp_path / "libopenblas.so.0"
    lib_file.write_bytes(b"")
    monkeypatch.setenv("MLIRPIPE_BLAS_LIBRARY", str(lib_file))
    lib = find_blas_library()
    assert (lib.path, lib.prefix, lib.source) == (lib_file, "", "$MLIRPIPE_BLAS_LIBRARY")


def test_argument_beats_environment_and_prefix_can_be_given(monkeypatch, tmp_path):
    monkeypatch.setenv("MLIRPIPE_BLAS_LIBRARY", str(tmp_path / "nope.so"))
    lib_file = tmp_path / "libmkl_rt.so"
    lib_file.write_bytes(b"")
    lib = find_blas_library(lib_file, prefix="")
    assert (lib.path, lib.prefix, lib.source) == (lib_file, "", "argument")
    monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "mkl_")
    assert find_blas_library(lib_file).prefix == "mkl_"


def test_missing_library_from_the_environment_says_where_and_what_to_do(monkeypatch, tmp_path):
    missing = tmp_path / "libblis.so"
    monkeypatch.setenv("MLIRPIPE_BLAS_LIBRARY", str(missing))
    with pytest.raises(BlasLibraryError) as info:
        find_blas_library()
    assert str(info.value) == (
        f"error: BLAS library {missing} (from $MLIRPIPE_BLAS_LIBRARY) does not exist\n"
        "  hint: point MLIRPIPE_BLAS_LIBRARY at an existing file: a shared library with the "
        "CBLAS interface (libopenblas.so, libblis.so, libmkl_rt.so, ...)"
    )


def test_a_directory_given_as_library_is_not_a_file(tmp_path):
    with pytest.raises(BlasLibraryError) as info:
        find_blas_library(tmp_path)
    assert str(info.value).startswith(
        f"error: BLAS library {tmp_path} (from argument) is not a file\n"
        "  hint: pass an existing file: a shared library"
    )


def test_without_the_package_or_the_variable_the_install_command_is_given(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy_openblas32", None)
    with pytest.raises(BlasLibraryError) as info:
        find_blas_library()
    assert str(info.value) == (
        "error: no BLAS library: the scipy-openblas32 package is not installed and "
        "MLIRPIPE_BLAS_LIBRARY is not set\n"
        "  hint: pip install scipy-openblas32 (or pip install 'pytest-mlirpipe[blas]'), or set "
        "MLIRPIPE_BLAS_LIBRARY=/path/to/libopenblas.so (and MLIRPIPE_BLAS_PREFIX if its symbols "
        "carry a prefix)"
    )


def test_a_package_without_its_library_is_reported(monkeypatch, tmp_path):
    sob = pytest.importorskip("scipy_openblas32")
    monkeypatch.setattr(sob, "get_lib_dir", lambda: str(tmp_path))
    with pytest.raises(BlasLibraryError) as info:
        find_blas_library()
    assert str(info.value) == (
        f"error: scipy-openblas32 is installed but has no libscipy_openblas*.so in {tmp_path}\n"
        "  hint: reinstall it: pip install --force-reinstall scipy-openblas32, or set "
        "MLIRPIPE_BLAS_LIBRARY to another BLAS library"
    )


def test_a_prefix_that_is_no_c_identifier_is_refused(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "my-blas")
    with pytest.raises(BlasLibraryError) as info:
        symbol_prefix()
    assert str(info.value) == (
        "error: BLAS symbol prefix 'my-blas' is not a C identifier prefix\n"
        "  hint: set MLIRPIPE_BLAS_PREFIX to letters, digits and '_' (e.g. 'scipy_'), or to '' "
        "for plain cblas_* names"
    )


def test_package_prefix_falls_back_when_the_package_cannot_say(monkeypatch):
    sob = pytest.importorskip("scipy_openblas32")
    monkeypatch.setattr(sob, "get_pkg_config", lambda: "Cflags: -I/x\n")
    assert blas_library.package_prefix() == "scipy_"
    monkeypatch.setattr(sob, "get_pkg_config", lambda: "Cflags: -DBLAS_SYMBOL_PREFIX=other_\n")
    assert blas_library.package_prefix() == "other_"
