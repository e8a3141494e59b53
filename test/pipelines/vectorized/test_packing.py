"""Matmuls whose operands mlirpipe-pack-matmul packs, run through refbackend-vectorized as it
is on a CPU with AVX2 (6x16 tiles, A in strips) and with AVX-512 (4x64 tiles, B in panels of
64 only; 8x32 tiles on the matmuls left as they are), whatever this host has: both are correct
anywhere (LLVM splits or joins vectors)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stages import run_stages

PIPELINE = "refbackend-vectorized"
NARROW, WIDE = "avx2,fma", "avx2,fma,avx512f"


def _matmul(m: int, k: int, n: int, a_k_major: bool, init: float = 0.0) -> str:
    a_type = f"tensor<{k}x{m}xf32>" if a_k_major else f"tensor<{m}x{k}xf32>"
    a_map = "(k, m)" if a_k_major else "(m, k)"
    return f"""\
func.func @forward(%a: {a_type}, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant {init!r} : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> {a_map}>,
                                      affine_map<(m, n, k) -> (k, n)>,
                                      affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : {a_type}, tensor<{k}x{n}xf32>) outs(%f : tensor<{m}x{n}xf32>)
    -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""


@pytest.mark.parametrize(
    ("m", "k", "n", "a_k_major", "packed", "init"),
    [
        # packed: (with AVX2, with AVX-512); None: the matmul is left as it is
        (13, 24, 32, False, ("both", None), 2.5),  # C filled with 2.5: each part's rows too
        (60, 48, 32, False, ("both", None), 0.0),  # A in strips, B in panels, one block
        (64, 48, 32, False, ("both", None), 0.0),  # 10 strips of 6 rows, then one of 4
        (136, 36, 272, False, ("both", None), 0.0),  # partial blocks; K % 8 != 0
        (64, 48, 32, True, ("both", None), 0.0),  # A stored (k, m)
        (67, 40, 48, False, ("both", None), 0.0),  # a strip of 1 row left
        (65, 40, 48, True, ("both", None), 0.0),  # a strip of 5 rows left, A stored (k, m)
        (4, 8, 32, False, ("rhs", None), 0.0),  # M below the strip height: B in panels only
        (520, 600, 16, False, ("both", None), 0.0),  # K above k-block-strips (512)
        (100, 600, 96, False, ("both", None), 0.0),  # K above k-block; 8x32 tiles and an edge
        (70, 33, 160, True, ("both", None), 0.0),  # N % 64 != 0: left as it is with AVX-512
        (30, 40, 64, False, ("both", "rhs"), 2.5),  # one panel of 64; 2 rows left by 4x64 tiles
        (100, 1100, 128, False, ("both", "rhs"), 0.0),  # K 1100: one k loop in each 4x64 tile
        (70, 33, 192, True, ("both", "rhs"), 0.0),  # A stored (k, m); a partial block of panels
        (261, 17, 320, False, ("both", "rhs"), 0.0),  # partial blocks of 128 rows; 1 row left
    ],
)
@pytest.mark.parametrize("cpu", [NARROW, WIDE], ids=["avx2", "avx512f"])
def test_packed_matmuls_match_numpy(m, k, n, a_k_major, packed, init, cpu, tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", cpu)
    ir = _matmul(m, k, n, a_k_major, init)
    run = run_stages(ir, catalog_for([]).get(PIPELINE), stop_after="pack-panels")
    want_packed = packed[cpu == WIDE]
    if want_packed is None:
        assert "linalg.pack" not in run.snapshots[-1].ir
    else:
        assert f'mlirpipe.packed = "{want_packed}"' in run.snapshots[-1].ir

    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((k, m) if a_k_major else (m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)

    got = checker.compile(ir, a, b, pipeline=PIPELINE)(a, b)

    want = (a.T if a_k_major else a) @ b + init
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(("m", "k", "n"), [(1, 24, 64), (13, 40, 128)])
@pytest.mark.parametrize("cpu", [NARROW, WIDE], ids=["avx2", "avx512f"])
def test_constant_weights_packed_at_compile_time_match_numpy(m, k, n, cpu, tmp_path, monkeypatch):
    """A linear layer's weight (n, k), a constant transposed before the matmul: its panels are a
    constant of the compiled code, no linalg.pack left; the product still matches numpy."""
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", cpu)
    rng = np.random.default_rng(m + n + k)
    w = rng.standard_normal((n, k), dtype=np.float32)
    ir = f"""\
func.func @forward(%a: tensor<{m}x{k}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<"0x{w.tobytes().hex()}"> : tensor<{n}x{k}xf32>
  %et = tensor.empty() : tensor<{k}x{n}xf32>
  %t = linalg.transpose ins(%w : tensor<{n}x{k}xf32>) outs(%et : tensor<{k}x{n}xf32>)
    permutation = [1, 0]
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul ins(%a, %t : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>)
    outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""
    run = run_stages(ir, catalog_for([]).get(PIPELINE), stop_after="pack-panels")
    width = 64 if cpu == WIDE else 16
    panels = f"tensor<{n // width}x{k}x{width}xf32>"
    assert f"-> {panels}" not in run.snapshots[-1].ir  # no linalg.pack into panels
    assert f"dense_resource<mlirpipe_panels_{width}> : {panels}" in run.snapshots[-1].ir
    a = rng.standard_normal((m, k), dtype=np.float32)
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)

    got = checker.compile(ir, a, pipeline=PIPELINE)(a)

    np.testing.assert_allclose(got, a @ w.T, rtol=1e-4, atol=1e-3)
