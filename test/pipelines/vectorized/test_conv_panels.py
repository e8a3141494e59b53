"""Convolutions whose constant filter mlirpipe-conv-to-nhwc cuts into panels of the register
tile's width (1 MiB or more of filter, output channels a multiple of the width), run through
refbackend-vectorized as on a CPU with AVX2 (panels of 16) and with AVX-512 (panels of 32),
whatever this host has: each panel's convolution writes its channels of the result, with its
share of the bias, and the whole matches torch."""

from __future__ import annotations

import pytest

from pytest_mlirpipe import ExecutionVerdict
from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stages import run_stages

torch = pytest.importorskip("torch")
nn = torch.nn

PIPELINE = "refbackend-vectorized"
NARROW, WIDE = "avx2,fma", "avx2,fma,avx512f"


class ConvBnRelu(nn.Module):
    """A convolution, then (when asked) a batch norm and ReLU: its epilogue."""

    def __init__(self, conv: nn.Conv2d, epilogue: bool) -> None:
        super().__init__()
        self.conv = conv
        self.bn = nn.BatchNorm2d(conv.out_channels) if epilogue else None

    def forward(self, x):
        y = self.conv(x)
        return torch.relu(self.bn(y)) if self.bn is not None else y


@pytest.mark.parametrize(
    ("conv", "epilogue", "image", "filters"),
    [
        # (in, out, kernel, stride, padding, dilation, bias); filters: convolutions, AVX2 / AVX-512
        ((128, 256, 3, 1, 1, 1, True), False, (2, 7, 7), (16, 8)),  # 1.2 MB, a bias per panel
        ((256, 128, 5, 2, 2, 1, False), True, (1, 9, 9), (8, 4)),  # 3.3 MB, by 2, an epilogue
        ((64, 512, 3, 1, 0, 1, True), True, (1, 5, 5), (32, 16)),  # 1.2 MB, no padding
        ((128, 96, 5, 1, 2, 1, True), False, (1, 6, 6), (6, 3)),  # 1.2 MB, 96 = 3 panels of 32
        ((128, 256, 3, 1, 2, 2, True), False, (1, 9, 9), (16, 8)),  # dilated by 2
        ((64, 64, 3, 1, 1, 1, True), False, (1, 6, 6), (1, 1)),  # 147 KB: one convolution
        ((256, 136, 3, 1, 1, 1, False), False, (1, 4, 4), (1, 1)),  # 136 % 16 != 0: one too
    ],
    ids=[
        "bias",
        "by-2-epilogue",
        "no-padding",
        "three-wide-panels",
        "dilated",
        "small",
        "not-a-multiple",
    ],
)
@pytest.mark.parametrize("cpu", [NARROW, WIDE], ids=["avx2", "avx512f"])
def test_convolutions_in_filter_panels_match_torch(
    conv, epilogue, image, filters, cpu, tmp_path, monkeypatch
):
    from pytest_mlirpipe.execution.frontends import import_torch

    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", cpu)
    torch.manual_seed(sum(conv[:5]))
    c_in, c_out, kernel, stride, padding, dilation, bias = conv
    conv2d = nn.Conv2d(c_in, c_out, kernel, stride, padding, dilation=dilation, bias=bias)
    model = ConvBnRelu(conv2d, epilogue)
    model.eval()
    x = torch.randn(image[0], c_in, *image[1:])

    source = import_torch(model, [x], "linalg")
    run = run_stages(source, catalog_for([]).get(PIPELINE), stop_after="conv-to-nhwc")
    assert run.snapshots[-1].ir.count("linalg.conv_2d_nhwc_hwcf") == filters[cpu == WIDE]

    checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)
    (outcome,) = checker.check(model, x, pipelines=[PIPELINE])
    assert outcome.verdict is ExecutionVerdict.PASS
