"""Padded convolutions and poolings whose padding's fill fill-borders writes on the border only
(the image's transpose to NHWC, or the previous layer's epilogue, writing the interior), through
refbackend-vectorized as on a CPU with AVX2 and with AVX-512: the results match torch, for
paddings of 1 and 2, asymmetric ones, an epilogue written into the next padding, a max
pooling's padding of -inf, and a max pooling (its result started as a fill of -inf) written into
the next convolution's padding."""

from __future__ import annotations

import pytest

from pytest_mlirpipe import ExecutionVerdict

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


class Depthwise(nn.Module):
    """A depthwise 3x3 with bias and its padding of 1, then a ReLU."""

    def __init__(self, c: int = 16) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(c, c, 3, 1, 1, groups=c)

    def forward(self, x):
        return torch.relu(self.conv(x))


class TwoConvs(nn.Module):
    """A 5x5 by 2 with a padding of 2, a ReLU written into the padding of a 3x3 after it."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.a = nn.Conv2d(c, 16, 5, 2, 2)
        self.b = nn.Conv2d(16, 16, 3, 1, 1, bias=False)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class Asymmetric(nn.Module):
    """A padding of 1 on the left and top, 2 on the right and 0 at the bottom, then a 3x3."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.conv = nn.Conv2d(c, 16, 3)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 2, 1, 0)))


class PoolPadded(nn.Module):
    """A 1x1 convolution then a 3x3 max pooling by 2 with a padding of 1 (of -inf)."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.conv = nn.Conv2d(c, 16, 1)

    def forward(self, x):
        return F.max_pool2d(self.conv(x) - 5.0, 3, 2, 1)


class PoolThenConv(nn.Module):
    """ResNet's stem after its first convolution: a 3x3 max pooling by 2 (padding 1) whose
    result, started as a fill of -inf, is written into the padding of a 3x3 convolution."""

    def __init__(self, c: int = 8) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.a = nn.Conv2d(c, 16, 1)
        self.b = nn.Conv2d(16, 16, 3, 1, 1)

    def forward(self, x):
        return self.b(F.max_pool2d(torch.relu(self.a(x)), 3, 2, 1))


@pytest.mark.parametrize(
    ("model", "shape"),
    [
        (Depthwise, (2, 16, 10, 9)),
        (TwoConvs, (1, 8, 13, 12)),
        (Asymmetric, (2, 8, 7, 6)),
        (PoolPadded, (1, 8, 11, 10)),
        (PoolThenConv, (2, 8, 12, 11)),
    ],
    ids=["depthwise", "epilogue-into-padding", "asymmetric", "max-pool", "pool-into-padding"],
)
@pytest.mark.parametrize("cpu", ["avx2,fma", "avx2,fma,avx512f"], ids=["avx2", "avx512f"])
def test_fill_borders_match_torch(model, shape, cpu, verdict_on_cpu):
    assert verdict_on_cpu(model(), shape, cpu) is ExecutionVerdict.PASS
