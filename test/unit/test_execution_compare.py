"""The numeric comparison: shape, then dtype, then allclose, and what a mismatch report says."""

from __future__ import annotations

import numpy as np

from pytest_mlirpipe.execution.compare import compare, compare_one, tolerance_for


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


def test_integers_compare_exactly_and_floats_use_per_dtype_defaults() -> None:
    assert tolerance_for(np.dtype(np.int64)) == (0.0, 0.0)
    assert tolerance_for(np.dtype(np.float32)) == (1e-4, 1e-5)
    assert tolerance_for(np.dtype(np.float32), rtol=0.5) == (0.5, 1e-5)
    assert not compare_one("i", np.array([1, 2]), np.array([1, 3])).ok


def test_a_different_number_of_results_fails_the_comparison() -> None:
    c = compare([np.zeros(2)], [np.zeros(2), np.zeros(2)])
    assert not c.ok
    assert c.format().splitlines()[0] == "the native code returned 1 results, torch returned 2"
