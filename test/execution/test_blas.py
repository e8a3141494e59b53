"""Code calling CBLAS: the library is loaded for the JIT and linked into the .so, configurable,
with clear errors; the destination-passing -blas entry neither wastes nor leaks buffers."""

from __future__ import annotations

import ctypes
import itertools
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from cases import HAS_OPENBLAS, Addmm, MatmulOnes, rss_kib
from torch import nn

from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.native.blas_library import find_blas_library, set_blas_threads

needs_openblas = pytest.mark.skipif(not HAS_OPENBLAS, reason="scipy-openblas32 is not installed")
needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")

# A stand-in BLAS that counts its calls, so a test can tell which library the compiled code
# called. Each copy's symbols get their own prefix: a library loaded for the JIT stays loaded
# globally, and ELF lookup would bind a later copy's plain `cblas_sgemm` calls to it.
FAKE_BLAS = r"""
long PREFIXcalls = 0;
void PREFIXcblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  ++PREFIXcalls;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int p = 0; p < k; ++p)
        acc += (ta == 112 ? a[p * lda + i] : a[i * lda + p]) *
               (tb == 112 ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * acc + (beta == 0 ? 0 : beta * c[i * ldc + j]);
    }
}
"""


class MatMul(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("MLIRPIPE_BLAS_LIBRARY", raising=False)
    monkeypatch.delenv("MLIRPIPE_BLAS_PREFIX", raising=False)
    return monkeypatch


@pytest.fixture
def fake_blas(tmp_path: Path, clean_env) -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    prefix = f"fake{next(_SERIAL)}_"
    src = tmp_path / "fakeblas.c"
    src.write_text(FAKE_BLAS.replace("PREFIX", prefix))
    lib = tmp_path / "libfakeblas.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src)], check=True)
    clean_env.setenv("MLIRPIPE_BLAS_LIBRARY", str(lib))
    clean_env.setenv("MLIRPIPE_BLAS_PREFIX", prefix)
    return lib


_SERIAL = itertools.count(os.getpid() * 1000)


def _calls(lib: Path) -> int:
    prefix = os.environ["MLIRPIPE_BLAS_PREFIX"]
    return ctypes.c_long.in_dll(ctypes.CDLL(str(lib)), f"{prefix}calls").value


def _operands(m: int = 3, k: int = 4, n: int = 5) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)]


@pytest.mark.parametrize("mode", ["jit", "aot"])
def test_library_from_the_environment_is_the_one_the_code_calls(fake_blas, mode) -> None:
    checker = ModelChecker(cache_dir=None, mode=mode)
    a, b = _operands()
    compiled = checker.compile(MatMul(), a, b, pipeline="refbackend-dps-blas")
    before = _calls(fake_blas)
    np.testing.assert_allclose(compiled(a, b), (a @ b).numpy(), rtol=1e-5, atol=1e-5)
    assert _calls(fake_blas) == before + 1
    if mode == "aot":
        assert compiled.header is not None and compiled.library is not None
        header = compiled.header.read_text()
        assert f"cblas_* in {fake_blas} (linked, rpath {fake_blas.parent}):" in header
        dynamic = subprocess.run(
            ["readelf", "-d", str(compiled.library)], capture_output=True, text=True
        ).stdout
        assert "libfakeblas.so" in dynamic and str(fake_blas.parent) in dynamic


