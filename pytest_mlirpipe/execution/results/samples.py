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
# The fewest draws a value of a random result must be able to come from for it to be judged
# as a statistic of them: with fewer, a value may be one draw, which no bound judges.
MIN_DRAWS = 16


@dataclass(frozen=True, slots=True)
class Draws:
    """The random ops of a model's exported program, the fewest samples one of them draws
    (the sample size the rule judges by), and which results depend on a draw (in the imported
    function's order); a result that does not is judged by the other rules. `per_result`: for
    each result, the random ops it is computed from and the fewest samples one of them draws
    (a mean of many draws is judged by them, not by another result's single draw)."""

    ops: tuple[str, ...]
    samples: int
    results: tuple[bool, ...] = ()
    per_result: tuple[tuple[tuple[str, ...], int], ...] = ()

    def describe(self) -> str:
        return f"{', '.join(self.ops)} drew {self.samples} samples"

    def covers(self, index: int) -> bool:
        """Whether result `index` depends on a random op (True when that is not known)."""
        return self.results[index] if index < len(self.results) else not self.results

    def of_result(self, index: int) -> Draws:
        """The draws result `index` is computed from (all of them when that is not known)."""
        if index >= len(self.per_result) or not self.per_result[index][0]:
            return self
        ops, samples = self.per_result[index]
        return Draws(ops, samples, self.results, self.per_result)


def draws_of(program: Any) -> Draws | None:
    """The ATen ops tagged nondeterministic_seeded in an exported program, or None."""
    import torch

    ops: dict[str, int] = {}
    random_nodes: dict[Any, tuple[str, int]] = {}  # a random node -> (its op, its samples)
    for node in program.graph.nodes:
        tags = getattr(node.target, "tags", ()) if node.op == "call_function" else ()
        if torch.Tag.nondeterministic_seeded in tags:
            value = node.meta.get("val")
            count = int(value.numel()) if hasattr(value, "numel") else 1
            name = str(node.target).removesuffix(".default")
            ops[name] = min(ops.get(name, count), count)
            random_nodes[node] = (name, count)
    if not ops:
        return None
    below = _depends(program, set(random_nodes))
    per_result = []
    for nodes in below:
        drawn = [random_nodes[n] for n in nodes]
        fewest = max(min((c for _, c in drawn), default=1), 1)
        per_result.append((tuple(sorted({name for name, _ in drawn})), fewest))
    return Draws(
        tuple(sorted(ops)),
        max(min(ops.values()), 1),
        tuple(bool(nodes) for nodes in below),
        tuple(per_result),
    )


def _depends(program: Any, random_nodes: set) -> tuple[frozenset, ...]:
    """For each result of the imported function (the outputs the import keeps, in order),
    the random nodes it is computed from."""
    from torch.export.graph_signature import OutputKind

    kept = {OutputKind.USER_OUTPUT, OutputKind.USER_INPUT_MUTATION, OutputKind.BUFFER_MUTATION}
    output = next(n for n in program.graph.nodes if n.op == "output")
    found: dict[Any, frozenset] = {}

    def random_below(node: Any) -> frozenset:
        stack, seen, reached = [node], set(), set()
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if current in random_nodes:
                reached.add(current)
            if hasattr(current, "all_input_nodes"):
                stack.extend(current.all_input_nodes)
        return frozenset(reached)

    depends = []
    for spec, arg in zip(program.graph_signature.output_specs, output.args[0], strict=False):
        if spec.kind in kept:
            if arg not in found:
                found[arg] = random_below(arg)
            depends.append(found[arg])
    return tuple(depends)


@contextlib.contextmanager
def reseeded() -> Iterator[None]:
    """torch's CPU generator seeded with SEED for the block, and as it was after it."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        yield


def statistic_bound(expected: np.ndarray, samples: int) -> float:
    """How far one statistic of `samples` samples may be from torch's."""
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(float(np.max(finite)) if finite.size else 0.0, 1.0)
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
