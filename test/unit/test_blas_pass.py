"""mlirpipe-matmul-to-blas: each form it rewrites gives numpy's numbers, and the IR it leaves."""

from __future__ import annotations

import ctypes
import re
import sys

import numpy as np
import pytest

from pytest_mlirpipe.errors import PipelineSpecError
from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stages import run_pass_pipeline, run_stages

pytest.importorskip("scipy_openblas32", reason="the numeric checks call OpenBLAS")

# ---------------------------------------------------------------------------------------------
# A small RefBackend runner (ExecutionEngine + the result callback), private to these tests.

_NP_OF = {"f32": np.float32, "f64": np.float64, "i32": np.int32}


def _lower(source: str, pipeline: str) -> object:
    """Run a shipped pipeline to the llvm dialect; the StageRun keeps module and context."""
    return run_stages(source, catalog_for([]).get(pipeline), capture=False)


def _execute(source: str, pipeline: str, inputs: list[np.ndarray], result: str) -> np.ndarray:
    from torch_mlir.execution_engine import ExecutionEngine
    from torch_mlir.runtime import (
        UnrankedMemRefDescriptor,
        get_unranked_memref_descriptor,
        unranked_memref_to_numpy,
    )

    from pytest_mlirpipe.execution.native.blas_library import find_blas_library

    run = _lower(source, pipeline)
    with run.context:
        engine = ExecutionEngine(
            run.module, opt_level=2, shared_libs=[str(find_blas_library().path)]
        )
    got: list[np.ndarray] = []

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def consume(memref):
        got.append(unranked_memref_to_numpy(memref, _NP_OF[result]).copy())

    engine.register_runtime(f"refbackend_consume_func_return_mr{result}", consume)
    args = [ctypes.pointer(ctypes.pointer(get_unranked_memref_descriptor(a))) for a in inputs]
    engine.invoke("forward", *args)
    assert len(got) == 1
    return got[0]


def _check_both(source: str, inputs: list[np.ndarray], expected: np.ndarray, result="f32"):
    """The plain and the -blas pipeline both match the numpy reference."""
    tol = {"f32": 1e-5, "f64": 1e-12, "i32": 0}[result]
    for pipeline in ("refbackend", "refbackend-blas"):
        out = _execute(source, pipeline, inputs, result)
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol, err_msg=pipeline)


def _after_pass(source: str, stop: str = "matmul-to-blas") -> str:
    return (
        run_stages(
            source,
            catalog_for([]).get("refbackend-blas"),
            stop_after=stop,
            capture=True,
        )
        .snapshots[-1]
        .ir
    )


