"""Elementwise ops with a splat constant input (a tensor of one value, which fuse-elementwise
reads as a scalar constant in the op's body instead), through refbackend-vectorized and
refbackend-dps: the results match torch for floats, integers and booleans (fuse-elementwise.mlir
shows the IR)."""

from __future__ import annotations

import pytest

from pytest_mlirpipe import ExecutionVerdict
from pytest_mlirpipe.execution.check import ModelChecker

torch = pytest.importorskip("torch")
nn = torch.nn


class WhereHalf(nn.Module):
    """where(x > 0, x, 0.5) with the 0.5 a full tensor (as a softmax's where(mask, 0, p))."""

    def forward(self, x):
        return torch.where(x > 0, x, torch.full_like(x, 0.5))


class WhereInt(nn.Module):
    """Integers: where(x > 0, x, 7) on int64, then widened to float."""

    def forward(self, x):
        n = (x * 10).to(torch.int64)
        return torch.where(n > 0, n, torch.full_like(n, 7)).to(torch.float32)


class AndTrue(nn.Module):
    """Booleans: a mask and a full tensor of True."""

    def forward(self, x):
        mask = x > 0
        return torch.where(mask & torch.ones_like(mask), x, -x)


@pytest.mark.parametrize("model", [WhereHalf, WhereInt, AndTrue], ids=["f32", "i64", "i1"])
@pytest.mark.parametrize("pipeline", ["refbackend-vectorized", "refbackend-dps"])
def test_splat_inputs_match_torch(model, pipeline, tmp_path):
    x = torch.randn(2, 3, 16, 70, generator=torch.Generator().manual_seed(3))
    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)
    (outcome,) = checker.check(model(), x, pipelines=[pipeline])
    assert outcome.verdict is ExecutionVerdict.PASS
