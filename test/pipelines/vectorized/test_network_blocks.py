"""The blocks of ResNet-18, MobileNetV2, a BERT encoder layer and a GPT-2 block that hold their
poolings, GELUs and softmaxes, at small sizes, lowered by refbackend-vectorized: after
tile-and-vectorize none of those is left as scalar math (a linalg op the script did not
vectorize becomes a scalar loop), and the LLVM dialect calls no function of the C library."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stages import run_stages

torch = pytest.importorskip("torch")
nn = torch.nn
F = nn.functional
# the GPT-2 block and BERT layer are the benchmark's whole networks' own, at a small width
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
import networks  # noqa: E402

PIPELINE = "refbackend-vectorized"
# Calls that are no math: the C interface's of the function, and a failed cf.assert's message
# and abort (torch-mlir asserts a batch norm's variance plus eps is not 0); allocations call
# _mlir_memref_to_llvm_alloc and _free.
NOT_MATH = {"forward", "puts", "abort"}
# Scalar f32 math of a pooling (maximumf), a GELU (erf, tanh, and the approximations' floor
# and copysign), a softmax (exp, maximumf) or a log-softmax (log): a scalar loop's body.
SCALAR_MATH = re.compile(
    r"= (math\.(exp|erf|tanh|log|floor|copysign)|arith\.maximumf) [^:]*: f32$", re.M
)

# The body of a linalg.generic left after tile-and-vectorize (a scalar loop to come).
GENERIC_BODY = re.compile(r"linalg\.generic .*?\n(.*?)\n\s*\} -> ", re.S)


class ResNetStemAndHead(nn.Module):
    """ResNet-18's stem (conv7x7 by 2, BN, ReLU, max pooling 3x3 by 2) and head (adaptive
    average pooling, the classifier)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        y = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 3, 2, 1)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, (1, 1)), 1))


class MobileNetV2Head(nn.Module):
    """MobileNetV2's last layers: conv1x1, BN, ReLU6, adaptive average pooling, classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(16, 32, 1, bias=False)
        self.bn = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, (1, 1)), 1))


def _gpt2_block() -> nn.Module:
    """GPT-2's block (bench/networks.py's) at width 32, 4 heads."""
    return networks.Gpt2Block(32, 4)


def _bert_layer() -> nn.Module:
    """BERT's encoder layer (bench/networks.py's) at width 32, 4 heads."""
    return networks.bert_layer(32, 4, 64)


class LogSoftmaxHead(nn.Module):
    """A classifier's log-softmax."""

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (ResNetStemAndHead, (1, 3, 32, 32)),
        (MobileNetV2Head, (1, 16, 7, 7)),
        (_bert_layer, (1, 16, 32)),
        (_gpt2_block, (1, 16, 32)),
        (LogSoftmaxHead, (4, 100)),
    ],
    ids=["resnet18", "mobilenetv2", "bert-layer", "gpt2-block", "log-softmax"],
)
def test_no_pooling_gelu_or_softmax_is_left_as_scalar_loops_or_c_library_calls(make, shape):
    from pytest_mlirpipe.execution.frontends import import_torch

    torch.manual_seed(0)
    source = import_torch(make().eval(), [torch.randn(*shape)], "linalg")
    pipeline = catalog_for([]).get(PIPELINE)

    run = run_stages(source, pipeline)

    vectorized = next(s.ir for s in run.snapshots if s.stage == "tile-and-vectorize")
    assert "linalg.pooling" not in vectorized
    assert SCALAR_MATH.findall(vectorized) == []
    # the generics left that compute on floats: a batch norm's 1 / sqrt(variance + eps), per
    # channel, with its assert (GPT-2's causal mask, on integers and i1, is left too)
    left = [b for b in GENERIC_BODY.findall(vectorized) if re.search(r": f32$", b, re.M)]
    assert [b for b in left if "cf.assert" not in b] == []
    calls = set(re.findall(r"llvm\.call @(\w+)", run.final_ir)) - NOT_MATH
    assert all(name.startswith("_mlir_") for name in calls), calls
    assert re.findall(r"llvm\.intr\.(exp|log|tanh)\b", run.final_ir) == []
