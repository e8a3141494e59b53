"""The models the timing benchmarks run, with their inputs (seeded) and FLOPs per call.

The MLP is bench/matmul.py's; the blocks are the execution case library's classes
(test/execution/cases.py) at the sizes of real networks, or at the library's own with `small`;
the whole networks are bench/networks.py's (224x224 images, sequences of 128; with `small`
32x32 images, width 32 and sequences of 16).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

MODELS = ("mlp", "resnet-block", "dwsep-block", "encoder")
# Whole networks (bench/networks.py): --models names them; not run by default
NETWORKS = ("resnet18", "mobilenetv2", "bert-layer", "gpt2-block")


@dataclass
class Workload:
    name: str
    model: object
    inputs: list
    flops: float


def mlp_workload(batch: int, width: int = 512, classes: int = 10) -> Workload:
    """Linear width->width, ReLU, Linear width->width, ReLU, Linear width->classes."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    mlp = nn.Sequential(
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, classes),
    ).eval()
    x = torch.randn(batch, width, generator=torch.Generator().manual_seed(1))
    flops = 2.0 * batch * (2 * width * width + width * classes)
    return Workload(f"mlp {batch}x{width}x{width}x{classes}", mlp, [x], flops)


def model_workload(name: str, batch: int, small: bool = False) -> Workload:
    """One of MODELS on a batch of `batch`: full size, or the case library's size."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "execution"))
    from cases import DepthwiseSeparableBlock, ResNetBasicBlock, encoder_layer

    gen = torch.Generator().manual_seed(1)
    if name == "mlp":
        return mlp_workload(batch, *((32, 10) if small else (512, 10)))
    if name == "resnet-block":
        c, hw = (4, 8) if small else (64, 56)
        flops = 2 * (2.0 * c * c * 9 * hw * hw) * batch
        x = torch.randn(batch, c, hw, hw, generator=gen)
        return Workload(f"resnet-block {c}x{hw}x{hw}", ResNetBasicBlock(c), [x], flops)
    if name == "dwsep-block":
        c, out, hw = (4, 8, 8) if small else (64, 128, 56)
        flops = (2.0 * c * 9 + 2.0 * c * out) * hw * hw * batch
        x = torch.randn(batch, c, hw, hw, generator=gen)
        model = DepthwiseSeparableBlock(c, out)
        return Workload(f"dwsep-block {c}->{out}x{hw}x{hw}", model, [x], flops)
    if name == "encoder":
        seq, width, heads, ff = (8, 16, 2, 32) if small else (128, 256, 4, 1024)
        # per token: q, k, v and out projections, the feed-forward, scores and weighted sum
        flops = batch * seq * (8.0 * width * width + 4.0 * width * ff + 4.0 * seq * width)
        x = torch.randn(batch, seq, width, generator=gen)
        model = encoder_layer(width, heads, ff)
        return Workload(f"encoder s{seq} d{width} h{heads} ff{ff}", model, [x], flops)
    if name in NETWORKS:
        return network_workload(name, batch, small)
    raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS + NETWORKS)}")


def network_workload(name: str, batch: int, small: bool = False) -> Workload:
    """One of NETWORKS on a batch of `batch`."""
    import torch
    from networks import (
        Gpt2Block,
        bert_layer,
        counted_flops,
        mobilenet_v2,
        resnet18,
        transformer_flops,
    )

    gen = torch.Generator().manual_seed(1)
    if name in ("resnet18", "mobilenetv2"):
        hw = 32 if small else 224
        model = resnet18() if name == "resnet18" else mobilenet_v2()
        x = torch.randn(batch, 3, hw, hw, generator=gen)
        return Workload(f"{name} {hw}x{hw}", model, [x], counted_flops(model, [x]))
    seq, width, heads = (16, 32, 4) if small else (128, 768, 12)
    model = bert_layer(width, heads, 4 * width) if name == "bert-layer" else Gpt2Block(width, heads)
    x = torch.randn(batch, seq, width, generator=gen)
    flops = transformer_flops(batch, seq, width, 4 * width)
    return Workload(f"{name} s{seq} d{width} h{heads}", model, [x], flops)
