"""The execution case library: small models, their example inputs and their pipelines."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

# Every case runs under these; TOSA-expressible cases add `tosa`.
BASE = ("refbackend", "refbackend-dps", "refbackend-vectorized")
WITH_TOSA = (*BASE, "tosa")
# Cases with a matmul also run with their matmuls as BLAS calls (each base pipeline's -blas
# twin) and, from TOSA, tiled and vectorized by MLIR alone (refbackend-vectorized is in BASE).
MATMUL_TWINS = {
    "refbackend": ("refbackend-blas",),
    "refbackend-dps": ("refbackend-dps-blas",),
    "tosa": ("tosa-blas", "tosa-vectorized"),
    "onnx-linalg": ("onnx-linalg-blas",),
}


def with_matmul_twins(pipelines: tuple[str, ...]) -> tuple[str, ...]:
    """`pipelines` followed by the twins of each that lower matmuls another way."""
    return (*pipelines, *(t for p in pipelines for t in MATMUL_TWINS.get(p, ())))


def is_blas(pipeline: str) -> bool:
    return pipeline.endswith("-blas")


# BLAS pipelines run when scipy-openblas32 (the default BLAS library) is installed.
HAS_OPENBLAS = importlib.util.find_spec("scipy_openblas32") is not None
NO_OPENBLAS = "scipy-openblas32 is not installed (pip install scipy-openblas32)"


def rss_kib() -> int:
    """This process's resident memory, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


@dataclass(frozen=True)
class Case:
    """A model factory, its inputs (seeded), the pipelines, FLOPs when known, tolerances."""

    name: str
    model: Callable[[], Any]
    inputs: Callable[[torch.Generator], list[Any]]
    pipelines: tuple[str, ...] = WITH_TOSA
    flops: float | None = None
    rtol: float | None = None
    atol: float | None = None
    xfail: Mapping[str, str] = field(default_factory=dict)  # pipeline -> why it fails
    # import options (check()'s keywords): ops torch-mlir keeps whole, decompositions to run
    backend_legal_ops: tuple[str, ...] = ()
    decompositions: tuple[str, ...] | None = None
    # pipeline -> how the case ends where it cannot pass (stand-ins of models from real suites)
    ends: Mapping[str, Ending] = field(default_factory=dict)


@dataclass(frozen=True)
class Ending:
    """The verdict a case must end in through a pipeline, text its error must hold, and who
    refused it and at which stage (torch or the compiler) when it is a refusal."""

    verdict: str
    message: str
    refusal: tuple[str, str] | None = None


def randn(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[torch.Generator], Any]:
    return lambda g: torch.randn(shape, generator=g, dtype=dtype)


def inputs(*makers: Callable[[torch.Generator], Any]) -> Callable[[torch.Generator], list[Any]]:
    return lambda g: [m(g) for m in makers]


def randint(*shape: int, dtype: torch.dtype = torch.int64) -> Callable[[torch.Generator], Any]:
    return lambda g: torch.randint(-10, 10, shape, generator=g, dtype=dtype)


def randbool(*shape: int) -> Callable[[torch.Generator], Any]:
    return lambda g: torch.randint(0, 2, shape, generator=g).to(torch.bool)


def seeded(module: nn.Module) -> nn.Module:
    return module.eval()


class MatmulOnes(nn.Module):
    """The seed case: a 2x2 matmul with a constant of ones."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, torch.ones(2, 2))


class Add(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


class Addmm(nn.Module):
    def forward(self, bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addmm(bias, a, b)


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return seeded(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)))


def linear() -> nn.Module:
    torch.manual_seed(1)
    return seeded(nn.Linear(16, 8))


class Bmm(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def conv2d() -> nn.Module:
    torch.manual_seed(2)
    return seeded(nn.Conv2d(3, 4, kernel_size=3, padding=1))


def conv2d_depthwise() -> nn.Module:
    torch.manual_seed(2)
    return seeded(nn.Conv2d(8, 8, kernel_size=3, padding=1, groups=8))


def conv2d_pointwise() -> nn.Module:
    torch.manual_seed(2)
    return seeded(nn.Conv2d(8, 16, kernel_size=1, bias=False))


def conv2d_strided() -> nn.Module:
    torch.manual_seed(2)
    return seeded(nn.Conv2d(5, 6, kernel_size=3, stride=2, padding=(1, 2)))


def conv2d_dilated() -> nn.Module:
    torch.manual_seed(2)
    return seeded(nn.Conv2d(4, 6, kernel_size=(3, 2), dilation=(2, 3), padding=(2, 1)))


def separable_bias_block() -> nn.Module:
    """Depthwise conv3x3 with bias, ReLU, pointwise conv1x1 with bias, ReLU: the sweep's worst
    shape family (bench/shape_sweep.py), its biases fused into the convolutions' blocks."""
    torch.manual_seed(2)
    return seeded(
        nn.Sequential(
            nn.Conv2d(48, 48, kernel_size=3, padding=1, groups=48),
            nn.ReLU(),
            nn.Conv2d(48, 80, kernel_size=1),
            nn.ReLU(),
        )
    )