@needs_openblas
def test_linked_library_runs_from_a_c_program(tmp_path: Path, clean_env) -> None:
    """The .so carries the BLAS library and its rpath: a C program links only the model."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    checker = ModelChecker(cache_dir=None, mode="aot")
    x = torch.arange(4.0).reshape(2, 2)
    compiled = checker.compile(MatmulOnes(), x, pipeline="refbackend-blas")
    assert compiled.header is not None and compiled.library is not None
    shutil.copy(compiled.header, tmp_path / "mlirpipe_forward.h")
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "mlirpipe_forward.h"\n'
        "int main(void) {\n  float x[4] = {0, 1, 2, 3}, y[4];\n"
        "  mlirpipe_memref_2d_f32 in = {x, x, 0, {2, 2}, {2, 1}};\n"
        "  mlirpipe_memref_2d_f32 out = {y, y, 0, {2, 2}, {2, 1}};\n"
        "  int status = mlirpipe_forward(&in, &out);\n"
        '  printf("%g %g %g %g\\n", y[0], y[1], y[2], y[3]);\n  return status;\n}\n'
    )
    exe = tmp_path / "main"
    subprocess.run(
        [cc, str(tmp_path / "main.c"), str(compiled.library), f"-I{tmp_path}", "-o", str(exe)],
        check=True,
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "1", "5", "5"]
    assert f"{find_blas_library().path}" in compiled.header.read_text()


def _failure(checker: ModelChecker, pipeline: str = "refbackend-dps-blas") -> str:
    a, b = _operands()
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(MatMul(), a, b, pipelines=[pipeline])
    return info.value.format()


def test_missing_library_is_reported_when_the_code_is_compiled(clean_env, tmp_path) -> None:
    missing = tmp_path / "libopenblas.so.0"
    clean_env.setenv("MLIRPIPE_BLAS_LIBRARY", str(missing))
    text = _failure(ModelChecker(cache_dir=None))
    assert "through pipeline 'refbackend-dps-blas'" in text
    assert f"BLAS library {missing} (from $MLIRPIPE_BLAS_LIBRARY) does not exist" in text
    assert "point MLIRPIPE_BLAS_LIBRARY at an existing file" in text


def test_file_that_is_no_library_is_reported(clean_env, tmp_path) -> None:
    bogus = tmp_path / "libblis.so"
    bogus.write_text("not a library")
    clean_env.setenv("MLIRPIPE_BLAS_LIBRARY", str(bogus))
    text = _failure(ModelChecker(cache_dir=None))
    assert f"BLAS library {bogus} (from $MLIRPIPE_BLAS_LIBRARY) cannot be loaded:" in text
    assert "point MLIRPIPE_BLAS_LIBRARY at a shared library for this machine" in text


def test_library_without_the_called_symbol_is_reported(fake_blas, clean_env) -> None:
    clean_env.setenv("MLIRPIPE_BLAS_PREFIX", "scipy_")
    text = _failure(ModelChecker(cache_dir=None))
    assert (
        f"BLAS library {fake_blas} (from $MLIRPIPE_BLAS_LIBRARY) does not export "
        "scipy_cblas_sgemm, which the lowered code calls" in text
    )
    assert "set MLIRPIPE_BLAS_PREFIX to the prefix of the library's cblas_* symbols" in text


def test_thread_setter_is_found_or_reported_missing(fake_blas) -> None:
    assert set_blas_threads(find_blas_library(), 1) is False  # the stand-in has none
    if HAS_OPENBLAS:
        lib_dir = Path(__import__("scipy_openblas32").get_lib_dir())
        lib = find_blas_library(next(iter(lib_dir.glob("*.so"))), prefix="scipy_")
        assert set_blas_threads(lib, 1) is True


@needs_openblas
def test_blas_entry_point_takes_the_callers_output_and_calls_no_python(clean_env) -> None:
    checker = ModelChecker(cache_dir=None)
    a, b = _operands(8, 8, 8)
    compiled = checker.compile(MatMul(), a, b, pipeline="refbackend-dps-blas")
    assert compiled.abi.value == "destination-passing"
    fn = compiled.function
    call = fn.bind(a, b)
    out = fn.outputs()[0]
    out.fill(np.nan)  # the gemm alone must write every element (beta = 0, no fill)
    call()
    assert fn.outputs()[0] is out
    np.testing.assert_allclose(out, (a @ b).numpy(), rtol=1e-5, atol=1e-5)


def _growth_kib(call, calls: int = 1000) -> int:
    for _ in range(200):  # let malloc settle
        call()
    # Free memory that tests before this one left resident (a 30 MB image freed into the heap
    # by a convolution's test) would take a leak's allocations without growing the RSS: give
    # its pages back first, so that a leak's allocations fault pages in again.
    ctypes.CDLL(None).malloc_trim(0)
    before = rss_kib()
    for _ in range(calls):
        call()
    return rss_kib() - before


@needs_openblas
@pytest.mark.parametrize("pipeline", ["refbackend-dps-blas", "refbackend-blas"])
def test_blas_entry_point_does_not_grow_memory_over_1000_calls(clean_env, pipeline) -> None:
    gen = torch.Generator().manual_seed(0)
    bias, a, b = (torch.randn(64, 64, generator=gen) for _ in range(3))
    compiled = ModelChecker(cache_dir=None).compile(Addmm(), bias, a, b, pipeline=pipeline)
    call = compiled.function.bind(bias, a, b)
    assert _growth_kib(call) < 2048  # 1000 leaked 16 KiB results would be 16 MiB
    np.testing.assert_allclose(
        compiled.function.outputs()[0], torch.addmm(bias, a, b).numpy(), rtol=1e-4, atol=1e-4
    )


@needs_openblas
def test_memory_check_catches_a_leaking_entry_point(clean_env) -> None:
    """The same measurement on RefBackend's raw entry, whose result buffers nobody frees."""
    gen = torch.Generator().manual_seed(0)
    bias, a, b = (torch.randn(64, 64, generator=gen) for _ in range(3))
    compiled = ModelChecker(cache_dir=None).compile(Addmm(), bias, a, b, pipeline="refbackend-blas")
    fn = compiled.function
    fn.bind(bias, a, b)

    def leaking() -> None:
        fn._entry(fn._packed_address)  # the call without the copy-out-and-free

    assert _growth_kib(leaking) > 8192
