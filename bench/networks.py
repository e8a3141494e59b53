"""Whole networks in plain torch.nn (no torchvision): ResNet-18, MobileNetV2, BERT-base's encoder
layer and GPT-2 small's block, in eval mode with seeded weights and BatchNorm statistics.

The layer lists follow torchvision's resnet18 and mobilenet_v2 and the papers' base
configurations; test/pipelines/vectorized/test_network_blocks.py builds its small GPT-2 block
and BERT layer from the same definitions.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


def _seeded_stats(model: nn.Module, seed: int) -> nn.Module:
    """`model` in eval mode, its BatchNorms given seeded running statistics."""
    gen = torch.Generator().manual_seed(seed)
    for bn in model.modules():
        if isinstance(bn, nn.BatchNorm2d):
            bn.running_mean.copy_(0.1 * torch.randn(bn.num_features, generator=gen))
            bn.running_var.copy_(0.5 + torch.rand(bn.num_features, generator=gen))
    return model.eval()


def _conv_bn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1) -> list[nn.Module]:
    return [
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]


class BasicBlock(nn.Module):
    """ResNet's basic block, with a 1x1 convolution by 2 on the shortcut where the shape changes."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            *_conv_bn(cin, cout, 3, stride), nn.ReLU(), *_conv_bn(cout, cout, 3)
        )
        self.shortcut = (
            nn.Sequential(*_conv_bn(cin, cout, 1, stride))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


def resnet18(classes: int = 1000) -> nn.Module:
    torch.manual_seed(18)
    layers: list[nn.Module] = [*_conv_bn(3, 64, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return _seeded_stats(nn.Sequential(*layers), 18)


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expansion (unless t = 1), depthwise 3x3, 1x1 projection; the
    input added when the shape is kept."""

    def __init__(self, cin: int, cout: int, stride: int, t: int) -> None:
        super().__init__()
        mid = cin * t
        expand = [*_conv_bn(cin, mid, 1), nn.ReLU6()] if t != 1 else []
        self.body = nn.Sequential(
            *expand, *_conv_bn(mid, mid, 3, stride, groups=mid), nn.ReLU6(), *_conv_bn(mid, cout, 1)
        )
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


def mobilenet_v2(classes: int = 1000) -> nn.Module:
    torch.manual_seed(2)
    layers: list[nn.Module] = [*_conv_bn(3, 32, 3, 2), nn.ReLU6()]
    cin = 32
    for t, c, n, s in (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ):
        for i in range(n):
            layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [*_conv_bn(cin, 1280, 1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    layers.append(nn.Linear(1280, classes))
    return _seeded_stats(nn.Sequential(*layers), 2)


def bert_layer(width: int = 768, heads: int = 12, feed_forward: int = 3072) -> nn.Module:
    """BERT's encoder layer: post-norm, the erf GELU (BERT-base: 768, 12 heads, 3072)."""
    torch.manual_seed(12)
    return nn.TransformerEncoderLayer(
        width, heads, feed_forward, dropout=0.0, activation="gelu", batch_first=True
    ).eval()


class Gpt2Block(nn.Module):
    """GPT-2's block: layer norm, causal self-attention (a softmax), layer norm, an MLP with
    the tanh GELU, residuals (GPT-2 small: width 768, 12 heads)."""

    def __init__(self, width: int = 768, heads: int = 12) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(width // self.heads)
        mask = torch.tril(torch.ones(length, length, dtype=torch.bool))
        attention = torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1) @ v
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, length, width))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


def counted_flops(model: nn.Module, inputs: list) -> float:
    """FLOPs of one call: 2 per multiply-add of every Conv2d and Linear (counted on a run with
    hooks)."""
    total = 0.0

    def hook(module, args, out):
        nonlocal total
        if isinstance(module, nn.Conv2d):
            k = module.kernel_size[0] * module.kernel_size[1]
            total += 2.0 * out.numel() * module.in_channels // module.groups * k
        else:
            total += 2.0 * out.numel() * module.in_features

    handles = [
        m.register_forward_hook(hook)
        for m in model.modules()
        if isinstance(m, (nn.Conv2d, nn.Linear))
    ]
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return total


def transformer_flops(batch: int, seq: int, width: int, feed_forward: int) -> float:
    """FLOPs of one transformer layer's call: the q, k, v and output projections, the
    feed-forward, the scores and the weighted sum (torch's fast path of
    nn.TransformerEncoderLayer calls no nn.Linear that a hook could count)."""
    return 2.0 * batch * seq * (4 * width * width + 2 * width * feed_forward + 2 * seq * width)
