"""Transposes between NCHW and NHWC, the ones tile-transposes cuts into tiles of 8 x 8 and
tile-and-vectorize vectorizes when a tile's shape is static and its elements are bytes or
wider, through refbackend-vectorized as on a CPU with AVX2 and with AVX-512: the results match
torch, for tiles of f32 whole and partial (channels and columns not multiples of 8) and for
tiles of booleans (a vector of i1 is stored as bits: such a tile stays a loop nest)."""

from __future__ import annotations

import pytest

from pytest_mlirpipe import ExecutionVerdict
from pytest_mlirpipe.execution.check import ModelChecker

torch = pytest.importorskip("torch")
nn = torch.nn

PIPELINE = "refbackend-vectorized"


class ToNhwcAndBack(nn.Module):
    """An image to NHWC and the result of an elementwise op on it back to NCHW."""

    def forward(self, x):
        y = x.permute(0, 2, 3, 1).contiguous() * 2.0 + 1.0
        return y.permute(0, 3, 1, 2).contiguous()


class BoolToNhwc(nn.Module):
    """A boolean image to NHWC, selected into floats."""

    def forward(self, x):
        return torch.where((x > 0).permute(0, 2, 3, 1), 1.0, -1.0)


@pytest.mark.parametrize(
    ("model", "shape"),
    [
        (ToNhwcAndBack, (2, 16, 3, 16)),  # whole tiles
        (ToNhwcAndBack, (1, 12, 5, 7)),  # 12 channels, 7 columns: partial tiles
        (BoolToNhwc, (1, 16, 8, 8)),  # i1 tiles
        (BoolToNhwc, (1, 12, 3, 10)),  # i1, partial
    ],
    ids=["f32-whole", "f32-partial", "i1-whole", "i1-partial"],
)
@pytest.mark.parametrize("cpu", ["avx2,fma", "avx2,fma,avx512f"], ids=["avx2", "avx512f"])
def test_transpose_tiles_match_torch(model, shape, cpu, tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", cpu)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)
    (outcome,) = checker.check(model(), x, pipelines=[PIPELINE])
    assert outcome.verdict is ExecutionVerdict.PASS
