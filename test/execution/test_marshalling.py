"""Marshalling: dtypes, several inputs and results, scalars, strided inputs, dynamic dimensions."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch
from cases import Add, Scalars

from pytest_mlirpipe.errors import MlirpipeError
from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.native import Abi, EntryAbi, NativeFunction
from pytest_mlirpipe.execution.signature import EntrySignature, TensorType

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
    with pytest.raises(MlirpipeError) as info:
        fn(np.zeros(2, np.float32))
    assert "result 0 ('total'): @forward did not write 1 of 1 elements" in info.value.format()