def _rng(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Kernels on tensors, in the forms the front ends produce

FILL_MATMUL = """
func.func @forward(%a: tensor<{M}x{K}x{T}>, %b: tensor<{K}x{N}x{T}>) -> tensor<{M}x{N}x{T}> {{
  %zero = arith.constant 0.0 : {T}
  %e = tensor.empty() : tensor<{M}x{N}x{T}>
  %f = linalg.fill ins(%zero : {T}) outs(%e : tensor<{M}x{N}x{T}>) -> tensor<{M}x{N}x{T}>
  %r = linalg.matmul ins(%a, %b : tensor<{M}x{K}x{T}>, tensor<{K}x{N}x{T}>)
                     outs(%f : tensor<{M}x{N}x{T}>) -> tensor<{M}x{N}x{T}>
  return %r : tensor<{M}x{N}x{T}>
}}
"""

# x @ w.T as torch-mlir emits it (and nn.Linear's weight): linalg.transpose, then linalg.matmul.
TRANSPOSE_B = """
func.func @forward(%x: tensor<5x4xf32>, %w: tensor<3x4xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<4x3xf32>
  %wt = linalg.transpose ins(%w : tensor<3x4xf32>) outs(%t0 : tensor<4x3xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<5x4xf32>, tensor<4x3xf32>)
                     outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""

TRANSPOSE_A = """
func.func @forward(%x: tensor<4x5xf32>, %w: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<5x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x5xf32>) outs(%t0 : tensor<5x4xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%xt, %w : tensor<5x4xf32>, tensor<4x3xf32>)
                     outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""

# linalg.matmul with explicit maps: A^T B^T.
MAPS_TT = """
#ma = affine_map<(m, n, k) -> (k, m)>
#mb = affine_map<(m, n, k) -> (n, k)>
#mc = affine_map<(m, n, k) -> (m, n)>
func.func @forward(%a: tensor<4x5xf32>, %b: tensor<3x4xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul indexing_maps = [#ma, #mb, #mc]
         ins(%a, %b : tensor<4x5xf32>, tensor<3x4xf32>)
         outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""

# A matmul spelled as linalg.generic with a permuted map for B (x @ w.T).
GENERIC_BT = """
#ma = affine_map<(m, n, k) -> (m, k)>
#mb = affine_map<(m, n, k) -> (n, k)>
#mc = affine_map<(m, n, k) -> (m, n)>
func.func @forward(%a: tensor<5x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.generic {indexing_maps = [#ma, #mb, #mc],
                       iterator_types = ["parallel", "parallel", "reduction"]}
         ins(%a, %b : tensor<5x4xf32>, tensor<3x4xf32>) outs(%f : tensor<5x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""

# Offset and strided operands: slices of bigger inputs (B with a column step of 2 has no unit
# stride, so it is the one case copied), the result written into a slice of a bigger output.
SLICES = """
func.func @forward(%a: tensor<8x9xf32>, %b: tensor<6x10xf32>) -> tensor<7x6xf32> {
  %zero = arith.constant 0.0 : f32
  %sa = tensor.extract_slice %a[1, 2] [5, 4] [1, 1] : tensor<8x9xf32> to tensor<5x4xf32>
  %sb = tensor.extract_slice %b[1, 1] [4, 3] [1, 2] : tensor<6x10xf32> to tensor<4x3xf32>
  %big = tensor.empty() : tensor<7x6xf32>
  %bigf = linalg.fill ins(%zero : f32) outs(%big : tensor<7x6xf32>) -> tensor<7x6xf32>
  %e = tensor.extract_slice %bigf[2, 1] [5, 3] [1, 1] : tensor<7x6xf32> to tensor<5x3xf32>
  %r = linalg.matmul ins(%sa, %sb : tensor<5x4xf32>, tensor<4x3xf32>)
                     outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %out = tensor.insert_slice %r into %bigf[2, 1] [5, 3] [1, 1]
         : tensor<5x3xf32> into tensor<7x6xf32>
  return %out : tensor<7x6xf32>
}
"""

BATCH = """
func.func @forward(%a: tensor<3x5x4xf64>, %b: tensor<3x4x6xf64>) -> tensor<3x5x6xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x5x6xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<3x5x6xf64>) -> tensor<3x5x6xf64>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x5x4xf64>, tensor<3x4x6xf64>)
                           outs(%f : tensor<3x5x6xf64>) -> tensor<3x5x6xf64>
  return %r : tensor<3x5x6xf64>
}
"""

# addmm / nn.Linear with the bias broadcast into the output first: beta = 1.
BIAS = """
#row = affine_map<(m, n) -> (n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @forward(%x: tensor<5x4xf32>, %w: tensor<4x3xf32>, %bias: tensor<3xf32>)
    -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %init = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
            ins(%bias : tensor<3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<5x3xf32>
  %r = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>)
                     outs(%init : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""


def _fill_matmul(m, n, k, t="f32") -> str:
    return FILL_MATMUL.format(M=m, N=n, K=k, T=t)


# ---------------------------------------------------------------------------------------------
# Numbers: each form, lowered with and without the pass, against numpy


@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_fill_matmul_matches_numpy_with_and_without_blas(elem):
    dt = _NP_OF[elem]
    a, b = _rng(5, 7, dtype=dt), _rng(7, 3, dtype=dt)
    _check_both(_fill_matmul(5, 3, 7, elem), [a, b], a @ b, elem)


def test_seed_2x2_matches_numpy():
    a = _rng(2, 2)
    _check_both(_fill_matmul(2, 2, 2), [a, np.ones((2, 2), np.float32)], a @ np.ones((2, 2)))


def test_transposed_weight_matches_numpy():
    x, w = _rng(5, 4), _rng(3, 4)
    _check_both(TRANSPOSE_B, [x, w], x @ w.T)


def test_transposed_input_matches_numpy():
    x, w = _rng(4, 5), _rng(4, 3)
    _check_both(TRANSPOSE_A, [x, w], x.T @ w)


def test_matmul_with_transposing_maps_matches_numpy():
    a, b = _rng(4, 5), _rng(3, 4)
    _check_both(MAPS_TT, [a, b], a.T @ b.T)


def test_generic_matmul_with_permuted_map_matches_numpy():
    a, b = _rng(5, 4), _rng(3, 4)
    _check_both(GENERIC_BT, [a, b], a @ b.T)


def test_offset_and_strided_slices_match_numpy():
    a, b = _rng(8, 9), _rng(6, 10)
    expected = np.zeros((7, 6), np.float32)
    expected[2:7, 1:4] = a[1:6, 2:6] @ b[1:5, 1:7:2]
    _check_both(SLICES, [a, b], expected)


def test_batch_matmul_f64_matches_numpy():
    a, b = _rng(3, 5, 4, dtype=np.float64), _rng(3, 4, 6, dtype=np.float64)
    _check_both(BATCH, [a, b], a @ b, "f64")


def test_bias_initialized_output_matches_numpy():
    x, w, bias = _rng(5, 4), _rng(4, 3), _rng(3)
    _check_both(BIAS, [x, w, bias], x @ w + bias)


def test_i32_matmul_is_left_to_the_loops_and_still_right():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.arange(8, dtype=np.int32).reshape(4, 2)
    _check_both(_fill_matmul(3, 2, 4, "i32").replace("0.0 : i32", "0 : i32"), [a, b], a @ b, "i32")


# Outputs the front ends do not make but bufferized IR can hold: a column-major view of the
# output (computed as C^T = B^T A^T) and an output view without a unit stride (copied).
COLUMN_MAJOR_OUT = """
func.func @forward(%a: memref<5x4xf32>, %b: memref<4x3xf32>, %c: memref<3x5xf32>) {
  %ct = memref.transpose %c (i, j) -> (j, i) : memref<3x5xf32> to memref<5x3xf32, strided<[1, 5]>>
  linalg.matmul ins(%a, %b : memref<5x4xf32>, memref<4x3xf32>)
                outs(%ct : memref<5x3xf32, strided<[1, 5]>>)
  return
}
"""

STEPPED_OUT = """
func.func @forward(%a: memref<5x4xf32>, %b: memref<4x3xf32>, %c: memref<5x6xf32>) {
  %cs = memref.subview %c[0, 0] [5, 3] [1, 2] : memref<5x6xf32> to memref<5x3xf32, strided<[6, 2]>>
  linalg.matmul ins(%a, %b : memref<5x4xf32>, memref<4x3xf32>)
                outs(%cs : memref<5x3xf32, strided<[6, 2]>>)
  return
}
"""


def _execute_in_place(source: str, pipeline: str, inputs: list[np.ndarray]) -> None:
    """Run a function that writes its last argument (no results, so no callback)."""
    from torch_mlir.execution_engine import ExecutionEngine
    from torch_mlir.runtime import get_unranked_memref_descriptor

    from pytest_mlirpipe.execution.native.blas_library import find_blas_library

    run = _lower(source, pipeline)
    with run.context:
        engine = ExecutionEngine(
            run.module, opt_level=2, shared_libs=[str(find_blas_library().path)]
        )
    done = ctypes.CFUNCTYPE(None)(lambda: None)  # RefBackend's callback of a result-less call
    engine.register_runtime("refbackend_consume_func_return", done)
    args = [ctypes.pointer(ctypes.pointer(get_unranked_memref_descriptor(a))) for a in inputs]
    engine.invoke("forward", *args)


def test_column_major_output_view_matches_numpy():
    a, b, c0 = _rng(5, 4), _rng(4, 3), _rng(3, 5)
    for pipeline in ("refbackend", "refbackend-blas"):
        c = c0.copy()
        _execute_in_place(COLUMN_MAJOR_OUT, pipeline, [a, b, c])
        np.testing.assert_allclose(c, c0 + (a @ b).T, rtol=1e-5, atol=1e-5, err_msg=pipeline)
    call = _gemm_call(_after_pass(COLUMN_MAJOR_OUT))
    # Swapped: M and N exchange, B goes first, both transposed; ldc is the column stride.
    assert (call["transa"], call["transb"], call["M"], call["N"], call["K"]) == (112, 112, 3, 5, 4)
    assert (call["lda"], call["ldb"], call["ldc"], call["beta"]) == (3, 4, 5, 1.0)


def test_output_view_without_unit_stride_is_computed_in_a_copy_and_copied_back():
    a, b, c0 = _rng(5, 4), _rng(4, 3), _rng(5, 6)
    for pipeline in ("refbackend", "refbackend-blas"):
        c = c0.copy()
        _execute_in_place(STEPPED_OUT, pipeline, [a, b, c])
        expected = c0.copy()
        expected[:, ::2] += a @ b
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5, err_msg=pipeline)
    ir = _after_pass(STEPPED_OUT)
    assert ir.count("linalg.copy") == 2  # in, then back out


# ---------------------------------------------------------------------------------------------
# The IR: which call, with which flags, sizes, leading dimensions and beta


def _gemm_call(ir: str) -> dict:
    """The constant operands of the (single) gemm call, by their CBLAS parameter names."""
    calls = re.findall(r"llvm\.call @(\w*cblas_[sd]gemm)\(([^)]*)\)", ir)
    assert len(calls) == 1, ir
    symbol, operands = calls[0]
    consts = dict(re.findall(r"(%\w+) = arith\.constant ([-\d.e+]+) : (?:i32|f32|f64)", ir))
    names = [
        "order",
        "transa",
        "transb",
        "M",
        "N",
        "K",
        "alpha",
        "A",
        "lda",
        "B",
        "ldb",
        "beta",
        "C",
        "ldc",
    ]
    values = {}
    for name, operand in zip(names, operands.split(", "), strict=True):
        text = consts.get(operand.strip())
        values[name] = None if text is None else float(text) if "." in text else int(text)
    values["symbol"] = symbol
    return values


def _forward_body(ir: str) -> str:
    return ir.split("func.func @forward", 1)[1].split("\n  }", 1)[0]


@pytest.mark.parametrize(
    ("source", "flags", "lds", "beta"),
    [
        (_fill_matmul(5, 3, 7), (111, 111), (7, 3, 3), 0.0),
        (TRANSPOSE_B, (111, 112), (4, 4, 3), 0.0),
        (TRANSPOSE_A, (112, 111), (5, 3, 3), 0.0),
        (MAPS_TT, (112, 112), (5, 4, 3), 0.0),
        (GENERIC_BT, (111, 112), (4, 4, 3), 0.0),
        # written in place into the zero-filled 7x6 buffer, which the fill covers beyond C
        (SLICES, (111, 111), (9, 3, 6), 1.0),
        (BATCH, (111, 111), (4, 6, 6), 0.0),
        (BIAS, (111, 111), (4, 3, 3), 1.0),
    ],
    ids=["fill", "transpose-b", "transpose-a", "maps-tt", "generic-bt", "slices", "batch", "bias"],
)
def test_each_form_becomes_one_gemm_call_with_its_flags(source, flags, lds, beta):
    ir = _after_pass(source)
    call = _gemm_call(ir)
    assert (call["order"], call["transa"], call["transb"]) == (101, *flags)
    assert (call["lda"], call["ldb"], call["ldc"], call["beta"], call["alpha"]) == (*lds, beta, 1.0)
    assert call["symbol"] == ("scipy_cblas_dgemm" if "f64" in source else "scipy_cblas_sgemm")
    body = _forward_body(ir)
    for gone in ("linalg.matmul", "linalg.batch_matmul", "linalg.transpose", "arith.mulf"):
        assert gone not in body


@pytest.mark.parametrize("source", [_fill_matmul(2, 2, 2), TRANSPOSE_B, BATCH, BIAS])
def test_the_entry_point_allocates_only_the_result_and_fills_or_copies_nothing(source):
    body = _forward_body(_after_pass(source))
    assert body.count("memref.alloc") == 1
    assert "memref.copy" not in body
    assert "linalg.fill" not in body


def test_seed_before_and_after_the_pass():
    before = _after_pass(_fill_matmul(2, 2, 2), stop="finalizing-bufferize")
    assert _forward_body(before).count("memref.alloc") == 1  # filled and written in place
    assert "memref.copy" not in before and "linalg.fill" in before
    after = _after_pass(_fill_matmul(2, 2, 2))
    assert "call @mlirpipe_blas_f32_gemm(%arg0, %arg1, %alloc)" in _forward_body(after)


# refbackend's bufferize stage as it was, with copy-before-write: the fill goes to a temporary
# that is copied into the matmul's output.
COPY_BEFORE_WRITE = """\
[pipeline]
name = "blas-copy-before-write"
extends = "refbackend-blas"
description = "refbackend-blas bufferized with copy-before-write"

[[stage]]
name = "bufferize"
replaces = "bufferize"
reason = "a copy before every write"
passes = [
    "func.func(tm-tensor-bufferize)",
    "one-shot-bufferize{copy-before-write unknown-type-conversion=identity-layout-map}",
]
"""


def test_the_copy_of_a_zero_filled_temporary_folds_into_beta_0(tmp_path):
    (tmp_path / "blas-copy-before-write.toml").write_text(COPY_BEFORE_WRITE)
    pipeline = catalog_for([tmp_path]).get("blas-copy-before-write")
    source = _fill_matmul(2, 2, 2)
    snapshots = run_stages(source, pipeline, stop_after="matmul-to-blas", capture=True).snapshots
    before, after = snapshots[-2].ir, snapshots[-1].ir
    assert _forward_body(before).count("memref.alloc") == 2 and "memref.copy" in before
    body = _forward_body(after)
    assert body.count("memref.alloc") == 1
    assert "memref.copy" not in body and "linalg.fill" not in body
    assert _gemm_call(after)["beta"] == 0.0


def test_final_ir_of_every_blas_pipeline_is_llvm_only():
    dialect_op = re.compile(r"^\s*(%\S+ = )?(func|memref|arith|cf|scf|linalg|bufferization)\.")
    for pipeline in ("refbackend-blas", "tosa-blas"):
        source = _fill_matmul(4, 4, 4)
        if pipeline == "tosa-blas":
            source = TOSA_MATMUL
        ir = _lower(source, pipeline).final_ir
        assert "llvm.call @scipy_cblas_sgemm" in ir
        assert not [ln for ln in ir.splitlines() if dialect_op.match(ln)], pipeline


TOSA_MATMUL = """
func.func @forward(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %z, %z : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>,
                                     tensor<1xf32>) -> tensor<1x4x4xf32>
  return %r : tensor<1x4x4xf32>
}
"""


# ---------------------------------------------------------------------------------------------
# What it refuses, and what it says with debug


I32_MATMUL = """func.func @forward(%a: memref<3x4xi32>, %b: memref<4x2xi32>, %c: memref<3x2xi32>) {
  linalg.matmul ins(%a, %b : memref<3x4xi32>, memref<4x2xi32>) outs(%c : memref<3x2xi32>)
  return
}
"""


def _pass(source: str, options: str = "") -> str:
    text = (
        f"builtin.module(mlirpipe-matmul-to-blas{{{options}}})"
        if options
        else ("builtin.module(mlirpipe-matmul-to-blas)")
    )
    return run_pass_pipeline(source, text, source_name="k.mlir").final_ir


def _parsed(source: str) -> str:
    return run_pass_pipeline(source, "builtin.module()", source_name="k.mlir").final_ir


def test_i32_matmul_is_left_as_it_was_and_debug_says_why(capsys):
    assert _pass(I32_MATMUL, "debug=true") == _parsed(I32_MATMUL)
    err = capsys.readouterr().err
    assert err == (
        "-:2:3: remark: mlirpipe-matmul-to-blas: 'linalg.matmul' left as it was: element type "
        "i32 has no BLAS gemm (f32 -> cblas_sgemm, f64 -> cblas_dgemm)\n"
    )


def test_without_debug_a_refusal_is_silent(capsys):
    assert _pass(I32_MATMUL) == _parsed(I32_MATMUL)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            _fill_matmul(2, 2, 2),
            "its operands are tensors; run it after bufferization",
        ),
        (
            "func.func @f(%a: memref<2x2xf16>, %b: memref<2x2xf16>, %c: memref<2x2xf32>) {\n"
            "  linalg.matmul ins(%a, %b : memref<2x2xf16>, memref<2x2xf16>)"
            " outs(%c : memref<2x2xf32>)\n  return\n}\n",
            "mixed element types (f16, f32) have no BLAS gemm",
        ),
        (
            "func.func @f(%a: memref<2x2xf32>, %c: memref<2x2xf32>) {\n"
            "  linalg.matmul ins(%a, %c : memref<2x2xf32>, memref<2x2xf32>)"
            " outs(%c : memref<2x2xf32>)\n  return\n}\n",
            "its output is also one of its inputs",
        ),
        (
            "#a = affine_map<(m, n, k) -> (m, k)>\n#b = affine_map<(m, n, k) -> (k, n)>\n"
            "#c = affine_map<(m, n, k) -> (m, n)>\n"
            "func.func @f(%a: memref<2x2xf32>, %b: memref<2x2xf32>, %c: memref<2x2xf32>) {\n"
            "  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = "
            '["parallel", "parallel", "reduction"]}\n'
            "    ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>) {\n"
            "  ^bb0(%x: f32, %y: f32, %o: f32):\n"
            "    %p = arith.mulf %x, %y : f32\n    %s = arith.maximumf %o, %p : f32\n"
            "    linalg.yield %s : f32\n  }\n  return\n}\n",
            "its body (arith.mulf, arith.maximumf, linalg.yield) is not a multiply-accumulate "
            "(mulf, addf, yield)",
        ),
        (
            "func.func @f(%a: memref<2x4xf32>, %b: memref<4x2xf32>, %c: memref<2x2xf32>) {\n"
            "  %v = memref.reinterpret_cast %a to offset: [0], sizes: [2, 4], strides: [2, 1]"
            " : memref<2x4xf32> to memref<2x4xf32, strided<[2, 1]>>\n"
            "  linalg.matmul ins(%v, %b : memref<2x4xf32, strided<[2, 1]>>, memref<4x2xf32>)"
            " outs(%c : memref<2x2xf32>)\n  return\n}\n",
            "operand memref<2x4xf32, strided<[2, 1]>> has overlapping rows (stride 2 < 4), "
            "which BLAS cannot express",
        ),
    ],
    ids=["tensors", "mixed-types", "output-is-input", "not-mul-add", "overlapping"],
)
def test_each_refusal_leaves_the_ir_and_names_its_reason(source, reason, capsys):
    assert _pass(source, "debug=true") == _parsed(source)
    err = capsys.readouterr().err
    assert err.endswith(f"left as it was: {reason}\n"), err


def test_prefix_option_names_the_symbols():
    kernel = I32_MATMUL.replace("i32", "f32")
    ir = _pass(kernel, "prefix=mkl_")
    assert "llvm.call @mkl_cblas_sgemm(" in ir and "scipy_" not in ir
    assert "llvm.call @cblas_sgemm(" in _pass(kernel, "prefix=''")


def test_prefix_follows_the_environment(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "my_")
    assert "llvm.call @my_cblas_sgemm(" in _pass(I32_MATMUL.replace("i32", "f32"))


def test_the_python_api_and_mlirpipe_opt_call_the_same_blas_symbol(monkeypatch):
    monkeypatch.delenv("MLIRPIPE_BLAS_PREFIX", raising=False)
    monkeypatch.delenv("MLIRPIPE_BLAS_LIBRARY", raising=False)
    kernel = I32_MATMUL.replace("i32", "f32")
    pipeline = catalog_for([]).get("refbackend-blas")
    api = run_stages(kernel, pipeline, capture=False).final_ir  # no pass options
    status, opt, err = _opt("-", "--pipeline", "refbackend-blas")
    assert (status, err) == (0, "")
    assert "llvm.call @scipy_cblas_sgemm(" in api
    assert "llvm.call @scipy_cblas_sgemm(" in opt


def test_a_cached_prefix_is_not_reused_under_another_default_blas_prefix(monkeypatch):
    from pytest_mlirpipe.lowering.prefix_cache import prefix_cache

    kernel = I32_MATMUL.replace("i32", "f32")
    pipeline = catalog_for([]).get("refbackend-blas")
    with prefix_cache():
        monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "a_")
        assert "llvm.call @a_cblas_sgemm(" in run_stages(kernel, pipeline).final_ir
        monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "b_")
        assert "llvm.call @b_cblas_sgemm(" in run_stages(kernel, pipeline).final_ir


def _opt(*argv: str) -> tuple[int, str, str]:
    import io

    from pytest_mlirpipe.tools import opt

    out, err = io.StringIO(), io.StringIO()
    status = opt.run(list(argv), io.StringIO(I32_MATMUL.replace("i32", "f32")), out, err)
    return status, out.getvalue(), err.getvalue()


def test_mlirpipe_opt_gives_the_pass_the_configured_library_prefix(monkeypatch):
    monkeypatch.delenv("MLIRPIPE_BLAS_PREFIX", raising=False)
    monkeypatch.delenv("MLIRPIPE_BLAS_LIBRARY", raising=False)
    status, out, err = _opt("-", "--pass-pipeline", "builtin.module(mlirpipe-matmul-to-blas)")
    assert (status, err) == (0, "")
    assert "llvm.call @scipy_cblas_sgemm(" in out

    monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "my_")
    status, out, err = _opt("-", "--pass-pipeline", "builtin.module(mlirpipe-matmul-to-blas)")
    assert (status, err) == (0, "")
    assert "llvm.call @my_cblas_sgemm(" in out


def test_a_bad_prefix_in_the_environment_fails_only_pipelines_that_call_blas(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_BLAS_PREFIX", "my-blas")
    assert _opt("-", "--pass-pipeline", "builtin.module(canonicalize)")[0] == 0
    assert (
        _opt("-", "--pass-pipeline", "builtin.module(mlirpipe-matmul-to-blas{prefix=a_})")[0] == 0
    )
    status, _, err = _opt("-", "--pass-pipeline", "builtin.module(mlirpipe-matmul-to-blas)")
    assert status != 0
    assert "error: BLAS symbol prefix 'my-blas' is not a C identifier prefix" in err


def test_a_bad_debug_value_is_reported_with_the_accepted_ones():
    with pytest.raises(PipelineSpecError) as info:
        _pass(I32_MATMUL, "debug=maybe")
    assert "mlirpipe-matmul-to-blas: option 'debug' takes true or false, not 'maybe'" in str(
        info.value
    )


def test_debug_remark_reaches_stderr_of_mlirpipe_opt(tmp_path):
    import subprocess

    path = tmp_path / "k.mlir"
    path.write_text(I32_MATMUL)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_mlirpipe.tools.opt",
            str(path),
            "--pass-pipeline",
            "builtin.module(mlirpipe-matmul-to-blas{debug=true})",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "remark: mlirpipe-matmul-to-blas: 'linalg.matmul' left as it was" in proc.stderr
