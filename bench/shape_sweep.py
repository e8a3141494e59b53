"""bench/models.py --sweep: the shapes it times, how they are picked, and the plot of the ratios.

Two families of blocks, each point a block on one input shape:

- conv: a k x k convolution of C channels (groups 1 or C, stride 1 or 2, padding k // 2, with
  or without bias) and ReLU, then a pointwise 1x1 convolution C -> 2C with the same bias
  choice and ReLU, on a batch x C x HW x HW image: with groups C it is MobileNet's separable
  pair. Axes: C {16, 24, 32, 48, 64, 96, 128, 256}, HW {7, 14, 28, 56, 112}, k {1, 3, 5},
  stride {1, 2}, bias {yes, no}, groups {1, C}, batch {1, 8}.
- matmul: a transformer's feed-forward, Linear(W, 4W), GELU (erf), Linear(4W, W), on a batch x
  S x W input. Axes: W {64, 128, 256, 512, 768}, S {32, 128, 512}, batch {1, 8}.

The cross product (3,840 + 30 points, times 2 thread counts) is far too big. The sweep takes
each family's base point (conv: C 32, HW 56, 3x3, stride 1, bias, depthwise, batch 8, the
shape first reported 24.5x torch; matmul: W 256, S 128, batch 8), then every point that
differs from it on one axis only (each axis varied around the base: 18 conv and 8 matmul
points in all), then points drawn at random from the whole cross product with a fixed seed
(random.Random(38)), 12 conv and 4 matmul, skipping repeats and points above 10 GFLOP a call
(a 256-channel dense 5x5 at 112x112 on 8 images is 420 GFLOP: seconds a call on this
machine). Last, four projections, whose pointwise convolution has fewer output channels than
its input (MobileNetV2's inverted residuals at 56x56, 144 -> 24 channels, at batch 1 and 8;
96 -> 24 after a depthwise 3x3 by 2 at 112x112; 64 -> 12 at 28x28): the axes above only ever
double the channels, and an output of 24 channels was the sweep's blind spot (register tiles
of 32 channels left one of 24). The same 46 points every run. `--quick` takes 4 of them: the
conv base, the base at batch 1, the base with a dense convolution at batch 1, and the matmul
base at batch 1.
`--small` shrinks every point (C 4, HW at most 8, W 16, S 8) to check the machinery only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from workloads import Workload

CHANNELS = (16, 24, 32, 48, 64, 96, 128, 256)
SPATIAL = (7, 14, 28, 56, 112)
KERNELS = (1, 3, 5)
STRIDES = (1, 2)
BIASES = (True, False)
DEPTHWISE = (True, False)  # groups C or 1
BATCHES = (1, 8)
WIDTHS = (64, 128, 256, 512, 768)
SEQUENCES = (32, 128, 512)
SEED = 38
RANDOM_CONV, RANDOM_MATMUL = 12, 4
MAX_GFLOP = 10.0  # random points above this a call are skipped


@dataclass(frozen=True, slots=True)
class ConvPoint:
    channels: int = 32
    hw: int = 56
    kernel: int = 3
    stride: int = 1
    bias: bool = True
    depthwise: bool = True
    batch: int = 8
    out_channels: int = 0  # of the pointwise convolution; 0: twice `channels`

    @property
    def pointwise(self) -> int:
        return self.out_channels or 2 * self.channels

    @property
    def label(self) -> str:
        kind = "dw" if self.depthwise else "conv"
        bias = "+b" if self.bias else ""
        to = f"->{self.out_channels}" if self.out_channels else ""
        return (
            f"{kind}{self.kernel}x{self.kernel}/{self.stride}{bias} c{self.channels}{to} "
            f"{self.hw}x{self.hw} b{self.batch}"
        )

    @property
    def gflop(self) -> float:
        out = -(-self.hw // self.stride)
        per_out = self.kernel**2 * (1 if self.depthwise else self.channels) + self.pointwise
        return 2.0 * self.batch * self.channels * per_out * out * out / 1e9


@dataclass(frozen=True, slots=True)
class MatmulPoint:
    width: int = 256
    sequence: int = 128
    batch: int = 8

    @property
    def label(self) -> str:
        return f"ffn w{self.width} s{self.sequence} b{self.batch}"

    @property
    def gflop(self) -> float:
        return 2.0 * self.batch * self.sequence * 8 * self.width**2 / 1e9


CONV_AXES = {
    "channels": CHANNELS,
    "hw": SPATIAL,
    "kernel": KERNELS,
    "stride": STRIDES,
    "bias": BIASES,
    "depthwise": DEPTHWISE,
    "batch": BATCHES,
}
MATMUL_AXES = {"width": WIDTHS, "sequence": SEQUENCES, "batch": BATCHES}
# Blocks that project to fewer channels (see the module's docstring).
PROJECTIONS = (
    ConvPoint(channels=144, out_channels=24, bias=False, batch=1),
    ConvPoint(channels=144, out_channels=24, bias=False),
    ConvPoint(channels=96, out_channels=24, hw=112, stride=2, bias=False, batch=1),
    ConvPoint(channels=64, out_channels=12, hw=28, bias=False),
)


def sweep_points(quick: bool) -> list[ConvPoint | MatmulPoint]:
    """The points of the sweep, in a fixed order (see the module's docstring)."""
    conv, matmul = ConvPoint(), MatmulPoint()
    if quick:
        return [
            conv,
            replace(conv, batch=1),
            replace(conv, depthwise=False, batch=1),
            replace(matmul, batch=1),
        ]
    rng = random.Random(SEED)
    points: list[ConvPoint | MatmulPoint] = []
    for base, axes, extra in ((conv, CONV_AXES, RANDOM_CONV), (matmul, MATMUL_AXES, RANDOM_MATMUL)):
        family = [base] + [
            replace(base, **{axis: v})
            for axis, values in axes.items()
            for v in values
            if v != getattr(base, axis)
        ]
        drawn = 0
        while drawn < extra:
            p = type(base)(**{axis: rng.choice(values) for axis, values in axes.items()})
            if p not in family and p.gflop <= MAX_GFLOP:
                family.append(p)
                drawn += 1
        points += family
    return points + list(PROJECTIONS)


def point_workload(point: ConvPoint | MatmulPoint, small: bool) -> Workload:
    """The block of `point` with seeded weights and input (shrunk with `small`)."""
    import torch

    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(38)
    if isinstance(point, MatmulPoint):
        p = replace(point, width=16, sequence=8) if small else point
        model = _feed_forward(p.width)
        x = torch.randn(p.batch, p.sequence, p.width, generator=gen)
        return Workload(p.label, model, [x], p.gflop * 1e9)
    p = replace(point, channels=4, hw=min(point.hw, 8), out_channels=0) if small else point
    x = torch.randn(p.batch, p.channels, p.hw, p.hw, generator=gen)
    return Workload(p.label, _conv_block(p), [x], p.gflop * 1e9)


def _conv_block(p: ConvPoint):
    from torch import nn

    c = p.channels
    groups = c if p.depthwise else 1
    return nn.Sequential(
        nn.Conv2d(c, c, p.kernel, p.stride, p.kernel // 2, groups=groups, bias=p.bias),
        nn.ReLU(),
        nn.Conv2d(c, p.pointwise, 1, bias=p.bias),
        nn.ReLU(),
    ).eval()


def _feed_forward(width: int):
    from torch import nn

    return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)).eval()


