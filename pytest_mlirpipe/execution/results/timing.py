"""Timing protocol: warm-up, blocks of calls per candidate, pauses, the load of each block."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..native.openmp import set_openmp_threads

# Another process using more than this share of one core during a block flags the result.
LOADED_SHARE = 0.2
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class TimingConfig:
    """How to time: warm-up calls, blocks per candidate, seconds per block, pause between."""

    warmup: int = 3
    blocks: int = 5
    block_seconds: float = 0.05
    pause_seconds: float = 0.02
    threads: int = 1
    max_calls_per_block: int = 10_000


@dataclass(frozen=True, slots=True)
class Timing:
    """Per-call seconds of one candidate: median of block means, and how they spread."""

    median: float
    minimum: float
    maximum: float
    spread: float  # (max - min) / median of the block means
    blocks: int
    calls_per_block: int
    threads: int
    other_cpu: float  # the most other processes used, in cores, during any block
    loaded: bool  # other_cpu > LOADED_SHARE: taken under load, do not trust it

    def format(self) -> str:
        flag = f" [loaded: other processes used {self.other_cpu:.2f} cores]" if self.loaded else ""
        return (
            f"{format_seconds(self.median)} median, spread {100 * self.spread:.0f}% "
            f"({self.blocks}x{self.calls_per_block} calls, {self.threads} threads){flag}"
        )


def format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def busy_seconds() -> float | None:
    """CPU seconds all processes have used since boot (from /proc/stat), None if unknown."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    guest = sum(values[8:10]) if len(values) > 9 else 0  # already counted in user/nice
    return (sum(values) - idle - guest) / _HZ


def own_seconds() -> float:
    t = os.times()
    return t.user + t.system


def _block(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """(seconds per call, cores other processes used) for one block of `calls` calls."""
    busy0, own0 = busy_seconds(), own_seconds()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - t0
    busy1, own1 = busy_seconds(), own_seconds()
    other = 0.0
    if busy0 is not None and busy1 is not None and elapsed > 0:
        other = max(0.0, (busy1 - busy0) - (own1 - own0)) / elapsed
    return elapsed / calls, other


def _calls_for(fn: Callable[[], object], config: TimingConfig) -> int:
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    return int(max(1, min(config.max_calls_per_block, config.block_seconds / one)))


def measure(
    candidates: Mapping[str, Callable[[], object]], config: TimingConfig = TimingConfig()
) -> dict[str, Timing]:
    """Time each zero-argument callable: blocks of calls, candidates taking turns by block.

    Each candidate runs whole blocks (never single calls alternating with another candidate's:
    two spinning thread pools slow each other down), with a pause after each block. The
    calls inside a block are a bare loop: no per-call Python work but the call itself.
    """
    _set_threads(config.threads)
    calls: dict[str, int] = {}
    for name, fn in candidates.items():
        for _ in range(config.warmup):
            fn()
        calls[name] = _calls_for(fn, config)
        time.sleep(config.pause_seconds)
    per_call: dict[str, list[float]] = {n: [] for n in candidates}
    others: dict[str, list[float]] = {n: [] for n in candidates}
    for _ in range(config.blocks):
        for name, fn in candidates.items():
            seconds, other = _block(fn, calls[name])
            per_call[name].append(seconds)
            others[name].append(other)
            time.sleep(config.pause_seconds)
    return {
        name: summarize(per_call[name], others[name], calls[name], config.threads)
        for name in candidates
    }


def summarize(
    per_call: Sequence[float], others: Sequence[float], calls: int, threads: int
) -> Timing:
    med = statistics.median(per_call)
    other = max(others, default=0.0)
    return Timing(
        median=med,
        minimum=min(per_call),
        maximum=max(per_call),
        spread=(max(per_call) - min(per_call)) / med if med > 0 else 0.0,
        blocks=len(per_call),
        calls_per_block=calls,
        threads=threads,
        other_cpu=other,
        loaded=other > LOADED_SHARE,
    )


def _set_threads(threads: int) -> None:
    """Give torch and the OpenMP runtime of parallel compiled code the same thread count."""
    set_openmp_threads(threads)
    try:
        import torch
    except ImportError:  # pragma: no cover
        return
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
