"""Compiled code that crashes or never returns fails its own check; the session goes on."""

from __future__ import annotations

import time

import numpy as np
import pytest

from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker

# Reads a float through a null pointer: the compiled code segfaults.
SEGFAULT = """\
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %p = llvm.inttoptr %c0 : i64 to !llvm.ptr
  %v = llvm.load volatile %p : !llvm.ptr -> f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%v : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}
"""
# Never leaves its loop.
HANG = """\
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %p = llvm.alloca %c1 x i32 : (i64) -> !llvm.ptr
  %zero = arith.constant 0 : i32
  llvm.store %zero, %p : i32, !llvm.ptr
  scf.while : () -> () {
    %x = llvm.load volatile %p : !llvm.ptr -> i32
    %go = arith.cmpi sge, %x, %zero : i32
    scf.condition(%go)
  } do {
    scf.yield
  }
  return %arg0 : tensor<4xf32>
}
"""
GOOD = """\
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.add ins(%arg0, %arg0 : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
X = np.arange(4, dtype=np.float32)


def test_a_segfault_in_compiled_code_fails_that_check_only(tmp_path):
    checker = ModelChecker(cache_dir=None, isolation="fork", work_dir=tmp_path)

    with pytest.raises(ExecutionMismatch) as info:
        checker.check(SEGFAULT, X, pipelines=["refbackend"], reference=lambda x: x, name="nul")
    good = checker.check(GOOD, X, pipelines=["refbackend"], reference=lambda x: x + x)

    (outcome,) = info.value.outcomes
    assert outcome.verdict == "FAIL"
    assert outcome.error.startswith(
        "killed by SIGSEGV (a segmentation fault), while running the compiled code\n"
        "  the imported module is in "
    )
    assert "nul.input.mlir; lower it with: mlirpipe-opt " in outcome.error
    assert outcome.error.endswith("nul.llvm.mlir")
    (source,) = tmp_path.glob("mlirpipe-repro-*/nul.input.mlir")  # under the work_dir
    assert source.read_text() == SEGFAULT
    assert f"the imported module is in {source}; " in outcome.error
    assert [o.verdict for o in good] == ["PASS"]


def test_compiled_code_that_never_returns_is_stopped_at_the_time_limit(tmp_path):
    checker = ModelChecker(cache_dir=None, isolation="fork", timeout=3.0, work_dir=tmp_path)

    start = time.perf_counter()
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(HANG, X, pipelines=["refbackend"], reference=lambda x: x, name="spin")

    assert time.perf_counter() - start < 60
    (outcome,) = info.value.outcomes
    assert outcome.error.startswith(
        "no result after 3 s (mlirpipe_timeout), while running the compiled code\n"
    )


def test_a_contained_check_gives_the_same_outcome_as_an_unprotected_one():
    forked = ModelChecker(cache_dir=None, isolation="fork")
    here = ModelChecker(cache_dir=None, isolation="none")

    a = forked.check(GOOD, X, pipelines=["refbackend", "tosa"], reference=lambda x: x + x)
    b = here.check(GOOD, X, pipelines=["refbackend", "tosa"], reference=lambda x: x + x)

    assert [(o.pipeline, o.verdict, o.abi, o.max_abs) for o in a] == [
        (o.pipeline, o.verdict, o.abi, o.max_abs) for o in b
    ]
