"""The f32 math functions refbackend-vectorized computes with polynomials of its own (tanh,
erf, log), run natively on a sweep of f32 values and measured against float64: the largest error in
units of the last place of the exact result, and no call of the C library left in the code."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stages import run_stages

PIPELINE = "refbackend-vectorized"
N = 1 << 20
SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0]


def _unary(op: str) -> str:
    return f"""\
#id = affine_map<(i) -> (i)>
func.func @forward(%x: tensor<{N + len(SPECIAL)}xf32>) -> tensor<{N + len(SPECIAL)}xf32> {{
  %e = tensor.empty() : tensor<{N + len(SPECIAL)}xf32>
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%x : tensor<{N + len(SPECIAL)}xf32>) outs(%e : tensor<{N + len(SPECIAL)}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %y = math.{op} %a : f32
    linalg.yield %y : f32
  }} -> tensor<{N + len(SPECIAL)}xf32>
  return %r : tensor<{N + len(SPECIAL)}xf32>
}}
"""


def _sweep(low: float, high: float, signed: bool) -> np.ndarray:
    """N f32 values of low ... high (and their negatives when `signed`), evenly spaced in their
    bits: every binade gets as many, so small arguments are as well covered as large ones."""
    low_bits, high_bits = np.array([low, high], dtype=np.float32).view(np.uint32)
    count = N // 2 if signed else N
    positive = np.linspace(low_bits, high_bits, count).astype(np.uint32).view(np.float32)
    return np.concatenate([positive, -positive]) if signed else positive


@pytest.mark.parametrize(
    ("op", "low", "high", "signed", "exact", "max_ulp"),
    [
        # measured: 1.27 ulp over this sweep, 1.31 on an even grid of -10 ... 10 (at x = -0.627,
        # where the polynomial hands over to the exponential)
        ("tanh", 1e-30, 12.0, True, np.tanh, 1.35),
        # measured: 1.06 ulp over this sweep, 1.27 on an even grid of -5 ... 5 (at x = 0.998,
        # below the hand-over at 1)
        ("erf", 1e-30, 5.0, True, np.vectorize(math.erf), 1.3),
        # measured: 0.74 ulp over this sweep (subnormals, 1e-45 up, included), 0.80 on an even
        # grid of 0.5 ... 2
        ("log", 1e-45, 3.4e38, False, np.log, 0.85),
    ],
)
def test_approximation_is_within_its_ulp_bound_of_float64(
    op, low, high, signed, exact, max_ulp, tmp_path, monkeypatch
):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "avx2,fma")
    x = np.concatenate([_sweep(low, high, signed), np.array(SPECIAL, dtype=np.float32)])
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)

    got = np.asarray(checker.compile(_unary(op), x, pipeline=PIPELINE)(x), dtype=np.float64)

    with np.errstate(all="ignore"):  # log's ends: of 0, of negative numbers
        want = exact(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    errors = np.abs(got[:N] - want[:N]) / ulp[:N]
    worst = int(np.argmax(errors))
    assert errors[worst] <= max_ulp, f"{op}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"
    np.testing.assert_allclose(got[N:], want[N:], rtol=2**-22, atol=0)  # NaN, infinities, zeros
    numbers = ~np.isnan(want[N:])
    assert list(np.signbit(got[N:][numbers])) == list(np.signbit(want[N:][numbers]))


@pytest.mark.parametrize("op", ["tanh", "erf", "log"])
def test_no_call_of_the_c_library_is_left(op):
    lowered = run_stages(_unary(op), catalog_for([]).get(PIPELINE)).snapshots[-1].ir

    calls = set(re.findall(r"llvm\.call @(\w+)", lowered)) - {"forward"}
    assert all(name.startswith("_mlir_") for name in calls), calls
    assert "llvm.intr.exp" not in lowered