def conv2d_narrow_channels() -> nn.Module:
    """A convolution with a bias to 24 output channels: with AVX-512 its register tiles are
    narrower than 32 channels (a tile of 24 was vectors LLVM splits)."""
    torch.manual_seed(2)
    return seeded(nn.Conv2d(16, 24, kernel_size=3, padding=1))


def narrow_separable_block() -> nn.Module:
    """MobileNet's block on 24 channels to 56 (32 and 24 left): the depthwise convolution's
    tiles of 16 and 8 channels, the pointwise one's narrow tiles with its batch norm and ReLU
    computed in its blocks."""
    return DepthwiseSeparableBlock(24, 56)


def conv2d_depthwise_strided() -> nn.Module:
    torch.manual_seed(2)
    return seeded(nn.Conv2d(16, 16, kernel_size=3, stride=2, groups=16, bias=False))


def layernorm_wide() -> nn.Module:
    torch.manual_seed(3)
    return seeded(nn.LayerNorm(100))


class Softmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


class ExpRange(nn.Module):
    """exp over the whole range of f32: overflow, subnormal results, infinities and NaN."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ends = [88.72, 88.7228, 88.73, -87.3, -87.34, -100.0, -103.9, -104.0, 0.0, -0.0, 0.3466]
        special = torch.tensor([math.inf, -math.inf, math.nan, *ends])
        return torch.exp(torch.cat([x.flatten() * 40.0, special]))


class GeluRange(nn.Module):
    """tanh and erf over -12 ... 12, infinities, zeros and NaN, and GELU with each over the
    finite values: the tanh GELU written out and as torch's own op (torch-mlir's lowering of
    `gelu(x, approximate="tanh")` multiplies by 0.797724, not sqrt(2 / pi) = 0.7978846, and was
    off by up to 5e-5 in every pipeline until the import decomposed it)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.flatten() * 4.0
        ends = [0.625, -0.625, 0.6266, 1.0, -1.0, 3.92, 4.0, 9.0, 10.0, 0.0, -0.0, 1e-30]
        special = torch.tensor([math.inf, -math.inf, math.nan, *ends])
        y = torch.cat([x, special])
        tanh_gelu = 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
        gelus = [nn.functional.gelu(x), tanh_gelu, nn.functional.gelu(x, approximate="tanh")]
        return torch.cat([torch.tanh(y), torch.erf(y), *gelus])


