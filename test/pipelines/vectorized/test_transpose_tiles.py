"""Transposes between NCHW and NHWC and of the last two dimensions, the ones tile-transposes
cuts into tiles of 8 x 8 and tile-and-vectorize vectorizes when a tile's shape is static and
its elements are bytes or wider, and the transposes that keep their last dimension (vectorized
by rows of it), through refbackend-vectorized as on a CPU with AVX2 and with AVX-512: the
results match torch, for tiles of f32 whole and partial (channels and columns not multiples of
8, rows not multiples of 64) and for booleans (a vector of i1 is stored as bits: such a tile
stays a loop nest)."""

from __future__ import annotations

import pytest

from pytest_mlirpipe import ExecutionVerdict

torch = pytest.importorskip("torch")
nn = torch.nn


class ToNhwcAndBack(nn.Module):
    """An image to NHWC and the result of an elementwise op on it back to NCHW."""

    def forward(self, x):
        y = x.permute(0, 2, 3, 1).contiguous() * 2.0 + 1.0
        return y.permute(0, 3, 1, 2).contiguous()


class BoolToNhwc(nn.Module):
    """A boolean image to NHWC, selected into floats."""

    def forward(self, x):
        return torch.where((x > 0).permute(0, 2, 3, 1), 1.0, -1.0)


class KeysTransposed(nn.Module):
    """An attention's keys transposed (the last two dimensions swapped), scaled."""

    def forward(self, k):
        return k.transpose(-2, -1) * 0.125


class SplitHeads(nn.Module):
    """A projection of width 3 x W on (sequence, batch) split into q, k and v of `heads` heads
    (as torch's multi-head attention does: a transpose of rank 5 that keeps the last dimension),
    the heads combined and merged back to (batch, sequence, width)."""

    heads = 2

    def forward(self, x):
        length, batch, width3 = x.shape
        q, k, v = x.unflatten(-1, (3, width3 // 3)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        per_head = [t.reshape(length, batch * self.heads, -1).transpose(0, 1) for t in (q, k, v)]
        mixed = per_head[0] * per_head[1] + per_head[2]
        merged = mixed.view(batch, self.heads, length, -1).permute(2, 0, 1, 3)
        return merged.reshape(length, batch, -1).transpose(0, 1)


class BoolRows(nn.Module):
    """Booleans with their first two dimensions swapped (the last one kept), selected."""

    def forward(self, x):
        return torch.where((x > 0).transpose(0, 1), 1.0, -1.0)


@pytest.mark.parametrize(
    ("model", "shape"),
    [
        (ToNhwcAndBack, (2, 16, 3, 16)),  # whole tiles
        (ToNhwcAndBack, (1, 12, 5, 7)),  # 12 channels, 7 columns: partial tiles
        (BoolToNhwc, (1, 16, 8, 8)),  # i1 tiles
        (BoolToNhwc, (1, 12, 3, 10)),  # i1, partial
        (KeysTransposed, (2, 3, 16, 24)),  # whole tiles
        (KeysTransposed, (2, 3, 20, 13)),  # partial tiles
        (SplitHeads, (5, 3, 3 * 192)),  # heads of 96: rows of 64 and 32
        (SplitHeads, (4, 2, 3 * 40)),  # heads of 20: one partial row each
        (BoolRows, (4, 3, 80)),  # i1 rows
    ],
    ids=[
        "f32-whole",
        "f32-partial",
        "i1-whole",
        "i1-partial",
        "keys-whole",
        "keys-partial",
        "heads-96",
        "heads-20",
        "i1-rows",
    ],
)
@pytest.mark.parametrize("cpu", ["avx2,fma", "avx2,fma,avx512f"], ids=["avx2", "avx512f"])
def test_transpose_tiles_match_torch(model, shape, cpu, verdict_on_cpu):
    assert verdict_on_cpu(model(), shape, cpu) is ExecutionVerdict.PASS
