"""Marshalling: dtypes, several inputs and results, scalars, strided inputs, dynamic dimensions."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch
from cases import Add, Scalars, Uint8Ops

from pytest_mlirpipe.errors import MlirpipeError
from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.native.jit import SECOND_FILL, Abi, EntryAbi, NativeFunction
from pytest_mlirpipe.execution.native.signature import (
    BoundaryError,
    EntrySignature,
    TensorType,
    entry_signature,
    tensor_as_numpy,
)

DYNAMIC = """
func.func @forward(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
"""


@pytest.fixture(scope="module")
def checker() -> ModelChecker:
    return ModelChecker()


@pytest.mark.parametrize("pipeline", ["refbackend", "refbackend-dps", "tosa"])
def test_strided_inputs_are_copied_and_give_torchs_answer(checker, pipeline) -> None:
    base = torch.randn(4, 10)
    a, b = base[:, ::2].T.contiguous().T, base[:, 1::2]  # b is not contiguous
    assert not b.is_contiguous()
    compiled = checker.compile(Add(), torch.randn(4, 5), torch.randn(4, 5), pipeline=pipeline)
    np.testing.assert_array_equal(compiled(a, b), (a + b).numpy())


def test_scalars_and_two_results_come_back_as_numpy(checker) -> None:
    compiled = checker.compile(Scalars(), torch.randn(3), torch.tensor(2.0))
    vec, total = compiled(np.arange(3, dtype=np.float32), np.float32(2.0))
    np.testing.assert_array_equal(vec, [0.0, 2.0, 4.0])
    assert total.shape == () and total.dtype == np.float32 and float(total) == 5.0


def test_dynamic_dimensions_take_any_size_through_the_callback_abi(checker) -> None:
    compiled = checker.compile(DYNAMIC, np.zeros((1, 4), np.float32), pipeline="refbackend")
    assert str(compiled.signature) == "@forward(arg0: ?x4xf32) -> (?x4xf32)"
    for rows in (1, 3, 7):
        x = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
        np.testing.assert_array_equal(compiled(x), 2 * x)


def test_dynamic_results_cannot_be_passed_as_out_params(checker) -> None:
    with pytest.raises(MlirpipeError) as info:
        checker.compile(DYNAMIC, np.zeros((1, 4), np.float32), pipeline="refbackend-dps")
    assert (
        "error: @forward passes results as out-params, but result shapes ?x4xf32 are not all "
        "static" in info.value.format()
    )


def test_a_wrong_dtype_at_call_time_is_refused_not_cast(checker) -> None:
    compiled = checker.compile(Add(), torch.randn(3), torch.randn(3))
    with pytest.raises(MlirpipeError) as info:
        compiled(np.zeros(3), np.zeros(3, np.float32))
    assert info.value.format() == (
        "error: input 0 ('a') is float64, but the compiled function takes f32 (float32)\n"
        "  hint: pass a float32 array, e.g. x.astype(np.float32) or tensor.to(torch.float32)"
    )


def test_a_wrong_shape_at_call_time_names_the_expected_type(checker) -> None:
    compiled = checker.compile(Add(), torch.randn(3), torch.randn(3))
    with pytest.raises(MlirpipeError) as info:
        compiled(np.zeros(4, np.float32), np.zeros(3, np.float32))
    assert "error: input 0 ('a') has shape [4], but the compiled function takes 3xf32" in (
        info.value.format()
    )


def test_a_wrong_number_of_inputs_is_refused(checker) -> None:
    compiled = checker.compile(Add(), torch.randn(3), torch.randn(3))
    with pytest.raises(MlirpipeError) as info:
        compiled(np.zeros(3, np.float32))
    assert "error: @forward takes 2 inputs (3xf32, 3xf32), got 1" in info.value.format()


# Returns a tensor no one writes: destination passing leaves the out-param as the caller filled it.
WRITES_NOTHING = """
func.func @forward(%a: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4xi32>
  return %e : tensor<4xi32>
}
"""


def test_an_out_param_never_written_fails_even_where_the_reference_equals_the_fill(
    checker,
) -> None:
    def the_first_fill(a: np.ndarray) -> np.ndarray:
        return np.full(4, 0x5A5A5A5A, np.int32)

    with pytest.raises(ExecutionMismatch) as info:
        checker.check(
            WRITES_NOTHING,
            np.zeros(4, np.int32),
            pipelines=["refbackend-dps"],
            reference=the_first_fill,
        )
    assert (
        "error: result 0 ('result0'): @forward did not write 4 of 4 elements of its out-param "
        "(first at [0], [1], [2], [3]); they kept the fill the caller put there\n"
        "  hint: destination passing must write every element of each out-param: "
        "`mlirpipe stages FILE --pipeline P` shows the stage that dropped the write"
    ) in info.value.format()


def _writes_nothing(results: tuple[TensorType, ...]) -> NativeFunction:
    """A destination-passing entry point whose body is empty."""
    sig = EntrySignature("forward", (TensorType("a", (2,), "f32"),), results)
    noop = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda packed: None)
    return NativeFunction(sig, EntryAbi(Abi.DESTINATION, "forward"), lambda: noop, (noop,))


def test_destination_passing_out_params_start_as_nan_and_integers_as_0x5a_bytes() -> None:
    fn = _writes_nothing((TensorType("x", (2, 2), "f32"), TensorType("n", (3,), "i16")))
    fn.bind(np.zeros(2, np.float32))()
    floats, ints = fn.outputs()
    assert np.isnan(floats).all() and (ints == 0x5A5A).all()


def test_a_0d_out_param_never_written_is_reported() -> None:
    fn = _writes_nothing((TensorType("total", (), "f64"),))
    assert np.isnan(fn(np.zeros(2, np.float32))[0])  # a plain call runs once: NaN comes back
    with pytest.raises(MlirpipeError) as info:
        fn.checked_call(np.zeros(2, np.float32))
    assert "result 0 ('total'): @forward did not write 1 of 1 elements" in info.value.format()


def test_a_never_written_out_param_of_a_drawn_result_is_reported_too() -> None:
    fn = _writes_nothing((TensorType("sample", (3,), "f32"),))
    with pytest.raises(MlirpipeError) as info:
        fn.checked_call(np.zeros(2, np.float32), drawn=[0])
    assert "result 0 ('sample'): @forward did not write 3 of 3 elements" in info.value.format()


def test_a_drawn_byte_that_equals_both_fills_is_not_taken_for_an_unwritten_element() -> None:
    # int8 draws: 1 in 65536 elements is 0x5A in the first run and 0xA5 in the second
    sig = EntrySignature("forward", (TensorType("a", (2,), "f32"),), (TensorType("s", (4,), "i8"),))
    draws = iter([[0x5A, 1, 2, 3], [0xA5, 4, 5, 6], [7, 8, 9, 10]])

    def draw(packed) -> None:
        fn.outputs()[0].view(np.uint8)[...] = next(draws)

    entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(draw)
    fn = NativeFunction(sig, EntryAbi(Abi.DESTINATION, "forward"), lambda: entry, (entry,))
    (sample,) = fn.checked_call(np.zeros(2, np.float32), drawn=[0])
    assert sample.view(np.uint8).tolist() == [7, 8, 9, 10]


def _second_fill(n: int) -> np.ndarray:
    out = np.empty(n, np.float32)
    out.view(np.uint8)[...] = SECOND_FILL
    return out


def test_a_result_drawn_anew_by_each_run_is_written_where_it_left_neither_fill() -> None:
    from pytest_mlirpipe.execution.native.jit import _report_unwritten, _unwritten

    def _require_written(sig, first, second, drawn=()):
        _report_unwritten(sig, _unwritten(sig, first, second, drawn))

    sig = EntrySignature("forward", (), (TensorType("sample", (3,), "f32"),))
    first = [np.array([0.25, 0.5, 0.75], np.float32)]
    second = [np.array([0.1, 0.2, 0.3], np.float32)]
    _require_written(sig, first, second, drawn=[0])  # new draws: every element written
    with pytest.raises(MlirpipeError):  # not drawn: a difference is an unwritten element
        _require_written(sig, first, second)
    kept = second[0].copy()
    kept[1:] = _second_fill(2)
    first[0][1:] = np.nan
    with pytest.raises(MlirpipeError) as info:
        _require_written(sig, first, [kept], drawn=[0])
    assert "did not write 2 of 3 elements of its out-param (first at [1], [2])" in (
        info.value.format()
    )


SCALAR_RESULTS = """
func.func @forward(%a: tensor<3xf32>) -> (f64, i64, i1) {
  %c0 = arith.constant 0 : index
  %x = tensor.extract %a[%c0] : tensor<3xf32>
  %d = arith.extf %x : f32 to f64
  %n = arith.fptosi %x : f32 to i64
  %zero = arith.constant 0.0 : f32
  %b = arith.cmpf ogt, %x, %zero : f32
  return %d, %n, %b : f64, i64, i1
}
"""


@pytest.mark.parametrize("pipeline", ["refbackend", "refbackend-dps", "tosa"])
def test_scalar_results_come_back_as_numpy_scalars(checker, pipeline: str) -> None:
    a = np.array([-2.5, 1.0, 3.0], np.float32)
    compiled = checker.compile(SCALAR_RESULTS, a, pipeline=pipeline)
    assert str(compiled.signature) == "@forward(arg0: 3xf32) -> (f64, i64, i1)"
    d, n, b = compiled.function(a)
    assert (type(d), type(n), type(b)) == (np.float64, np.int64, np.bool_)
    assert (d, n, b) == (-2.5, -2, False)


def test_uint8_keeps_its_signedness_from_torchs_side(checker) -> None:
    a = torch.tensor([200, 3], dtype=torch.uint8)
    b = torch.tensor([100, 250], dtype=torch.uint8)
    compiled = checker.compile(Uint8Ops(), a, b, pipeline="refbackend-dps")
    assert str(compiled.signature) == "@forward(a: 2xui8, b: 2xui8) -> (2xui8, 2xi1, 2xf32, 2xui8)"
    total, greater, half, biggest = compiled(a, b)
    assert total.dtype == np.uint8 and total.tolist() == [44, 253]
    assert greater.tolist() == [True, False] and half.tolist() == [100.0, 1.5]
    assert biggest.tolist() == [200, 250]
    with pytest.raises(MlirpipeError) as info:
        compiled(a.to(torch.int8), b)
    assert "error: input 0 ('a') is int8, but the compiled function takes ui8 (uint8)" in (
        info.value.format()
    )


def test_bf16_tensors_convert_bit_for_bit_through_ml_dtypes() -> None:
    t = torch.tensor([1.0, -0.0078125, 3.140625], dtype=torch.bfloat16)
    array = tensor_as_numpy(t)
    assert array.dtype.name == "bfloat16" and array.astype(np.float32).tolist() == t.tolist()


def test_a_torch_dtype_numpy_lacks_is_refused_with_the_supported_list() -> None:
    with pytest.raises(MlirpipeError) as info:
        tensor_as_numpy(torch.zeros(2, dtype=torch.float8_e4m3fn))
    assert info.value.format().startswith(
        "error: a torch.float8_e4m3fn tensor has no numpy counterpart, so execution tests "
        "cannot pass it to compiled code or compare it\n"
        "  hint: supported element types: f16, bf16, f32, f64, complex<f32>, complex<f64>, i1, "
        "i8, ui8,"
    )


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_a_sparse_tensor_is_refused_as_the_harness_limit_it_is() -> None:
    sparse = torch.eye(3).to_sparse_csr()
    with pytest.raises(BoundaryError) as info:
        tensor_as_numpy(sparse)
    assert info.value.format() == (
        "error: a sparse_csr tensor cannot cross to compiled code: execution tests pass and "
        "compare dense (strided) tensors only\n"
        "  hint: give the model dense inputs and results (tensor.to_dense()); sparse tensors "
        "need torch-mlir's sparse compiler and its own runtime"
    )


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            "tensor<2xf8E4M3FN>",
            "error: result 'result0' has element type f8E4M3FN, which execution tests do not "
            "support",
        ),
        (
            "!torch.list<int>",
            "error: result 'result0' has type !torch.list<int>, which is not a ranked tensor or "
            "a scalar\n  hint: execution tests take ranked tensors in and give ranked tensors "
            "or scalars (f64, f32, i64, i32, i1) back",
        ),
    ],
)
def test_an_unsupported_result_type_is_named_not_a_raw_error(result: str, message: str) -> None:
    source = (
        f"func.func private @make() -> {result}\n"
        f"func.func @forward() -> {result} {{\n"
        f"  %r = func.call @make() : () -> {result}\n"
        f"  return %r : {result}\n"
        "}\n"
    )
    with pytest.raises(MlirpipeError) as info:
        entry_signature(source)
    assert info.value.format().startswith(message)
