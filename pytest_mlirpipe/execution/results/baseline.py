"""A run's timing report against a stored baseline: what got slower beyond a threshold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Files and execution cases faster than this in the baseline are left out: their times are
# mostly noise (process start, the scheduler).
MIN_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class Slower:
    """One test that got slower: its name and seconds before and now."""

    name: str
    before: float
    now: float

    @property
    def ratio(self) -> float:
        return self.now / self.before


@dataclass(frozen=True, slots=True)
class Comparison:
    compared: int
    slower: tuple[Slower, ...]  # beyond the threshold, slowest ratio first


def timings(report: dict[str, Any]) -> dict[str, float]:
    """name -> seconds of a timing report: each RUN/CHECK file's run, each execution case's
    median per call (its pipeline and mode in the name)."""
    found = {
        nodeid: float(entry["seconds"])
        for nodeid, entry in report.get("files", {}).items()
        if entry.get("seconds") is not None
    }
    for row in report.get("results", []):
        timing = row.get("timing") or {}
        if timing.get("median"):
            name = f"{row['case']} [{row['pipeline']}, {row.get('mode') or 'jit'}]"
            found[name] = float(timing["median"])
    return found


def compare(baseline: dict[str, Any], current: dict[str, Any], threshold: float) -> Comparison:
    """The tests in both reports (baseline at least MIN_SECONDS) and those more than
    `threshold` (0.2: 20 %) slower now."""
    before, now = timings(baseline), timings(current)
    common = [n for n in now if n in before and before[n] >= MIN_SECONDS]
    slower = [Slower(n, before[n], now[n]) for n in common if now[n] > before[n] * (1 + threshold)]
    slower.sort(key=lambda s: -s.ratio)
    return Comparison(len(common), tuple(slower))


def format_comparison(result: Comparison, baseline: str, threshold: float) -> str:
    """The verdict lines: how many were compared, then each regression."""
    limit = f"{threshold * 100:g}%"
    if not result.slower:
        return (
            f"mlirpipe: no test more than {limit} slower than {baseline} "
            f"({result.compared} compared)"
        )
    lines = [
        f"mlirpipe: {len(result.slower)} of {result.compared} "
        f"test{'' if result.compared == 1 else 's'} more than {limit} slower "
        f"than {baseline}:"
    ]
    lines += [
        f"  {s.name}: {s.before:.2f} s -> {s.now:.2f} s ({s.ratio:.2f}x)" for s in result.slower
    ]
    return "\n".join(lines)
