"""Models that draw random numbers: which ops draw them, one seed for every torch run, and the
rule that judges their results as samples rather than element by element."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

SEED = 0  # torch's seed before every torch run of a model (eager, float64, a rerun)
SIGMAS = 4.0  # a statistic may differ by this many times max(|torch|, 1) / sqrt(samples)
KS_ALPHA = 1e-6  # the Kolmogorov-Smirnov test's level for results of several values


@dataclass(frozen=True, slots=True)
class Draws:
    """The random ops of a model's exported program and the fewest samples one of them draws
    (the sample size the rule judges by)."""

    ops: tuple[str, ...]
    samples: int

    def describe(self) -> str:
        return f"{', '.join(self.ops)} drew {self.samples} samples"


def draws_of(program: Any) -> Draws | None:
    """The ATen ops tagged nondeterministic_seeded in an exported program, or None."""
    import torch

    ops: dict[str, int] = {}
    for node in program.graph.nodes:
        tags = getattr(node.target, "tags", ()) if node.op == "call_function" else ()
        if torch.Tag.nondeterministic_seeded in tags:
            value = node.meta.get("val")
            count = int(value.numel()) if hasattr(value, "numel") else 1
            name = str(node.target).removesuffix(".default")
            ops[name] = min(ops.get(name, count), count)
    if not ops:
        return None
    return Draws(tuple(sorted(ops)), max(min(ops.values()), 1))


@contextlib.contextmanager
def reseeded() -> Iterator[None]:
    """torch's CPU generator seeded with SEED for the block, and as it was after it."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        yield


def statistic_bound(expected: np.ndarray, samples: int) -> float:
    """How far one statistic of `samples` samples may be from torch's."""
    scale = max(float(np.max(np.abs(expected))) if expected.size else 0.0, 1.0)
    return SIGMAS * scale / math.sqrt(samples)


def ks_distance(a: np.ndarray, e: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical
    distribution functions of `a`'s and `e`'s values."""
    x, y = np.sort(a.ravel()), np.sort(e.ravel())
    points = np.concatenate([x, y])
    fx = np.searchsorted(x, points, side="right") / x.size
    fy = np.searchsorted(y, points, side="right") / y.size
    return float(np.max(np.abs(fx - fy)))


def ks_bound(n: int, m: int) -> float:
    """The largest Kolmogorov-Smirnov statistic two samples of one distribution reach but at
    level KS_ALPHA."""
    c = math.sqrt(-math.log(KS_ALPHA / 2) / 2)
    return c * math.sqrt((n + m) / (n * m))
