"""refbackend-vectorized's buffers come from the runtime's pool of freed blocks."""

from __future__ import annotations

import ctypes
import resource
import subprocess
import sys

import numpy as np
import pytest

from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.native import buffer_pool, openmp, runtime

PIPELINE = "refbackend-vectorized"
N = 1024  # A and B packed: 4 MB buffers, 1024 pages each
MATMUL = f"""\
func.func @forward(%a: tensor<{N}x{N}xf32>, %b: tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{N}x{N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{N}x{N}xf32>, tensor<{N}x{N}xf32>)
                     outs(%f : tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32>
  return %r : tensor<{N}x{N}xf32>
}}
"""
RNG = np.random.default_rng(0)
A = RNG.standard_normal((N, N), dtype=np.float32)
B = RNG.standard_normal((N, N), dtype=np.float32)


def _pool() -> tuple:
    lib = runtime.runtime_library()
    if lib is None:
        pytest.skip("no C compiler: the runtime (and its pool) cannot be built")
    alloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint64)(
        runtime.symbol_address(lib, buffer_pool.POOL_SYMBOLS[0])
    )
    free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        runtime.symbol_address(lib, buffer_pool.POOL_SYMBOLS[1])
    )
    return alloc, free


@pytest.mark.parametrize("mode", ["jit", "aot"])
def test_calls_after_the_first_touch_no_fresh_pages(mode, tmp_path):
    checker = ModelChecker(cache_dir=None, mode=mode, work_dir=tmp_path)
    fn = checker.compile(MATMUL, A, B, pipeline=PIPELINE).function
    call = fn.bind(A, B)
    call()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        call()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    # Without the pool each call faulted the packed copies in again (~3,600 pages a call: glibc
    # gives a freed block of MBs back to the system).
    assert faults < 100
    np.testing.assert_allclose(fn.outputs()[0], A @ B, rtol=1e-3, atol=1e-3)


def test_a_freed_block_is_handed_back_whole_with_its_contents():
    alloc, free = _pool()
    size = 64 << 20  # above glibc's largest mmap threshold: freed, it would be unmapped
    first = alloc(size)
    ctypes.memset(first, 0x5A, size)
    held = alloc(size)  # the next block glibc would give lies elsewhere
    free(first)

    again = alloc(size)

    assert again == first
    assert ctypes.string_at(again + size - 16, 16) == b"\x5a" * 16
    free(again)
    free(held)


def test_a_block_more_than_twice_the_request_is_left_for_larger_ones():
    _pool()  # built (or skipped) here; the check runs in a process whose pool is empty
    script = """
import ctypes
from pytest_mlirpipe.execution.native import buffer_pool, runtime
lib = runtime.runtime_library()
alloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint64)(
    runtime.symbol_address(lib, buffer_pool.POOL_SYMBOLS[0]))
free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
    runtime.symbol_address(lib, buffer_pool.POOL_SYMBOLS[1]))
big = alloc(4 << 20)
free(big)
small = alloc(1 << 20)
again = alloc(4 << 20)
print(small != big, again == big)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    assert done.stdout.split() == ["True", "True"], done.stderr


@pytest.mark.skipif(openmp.openmp_runtime().path is None, reason="the stand-in needs cc")
def test_without_a_c_compiler_buffers_come_from_malloc(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "runtime_library", lambda: None)
    monkeypatch.delenv(openmp.OPENMP_ENV, raising=False)
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)
    fn = checker.compile(MATMUL, A, B, pipeline=PIPELINE)

    got = fn(A, B)

    # The JIT resolved the pool's names to malloc and free (else: "symbols not found").
    np.testing.assert_allclose(got, A @ B, rtol=1e-3, atol=1e-3)


RETURNING = """\
[pipeline]
name = "refbackend-pooled"
extends = "refbackend"
description = "refbackend, its buffers from the pool"

[[stage]]
name = "convert-to-llvm"
replaces = "convert-to-llvm"
reason = "allocations through the pool"
passes = [
    "finalize-memref-to-llvm{use-generic-functions}",
    "lower-affine",
    "convert-bufferization-to-memref",
    "finalize-memref-to-llvm{use-generic-functions}",
    "func.func(convert-arith-to-llvm)",
    "convert-vector-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "convert-complex-to-llvm",
    "reconcile-unrealized-casts",
]
"""
ADD = """\
func.func @forward(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %e = tensor.empty() : tensor<256x256xf32>
  %r = linalg.add ins(%a, %a : tensor<256x256xf32>, tensor<256x256xf32>)
                  outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
"""


@pytest.mark.parametrize("mode", ["jit", "aot"])
def test_results_the_code_allocated_from_the_pool_are_freed_into_it(mode, tmp_path):
    # RefBackend returns its result in a buffer of its own (256 KB: a pooled size), which the
    # caller copies and frees: with the pool's free, not libc's (glibc would abort).
    (tmp_path / "pipes").mkdir()
    (tmp_path / "pipes" / "refbackend-pooled.toml").write_text(RETURNING)
    checker = ModelChecker([tmp_path / "pipes"], cache_dir=None, mode=mode, work_dir=tmp_path)
    a = RNG.standard_normal((256, 256), dtype=np.float32)
    fn = checker.compile(ADD, a, pipeline="refbackend-pooled")

    for _ in range(3):
        np.testing.assert_array_equal(fn(a), a + a)