def loops_hint(w: Workload, pipeline: str) -> str:
    """Where the time may go: the linalg ops `pipeline`'s tile-and-vectorize leaves (each
    becomes a scalar loop nest), by kind and result shape, e.g. 'broadcast 8x32x56x56'."""
    import re
    from collections import Counter

    from pytest_mlirpipe.execution.frontends import import_torch
    from pytest_mlirpipe.lowering.catalog import catalog_for
    from pytest_mlirpipe.lowering.stages import run_stages

    run = run_stages(import_torch(w.model, w.inputs, "linalg"), catalog_for([]).get(pipeline))
    ir = next((s.ir for s in run.snapshots if s.stage == "tile-and-vectorize"), None)
    if ir is None:
        return f"(no tile-and-vectorize stage in {pipeline})"
    left = Counter(
        f"{op} {shape}"
        for op, shape in re.findall(r"linalg\.(\w+) .*?outs\([^:]*: tensor<([\dx?]+)x", ir)
    )
    if not left:
        return "no linalg op left as a loop"
    return "loops: " + ", ".join(f"{k}" + (f" (x{n})" if n > 1 else "") for k, n in left.items())


def write_svg(path, bars: list[tuple[str, float]]) -> None:
    """A bar per (label, ratio to torch), worst first, on a log2 scale with a line at 1x."""
    import math
    from html import escape

    bars = sorted(bars, key=lambda b: -b[1])
    lo = min(-3.0, math.floor(math.log2(min(r for _, r in bars))))
    hi = max(1.0, math.ceil(math.log2(max(r for _, r in bars))))
    left, width, row = 260, 460, 14
    height = row * len(bars) + 50

    def x(ratio: float) -> float:
        return left + width * (math.log2(ratio) - lo) / (hi - lo)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" '
        f'height="{height}" font-family="sans-serif" font-size="10">',
        f'<text x="{left}" y="12">time / torch eager time (log scale); below 1 is faster</text>',
    ]
    for i, (label, ratio) in enumerate(bars):
        y = 22 + i * row
        colour = "#c0392b" if ratio > 1 else "#2e86c1"
        x0, x1 = sorted((x(1.0), x(ratio)))
        out.append(f'<text x="{left - 4}" y="{y + 10}" text-anchor="end">{escape(label)}</text>')
        out.append(
            f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 1):.1f}" '
            f'height="{row - 4}" fill="{colour}"/>'
        )
        out.append(f'<text x="{max(x1, x(1.0)) + 3:.1f}" y="{y + 10}">{ratio:.2f}</text>')
    bottom = 22 + len(bars) * row
    for e in range(int(lo), int(hi) + 1):
        out.append(
            f'<line x1="{x(2.0**e):.1f}" y1="20" x2="{x(2.0**e):.1f}" y2="{bottom}" '
            f'stroke="{"#000" if e == 0 else "#ccc"}"/>'
        )
        out.append(
            f'<text x="{x(2.0**e):.1f}" y="{bottom + 12}" text-anchor="middle">{2.0**e:g}x</text>'
        )
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
