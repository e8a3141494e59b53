"""refbackend-vectorized's blocks on OpenMP threads: libomp when found, else one core."""

from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

from pytest_mlirpipe.errors import MlirpipeError
from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.native import openmp, runtime
from pytest_mlirpipe.execution.results.timing import TimingConfig, measure

PIPELINE = "refbackend-vectorized"
# Three row blocks of 64 (the last one partial) and two column blocks of 256 (one partial).
MATMUL = """\
func.func @forward(%a: tensor<150x40xf32>, %b: tensor<40x300xf32>) -> tensor<150x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<150x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<150x300xf32>) -> tensor<150x300xf32>
  %r = linalg.matmul ins(%a, %b : tensor<150x40xf32>, tensor<40x300xf32>)
                     outs(%f : tensor<150x300xf32>) -> tensor<150x300xf32>
  return %r : tensor<150x300xf32>
}
"""
RNG = np.random.default_rng(0)
A = RNG.standard_normal((150, 40), dtype=np.float32)
B = RNG.standard_normal((40, 300), dtype=np.float32)

needs_libomp = pytest.mark.skipif(
    openmp.openmp_runtime().path is None, reason=openmp.openmp_runtime().note
)


def _run(mode: str, tmp_path) -> tuple[np.ndarray, object]:
    checker = ModelChecker(cache_dir=None, mode=mode, work_dir=tmp_path)
    compiled = checker.compile(MATMUL, A, B, pipeline=PIPELINE)
    return compiled(A, B), compiled.function


@needs_libomp
@pytest.mark.parametrize("threads", [1, 2])
def test_blocks_run_on_libomp_threads_and_match_numpy(threads, tmp_path, monkeypatch):
    monkeypatch.delenv(openmp.OPENMP_ENV, raising=False)
    assert openmp.set_openmp_threads(threads)
    try:
        got, fn = _run("jit", tmp_path)
    finally:  # back to libomp's default for the tests after this one
        openmp.set_openmp_threads(_default_threads())

    np.testing.assert_allclose(got, A @ B, rtol=1e-4, atol=1e-4)
    assert fn.openmp.path is not None
    assert fn.openmp.note == f"OpenMP runtime {fn.openmp.path}"


@pytest.mark.parametrize("mode", ["jit", "aot"])
def test_without_libomp_the_blocks_run_on_one_core(mode, tmp_path, monkeypatch):
    monkeypatch.setenv(openmp.OPENMP_ENV, "none")

    got, fn = _run(mode, tmp_path)

    np.testing.assert_allclose(got, A @ B, rtol=1e-4, atol=1e-4)
    assert openmp.openmp_runtime().note == (
        f"parallel loops run on one core (${openmp.OPENMP_ENV}=none)"
    )
    assert not openmp.set_openmp_threads(2)
    if mode == "jit":
        assert fn.openmp.path is None


def test_an_openmp_library_that_cannot_be_loaded_is_named_with_the_reason(tmp_path, monkeypatch):
    missing = tmp_path / "libomp.so"
    monkeypatch.setenv(openmp.OPENMP_ENV, str(missing))

    rt = openmp.openmp_runtime()

    assert rt.path is None
    assert rt.note.startswith(
        f"parallel loops run on one core: ${openmp.OPENMP_ENV}={missing} cannot be loaded ("
    )
    assert rt.note.endswith("; give a libomp.so that defines __kmpc_fork_call")


def test_a_library_without_kmpc_entry_points_is_refused(monkeypatch):
    libm = "libm.so.6"
    monkeypatch.setenv(openmp.OPENMP_ENV, libm)

    rt = openmp.openmp_runtime()

    assert rt.path is None
    assert rt.note == (
        f"parallel loops run on one core: ${openmp.OPENMP_ENV}={libm} lacks "
        + ", ".join(openmp.OPENMP_SYMBOLS)
        + " (GNU libgomp has no __kmpc_* entry points); give a libomp.so that defines "
        "__kmpc_fork_call"
    )


def test_no_libomp_and_no_c_compiler_is_an_error_that_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv(openmp.OPENMP_ENV, "none")
    monkeypatch.setattr(runtime, "runtime_library", lambda: None)
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)

    with pytest.raises(MlirpipeError) as err:
        checker.compile(MATMUL, A, B, pipeline=PIPELINE)

    text = str(err.value)
    assert "@forward runs parallel loops (OpenMP) and no OpenMP runtime can be loaded" in text
    assert "the one-core stand-in needs a C compiler (cc), none was found" in text
    assert "apt-get install libomp-22-dev" in text


@needs_libomp
def test_timing_gives_openmp_the_thread_count_it_gives_torch(monkeypatch):
    monkeypatch.delenv(openmp.OPENMP_ENV, raising=False)
    omp = ctypes.CDLL(str(openmp.openmp_runtime().path))
    try:
        for threads in (1, 2):
            config = TimingConfig(warmup=0, blocks=1, block_seconds=0.0, threads=threads)
            measure({"nothing": lambda: None}, config)
            assert omp.omp_get_max_threads() == threads
    finally:
        openmp.set_openmp_threads(_default_threads())


def _default_threads() -> int:
    """libomp's own thread count: $OMP_NUM_THREADS (its first level), else one per core."""
    return int(os.environ.get("OMP_NUM_THREADS", "").split(",")[0] or os.cpu_count() or 1)
