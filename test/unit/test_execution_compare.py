"""The numeric comparison: shape, then dtype, then allclose, and what a mismatch report says."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_mlirpipe.execution.results.compare import (
    Rule,
    compare,
    compare_one,
    rule_for,
    tolerance_for,
)


def test_shape_is_checked_before_dtype_and_values() -> None:
    r = compare_one("out", np.zeros((2, 3), np.float64), np.zeros((3, 2), np.float32))
    assert not r.ok and r.format() == "out: shape [2, 3] differs from torch's [3, 2]"


def test_dtype_is_checked_before_values() -> None:
    r = compare_one("out", np.zeros(3, np.float64), np.zeros(3, np.float32))
    assert r.format() == "out: dtype float64 differs from torch's float32"


def test_mismatch_report_counts_errors_and_lists_first_indices() -> None:
    expected = np.arange(6, dtype=np.float32).reshape(2, 3)
    actual = expected.copy()
    actual[0, 1] += 0.5
    actual[1, 2] = np.inf
    r = compare_one("out", actual, expected)
    assert r.format().splitlines() == [
        "out: 2 of 6 elements differ (33.33%) beyond rtol=0.0001, atol=1e-05 "
        "(the float32 default: no float64 reference)",
        "  max abs error inf, mean abs error 0.1, max rel error 0.5",
        "  first differing (index: native vs torch):",
        "    [0, 1]: 1.5 vs 1.0",
        "    [1, 2]: inf vs 5.0",
        "  Inf in the native result: 1 positions, first [1, 2]",
    ]


def test_int64_values_near_2_to_the_63_are_reported_as_integers_with_exact_errors() -> None:
    expected = np.array([8589934591, 2**63 - 1, -(2**63), 5], np.int64)
    actual = np.array([8589934592, 2**63 - 2, 2**63 - 1, 5], np.int64)
    r = compare_one("out", actual, expected)
    assert r.format().splitlines() == [
        "out: 3 of 4 elements differ (75.00%) beyond exact equality",
        "  max abs error 1.84467e+19, mean abs error 4.61169e+18, max rel error 2",
        "  first differing (index: native vs torch):",
        "    [0]: 8589934592 vs 8589934591",
        "    [1]: 9223372036854775806 vs 9223372036854775807",
        "    [2]: 9223372036854775807 vs -9223372036854775808",
    ]


def test_booleans_are_reported_as_booleans() -> None:
    r = compare_one("out", np.array([True, False]), np.array([True, True]))
    assert r.format().splitlines()[-1] == "    [1]: False vs True"


def test_integers_compare_exactly_and_floats_use_per_dtype_defaults() -> None:
    assert tolerance_for(np.dtype(np.int64)) == (0.0, 0.0)
    assert tolerance_for(np.dtype(np.float32)) == (1e-4, 1e-5)
    assert tolerance_for(np.dtype(np.float32), rtol=0.5) == (0.5, 1e-5)
    assert not compare_one("i", np.array([1, 2]), np.array([1, 3])).ok


def test_a_different_number_of_results_fails_the_comparison() -> None:
    c = compare([np.zeros(2)], [np.zeros(2), np.zeros(2)])
    assert not c.ok
    assert c.format().splitlines()[0] == "the native code returned 1 results, torch returned 2"


def test_the_scaled_rule_reports_its_bound_and_both_errors_against_float64() -> None:
    exact = np.array([1.0, 2.0, 3.0])
    r = compare_one("out", np.float32([1.0, 2.5, 3.0]), np.float32(exact), exact=exact)
    assert r.rule == Rule.SCALED and not r.ok
    assert r.format().splitlines() == [
        "out: 1 of 3 elements differ (33.33%) beyond the scaled tolerance "
        "|native - float64| <= 10 x torch's error 0 + rtol=0.0001 x |float64| + atol=1e-05",
        "  against the float64 result: native max error 0.5, torch's 0 (ratio inf)",
        "  against torch: max abs error 0.5, mean abs error 0.166667, max rel error 0.25",
        "  first differing (index: native vs torch, float64):",
        "    [1]: 2.5 vs 2.0, 2.0",
    ]


def test_the_scaled_rule_accepts_a_cancelled_element_within_ten_times_torchs_error() -> None:
    """A near-zero element off by 5e-5 fails the per-dtype pair, element by element; torch's
    own worst error (1e-5, on the large element) makes it acceptable."""
    exact = np.array([100.0, 0.0])
    torch_result = np.float32([100.00001, 0.0])
    native = np.float32([100.0, 5e-5])
    assert not compare_one("out", native, torch_result).ok
    r = compare_one("out", native, torch_result, exact=exact)
    assert r.ok and r.rule == Rule.SCALED
    assert not compare_one("out", np.float32([100.0, 5e-3]), torch_result, exact=exact).ok


def test_the_rule_is_exact_given_scaled_or_per_dtype() -> None:
    f32, i64 = np.dtype(np.float32), np.dtype(np.int64)
    assert rule_for(i64, 0.5, None, None, True) is Rule.EXACT
    assert rule_for(f32, None, 0.0, None, True) is Rule.GIVEN
    assert rule_for(f32, None, None, {"float32": (0.1, 0.1)}, True) is Rule.GIVEN
    assert rule_for(f32, None, None, {"float64": (0.1, 0.1)}, True) is Rule.SCALED
    assert rule_for(f32, None, None, None, False) is Rule.PER_DTYPE


def test_a_float64_result_of_another_dtype_falls_back_to_the_per_dtype_pair() -> None:
    r = compare_one("out", np.float32([1, 3]), np.float32([1, 2]), exact=np.float32([1, 2]))
    assert r.rule == Rule.PER_DTYPE
    assert r.format().splitlines()[0] == (
        "out: 1 of 2 elements differ (50.00%) beyond rtol=0.0001, atol=1e-05 (the float32 "
        "default: the float64 run gave float32 [2], not float64 [2])"
    )


def test_a_given_tolerance_is_reported_as_given() -> None:
    r = compare_one("out", np.float32([1, 3]), np.float32([1, 2]), rtol=0.1, exact=np.ones(2))
    assert r.rule == Rule.GIVEN
    assert r.format().splitlines()[0] == (
        "out: 1 of 2 elements differ (50.00%) beyond the given rtol=0.1, atol=1e-05"
    )


def test_complex_results_are_judged_by_modulus_against_complex128() -> None:
    exact = np.array([1 + 1j, 2 - 1j])
    torch_result = exact.astype(np.complex64)
    assert compare_one("z", torch_result.copy(), torch_result, exact=exact).ok
    r = compare_one("z", np.complex64([1 + 1j, 2 + 1j]), torch_result, exact=exact)
    assert r.rule == Rule.SCALED and r.native_error == 2.0
    assert r.format().splitlines()[-1] == "    [1]: (2+1j) vs (2-1j), (2-1j)"
    r = compare_one("z", np.complex64([1 + 1j, 2 + 1j]), torch_result)
    assert r.rule == Rule.PER_DTYPE and r.rtol == 1e-4 and r.differing == 1


def test_bfloat16_and_float16_results_are_compared_as_float64() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.array([1.0, 2.0, 3.0], ml_dtypes.bfloat16)
    exact = np.array([1.0, 2.0, 3.0])
    assert compare_one("b", bf16.copy(), bf16, exact=exact).ok
    r = compare_one("b", np.array([1.0, 2.5, 3.0], ml_dtypes.bfloat16), bf16, exact=exact)
    assert (r.rule, r.rtol, r.differing) == (Rule.SCALED, 1.6e-2, 1)
    assert r.format().splitlines()[-1] == "    [1]: 2.5 vs 2.0, 2.0"
    r = compare_one("h", np.float16([1.0, 2.01]), np.float16([1.0, 2.0]))
    assert (r.rule, r.ok) == (Rule.PER_DTYPE, True)


def test_nan_and_inf_where_torch_has_them_pass_the_scaled_rule() -> None:
    torch_result = np.float32([np.nan, np.inf, 1.0])
    exact = np.array([np.nan, 1e40, 1.0])
    r = compare_one("out", torch_result.copy(), torch_result, exact=exact)
    assert r.ok and r.nan_both == 1 and r.torch_error == 0.0
    r = compare_one("out", np.float32([1.0, np.inf, 1.0]), torch_result, exact=exact)
    assert not r.ok and r.nan_expected == ((0,),)