class LogRange(nn.Module):
    """A log-softmax, and log over the whole range of f32: subnormals, 0, negative numbers,
    infinities and NaN."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ends = [3.4e38, 1.17e-38, 1e-40, 1e-45, 0.0, -0.0, -1.0, 0.70710677, 1.0, 2.0]
        special = torch.tensor([math.inf, -math.inf, math.nan, *ends])
        y = torch.cat([torch.exp(x.flatten() * 20.0), special])
        return torch.cat([torch.log_softmax(x * 4.0, dim=-1).flatten(), torch.log(y)])


class SafeSoftmax(nn.Module):
    """A softmax whose rows that are all -inf give 0 (as torch's attention computes it): a
    compare, all() of each row and a select, on tensors of bools."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.cat([torch.full_like(x[:1], -math.inf), x[1:]])
        empty = torch.isneginf(x).all(dim=-1, keepdim=True)
        return torch.where(empty, 0.0, torch.softmax(x, dim=-1))


def layernorm() -> nn.Module:
    torch.manual_seed(3)
    return seeded(nn.LayerNorm(16))


class Attention(nn.Module):
    """One single-head self-attention block with a residual connection."""

    def __init__(self, dim: int = 16):
        super().__init__()
        torch.manual_seed(4)
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(self.q(x), self.k(x).transpose(-2, -1)) * self.scale
        return x + torch.matmul(torch.softmax(scores, dim=-1), self.v(x))


def with_running_stats(module: nn.Module, seed: int) -> nn.Module:
    """`module` in eval mode, its BatchNorms given seeded running statistics (a fresh
    BatchNorm's are the identity, which a folding or a lowering could get wrong unseen)."""
    gen = torch.Generator().manual_seed(seed)
    for bn in module.modules():
        if isinstance(bn, nn.BatchNorm2d):
            bn.running_mean.copy_(0.1 * torch.randn(bn.num_features, generator=gen))
            bn.running_var.copy_(0.5 + torch.rand(bn.num_features, generator=gen))
    return module.eval()


class ResNetBasicBlock(nn.Module):
    """ResNet's basic block: conv3x3-BN-ReLU-conv3x3-BN, the identity added, ReLU."""

    def __init__(self, channels: int = 4):
        super().__init__()
        torch.manual_seed(5)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        with_running_stats(self, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


class Poolings(nn.Module):
    """Max pooling (ResNet's, 3x3 by 2 with padding), average pooling with and without its
    padding counted, and adaptive average pooling to 1x1 (ResNet's and MobileNet's last)."""

    def forward(self, x: torch.Tensor):
        f = nn.functional
        return (
            f.max_pool2d(x, 3, 2, 1),
            f.max_pool2d(x, 2),
            f.avg_pool2d(x, 3, 2, 1),
            f.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
            f.adaptive_avg_pool2d(x, 1),
        )


class ResNetStem(nn.Module):
    """ResNet's stem: conv7x7 by 2-BN-ReLU, max pooling 3x3 by 2, then a conv3x3."""

    def __init__(self, channels: int = 6):
        super().__init__()
        torch.manual_seed(7)
        self.conv1 = nn.Conv2d(3, channels, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        with_running_stats(self, 7)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        return self.conv2(y)


class DepthwiseSeparableBlock(nn.Module):
    """MobileNet's block: depthwise conv3x3-BN-ReLU, then pointwise conv1x1-BN-ReLU."""

    def __init__(self, channels: int = 4, out_channels: int = 8):
        super().__init__()
        torch.manual_seed(6)
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pointwise = nn.Conv2d(channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        with_running_stats(self, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(y)))


def encoder_layer(width: int = 16, heads: int = 2, feed_forward: int = 32) -> nn.Module:
    """A pre-norm transformer encoder layer (batch first, no dropout), in eval mode."""
    torch.manual_seed(7)
    return seeded(
        nn.TransformerEncoderLayer(
            width, heads, feed_forward, dropout=0.0, batch_first=True, norm_first=True
        )
    )


class Reductions(nn.Module):
    """Several results: a sum over rows, a mean over columns, a max and a scalar total."""

    def forward(self, x: torch.Tensor):
        return x.sum(dim=0), x.mean(dim=1), x.amax(dim=1), x.sum()


class BroadcastChain(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.relu(a * b + c) * 2.0 - a


class IntegerOps(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
        return a * b + 3, torch.maximum(a, b), c * 2 - c.sum()


class BooleanOps(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, m: torch.Tensor):
        gt = x > y
        return (
            torch.logical_and(gt, m),
            torch.logical_or(gt, torch.logical_not(m)),
            torch.where(m, x, y),
        )


class Float64(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b) + 1.0


class Scalars(nn.Module):
    """A 0-d input and a 0-d result next to a tensor result."""

    def forward(self, x: torch.Tensor, s: torch.Tensor):
        return x * s, (x.sum() + s)


class ItemScale(nn.Module):
    """int() and .item() on a tensor: only torch.export's strict mode traces it."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return x * int(n) + n.item()


class NoResults(nn.Module):
    """Returns nothing: RefBackend calls a result callback without a type suffix."""

    def forward(self, x: torch.Tensor) -> tuple[()]:
        return ()


class WritesInputs(nn.Module):
    """Writes to two inputs and a buffer: each comes back as a result (after the call)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(3))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        y.mul_(2.0)
        self.calls.add_(1.0)
        x.add_(1.0)
        return x * y


class PrimsViewOf(nn.Module):
    """A prims op that torch cannot functionalize (as models of torch-mlir's e2e suite use)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.prims.view_of(x) * 2


class WhileLoopHOP(nn.Module):
    """A data-dependent while loop (torch's while_loop), as in torch-mlir's e2e suite."""

    def body_fn(self, i: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return i + 1, x + 1

    def cond_fn(self, i: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return i < 3

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        from torch._higher_order_ops.while_loop import while_loop

        return while_loop(self.cond_fn, self.body_fn, (torch.tensor(0), x))


class Multinomial(nn.Module):
    """torch-mlir's e2e MultinomialModule: 2**20 draws from 100 weights, their mean. torch-mlir
    writes each draw into the result tensor inside a loop of 2**20 iterations (tensor.insert
    in an scf.for), which runs in milliseconds only if that tensor is updated in place."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.multinomial(x, 1024 * 1024, replacement=True)
        return a.mean(dtype=torch.double)


class AdaptiveMaxPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.adaptive_max_pool2d(x, (2, 2))


class Gelu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x)


class IntAvgPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.avg_pool2d(x, 2)


class ScanSortTopk(nn.Module):
    """Ops torch-mlir lowers to its tm_tensor dialect (refbackend) or to tosa.scatter (tosa)."""

    def forward(self, x: torch.Tensor):
        values, indices = torch.topk(x, 2)
        return torch.cumsum(x, 0), torch.sort(x, dim=-1)[0], values, indices


class ComplexOps(nn.Module):
    """complex64 and complex128 in and out, and complex made from and taken apart into reals."""

    def forward(self, z: torch.Tensor, w: torch.Tensor, re: torch.Tensor, im: torch.Tensor):
        return z * z, w * w, torch.view_as_real(z), torch.complex(re, im)


class Complex32(nn.Module):
    """A complex32 result (complex<f16>, which numpy lacks): chalf()."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.chalf()


class Complex32In(nn.Module):
    """A complex32 input, taken apart into its float16 halves."""

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.view_as_real(z)


class ItemResults(nn.Module):
    """Python scalars out: a float (f64) and an int (i64) from .item(), next to a tensor."""

    def forward(self, x: torch.Tensor, n: torch.Tensor):
        return x * 2, x.sum().item(), n.sum().item()


class BoolItem(nn.Module):
    """A Python bool out (i1), from .item() of a boolean tensor."""

    def forward(self, x: torch.Tensor):
        return x * 2, (x > 0).all().item()


class Uint8Ops(nn.Module):
    """uint8 in and out: wrapping add, unsigned compare, unsigned to float."""

    def forward(self, a: torch.Tensor, b: torch.Tensor):
        return a + b, a > b, a.float() * 0.5, torch.maximum(a, b)


class HalfOps(nn.Module):
    """f16 and bf16 in and out, and each converted to f32."""

    def forward(self, h: torch.Tensor, b: torch.Tensor):
        return h * h + 1, b * b + 1, h.float() + b.float()


class Int64Division(nn.Module):
    """Every integer division and rounding mode of torch on int64: by a tensor (divisors of
    both signs, some dividing exactly) and by Python ints of both signs."""

    def forward(self, a: torch.Tensor, b: torch.Tensor):
        return (
            torch.div(a, b, rounding_mode="floor"),
            torch.div(a, b, rounding_mode="trunc"),
            torch.div(a, b),  # true division: float32
            torch.floor_divide(a, -b),
            torch.remainder(a, b),
            torch.div(a, 1073741824, rounding_mode="floor"),
            torch.div(a, -1073741824, rounding_mode="floor"),
            torch.div(a, -3, rounding_mode="trunc"),
            a // 7,
            torch.remainder(a, -1073741824),
            a % 7,
        )


# int64 dividends near 2**63 (beyond float64's 2**53, where a quotient through float64 is
# rounded), negative, exact multiples of their divisor, and small
INT64_EDGES = (
    2**63 - 2,
    -(2**63 - 1),
    2**63 - 1,
    -(2**63) + 2**30,
    2**30,
    3 * 2**30,
    -5 * 2**30,
    2**53 + 1,
    -3,
    0,
    7,
    -7,
)
INT64_DIVISORS = (2**30, -(2**30), 3, -7, 2**30, -(2**30), -1, 2**62, 5, -7, -7, 7)


def int64_edges(g: torch.Generator) -> list[Any]:
    return [torch.tensor(INT64_EDGES), torch.tensor(INT64_DIVISORS)]


def randcomplex(*shape: int, dtype: torch.dtype) -> Callable[[torch.Generator], Any]:
    return lambda g: torch.randn(shape, generator=g, dtype=dtype)


def randuint8(*shape: int) -> Callable[[torch.Generator], Any]:
    return lambda g: torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)


CASES: list[Case] = [
    Case(
        "matmul-ones-2x2",
        MatmulOnes,
        inputs(randn(2, 2)),
        pipelines=with_matmul_twins(WITH_TOSA),
        flops=2 * 2 * 2 * 2,
    ),
    Case("add-10", Add, inputs(randn(10), randn(10)), flops=10),
    Case(
        "addmm",
        Addmm,
        inputs(randn(4, 5), randn(4, 3), randn(3, 5)),
        pipelines=with_matmul_twins(WITH_TOSA),
        flops=2 * 4 * 3 * 5 + 20,
    ),
    Case(
        "mlp",
        mlp,
        inputs(randn(8, 32)),
        pipelines=with_matmul_twins(WITH_TOSA),
        flops=2 * 8 * (32 * 64 + 64 * 10),
    ),
    Case(
        "linear-bias",
        linear,
        inputs(randn(4, 16)),
        pipelines=with_matmul_twins(WITH_TOSA),
        flops=2 * 4 * 16 * 8,
    ),
    Case(
        "bmm",
        Bmm,
        inputs(randn(2, 4, 8), randn(2, 8, 3)),
        pipelines=with_matmul_twins(WITH_TOSA),
        flops=2 * 2 * 4 * 8 * 3,
    ),
    Case("conv2d", conv2d, inputs(randn(1, 3, 8, 8)), flops=2 * 4 * 8 * 8 * 3 * 9),
    # Each convolution refbackend-vectorized tiles and vectorizes (on NHWC images): groups equal
    # to the channels, 1x1, strided, dilated (rectangular filter, unequal padding), the output
    # columns not a multiple of a register tile's.
    Case("conv2d-depthwise", conv2d_depthwise, inputs(randn(1, 8, 9, 9)), pipelines=BASE),
    Case("conv2d-pointwise", conv2d_pointwise, inputs(randn(2, 8, 6, 7)), pipelines=BASE),
    Case("conv2d-strided", conv2d_strided, inputs(randn(1, 5, 11, 13)), pipelines=BASE),
    Case("conv2d-dilated", conv2d_dilated, inputs(randn(1, 4, 10, 9)), pipelines=BASE),
    # output rows no more than a block's (conv-rows): one block, its scf.forall folded away
    Case("conv2d-one-block", conv2d_pointwise, inputs(randn(1, 8, 3, 5)), pipelines=BASE),
    Case(
        "conv2d-depthwise-strided",
        conv2d_depthwise_strided,
        inputs(randn(1, 16, 12, 12)),
        pipelines=BASE,
    ),
    # biases on 8 images of 48 and 80 channels and 10 columns: register tiles partial in both
    # (a corner tile of 2 columns x 16 channels)
    Case("separable-bias", separable_bias_block, inputs(randn(8, 48, 10, 10)), pipelines=BASE),
    Case(
        "conv2d-narrow-channels",
        conv2d_narrow_channels,
        inputs(randn(2, 16, 9, 11)),
        pipelines=BASE,
    ),
    Case("separable-narrow", narrow_separable_block, inputs(randn(1, 24, 10, 12)), pipelines=BASE),
    Case("softmax", Softmax, inputs(randn(4, 16))),
    Case("layernorm", layernorm, inputs(randn(4, 16))),
    # refbackend-vectorized computes an f32 exp with a polynomial of its own
    Case("exp-range", ExpRange, inputs(randn(8, 64)), pipelines=BASE),
    # and tanh and erf (GELU's) too
    Case("gelu-range", GeluRange, inputs(randn(8, 64)), pipelines=BASE),
    # and log (a log-softmax's)
    Case("log-range", LogRange, inputs(randn(8, 64)), pipelines=BASE),
    Case("safe-softmax", SafeSoftmax, inputs(randn(3, 100)), pipelines=BASE),
    # rows of 100: refbackend-vectorized sums them in 64 lanes, the last 36 into the first lanes
    Case("layernorm-wide", layernorm_wide, inputs(randn(3, 100)), pipelines=BASE),
    Case("attention", Attention, inputs(randn(1, 6, 16)), pipelines=with_matmul_twins(WITH_TOSA)),
    Case(
        "resnet-basic-block",
        ResNetBasicBlock,
        inputs(randn(2, 4, 8, 8)),
        pipelines=(*WITH_TOSA, "tosa-vectorized"),
        flops=2 * 2 * (2 * 4 * 4 * 9 * 8 * 8),
    ),
    Case(
        "depthwise-separable-block",
        DepthwiseSeparableBlock,
        inputs(randn(2, 4, 8, 8)),
        pipelines=(*WITH_TOSA, "tosa-vectorized"),
        flops=2 * (2 * 4 * 9 * 8 * 8 + 2 * 4 * 8 * 8 * 8),
    ),
    # refbackend-vectorized makes poolings NHWC ones, vectorized along the channels
    # (from TOSA they are NHWC already: tosa-vectorized tiles them the same way)
    Case(
        "poolings", Poolings, inputs(randn(2, 5, 9, 11)), pipelines=(*WITH_TOSA, "tosa-vectorized")
    ),
    Case(
        "resnet-stem",
        ResNetStem,
        inputs(randn(1, 3, 20, 20)),
        pipelines=(*WITH_TOSA, "tosa-vectorized"),
    ),
    Case(
        "encoder-layer-pre-norm",
        encoder_layer,
        inputs(randn(2, 8, 16)),
        pipelines=with_matmul_twins(WITH_TOSA),
    ),
    Case("reductions", Reductions, inputs(randn(5, 7))),
    Case("broadcast-chain", BroadcastChain, inputs(randn(4, 1), randn(1, 5), randn(5))),
    Case(
        "integer-ops",
        IntegerOps,
        inputs(randint(3, 4), randint(3, 4), randint(6, dtype=torch.int32)),
    ),
    Case("boolean-ops", BooleanOps, inputs(randn(3, 4), randn(3, 4), randbool(3, 4))),
    Case(
        "float64",
        Float64,
        inputs(randn(3, 4, dtype=torch.float64), randn(4, 2, dtype=torch.float64)),
        pipelines=with_matmul_twins(BASE),
    ),
    Case("scalars", Scalars, inputs(randn(3), randn())),
    Case(
        "item-int",
        ItemScale,
        inputs(randn(3), lambda g: torch.tensor(3)),
        pipelines=("refbackend", "refbackend-vectorized"),
    ),
    Case(
        "no-results",
        NoResults,
        inputs(randn(3)),
        pipelines=("refbackend", "refbackend-vectorized"),
    ),
    Case(
        "writes-inputs",
        WritesInputs,
        inputs(randn(3), randn(3)),
        pipelines=("refbackend", "refbackend-vectorized"),
    ),
    Case(
        "adaptive-max-pool-legal",
        AdaptiveMaxPool,
        inputs(randn(1, 2, 5, 5)),
        pipelines=("refbackend", "refbackend-vectorized"),
        backend_legal_ops=("aten.adaptive_max_pool2d",),
    ),
    Case("gelu", Gelu, inputs(randn(4, 5)), pipelines=("tosa", "refbackend-vectorized")),
    Case(
        "avg-pool-int",
        IntAvgPool,
        inputs(randint(1, 2, 4, 4)),
        pipelines=("tosa", "refbackend-vectorized"),
        xfail={
            "tosa": "torch-mlir's TOSA import gives an i64 avg_pool2d an i32 accumulator, which "
            "tosa-to-linalg-named truncates to i64 (arith.trunci i32 -> i64)"
        },
    ),
    Case("scan-sort-topk", ScanSortTopk, inputs(randn(4, 5))),
    Case(
        "multinomial-1m",
        Multinomial,
        inputs(lambda g: torch.rand(100, generator=g, dtype=torch.float64)),
        pipelines=BASE,
    ),
    Case(
        "complex",
        ComplexOps,
        inputs(
            randcomplex(2, 3, dtype=torch.complex64),
            randcomplex(4, dtype=torch.complex128),
            randn(3),
            randn(3),
        ),
        xfail={
            "tosa": "torch-mlir's torch-to-tosa (import to tosa) does not legalize "
            "aten.mul.Tensor on complex tensors"
        },
    ),
    Case("complex32", Complex32, inputs(randn(5)), pipelines=BASE),
    Case(
        "complex32-in",
        Complex32In,
        inputs(lambda g: torch.randn(4, generator=g, dtype=torch.complex64).chalf()),
        # refbackend's refback-munge-calling-conventions rejects complex<f16> arguments
        pipelines=("refbackend-dps", "refbackend-vectorized"),
    ),
    Case(
        "item-results",
        ItemResults,
        inputs(randn(5), randint(4)),
        rtol=1e-6,  # the f32 sum, widened to a Python float, keeps its f32 rounding
        xfail={
            "tosa": "torch-mlir's torch-to-tosa (import to tosa) does not legalize "
            "aten.Float.Tensor (.item() of a float tensor)"
        },
    ),
    Case(
        "bool-item",
        BoolItem,
        inputs(randn(5)),
        pipelines=("refbackend", "refbackend-vectorized"),
        xfail={
            pipeline: "torch-mlir's FX importer (import): 'Unimplemented call_function: "
            "sym_ite' for .item() of a bool tensor"
            for pipeline in ("refbackend", "refbackend-vectorized")
        },
    ),
    Case(
        "int64-division",
        Int64Division,
        int64_edges,
        xfail={
            "tosa": "torch-mlir's torch-to-tosa (import to tosa) floor-divides int64 testing "
            "a * b < 0, which overflows near 2**63, and computes int64 differences in int32 "
            "(remainder)"
        },
    ),
    Case(
        "uint8",
        Uint8Ops,
        inputs(randuint8(16), randuint8(16)),
        xfail={
            "tosa": "torch-mlir's torch-to-tosa (import to tosa) reads uint8 as signed i8: "
            "a > b, a.float() and maximum are wrong from 128 up (a miscompile)"
        },
    ),
    Case(
        "f16-bf16",
        HalfOps,
        inputs(randn(6, dtype=torch.float16), randn(6, dtype=torch.bfloat16)),
        xfail={
            "refbackend": "torch-mlir's refback-munge-calling-conventions (stage "
            "munge-calling-conventions) rejects bf16 arguments"
        },
    ),
    Case(
        "prims-view-of",
        PrimsViewOf,
        inputs(randn(3)),
        pipelines=(),
        ends={
            pipeline: Ending(
                "FAIL",
                "RuntimeError: Found a custom (non-ATen) operator whose output has alias "
                "annotations: prims::view_of(Tensor(a) a) -> Tensor(a).",
                refusal=("torch", "decompose"),
            )
            for pipeline in ("refbackend", "tosa")
        },
    ),
    Case(
        "while-loop",
        WhileLoopHOP,
        inputs(lambda g: torch.zeros(7, 9)),
        pipelines=(),
        ends={
            # torch-mlir lowers the loop to an scf.for up to 2**63 - 1 that never tests the
            # condition, so the compiled loop never ends; the time limit stops it
            **{
                pipeline: Ending("TIMEOUT", "while running the compiled code")
                for pipeline in ("refbackend", "refbackend-vectorized")
            },
            "tosa": Ending(
                "FAIL",
                "failed to legalize operation 'torch.aten.Bool.Tensor'",
                refusal=("compiler", "import"),
            ),
        },
    ),
]


def onnx_matmul(m: int = 2, k: int = 3, n: int = 4) -> Any:
    """The seed ONNX case: a single MatMul node."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])],
        "matmul",
        [
            helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k]),
            helper.make_tensor_value_info("B", TensorProto.FLOAT, [k, n]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def onnx_gemm_relu() -> Any:
    """An ONNX Gemm (with bias) followed by Relu."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 6)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((6,)).astype(np.float32), "Bias")
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["X", "W", "Bias"], ["H"]),
            helper.make_node("Relu", ["H"], ["Y"]),
        ],
        "gemm_relu",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 6])],
        initializer=[w, b],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
