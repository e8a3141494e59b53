"""The timing protocol's bookkeeping (no timing is asserted: only what is recorded)."""

from __future__ import annotations

from pytest_mlirpipe.execution.results.timing import (
    TimingConfig,
    busy_seconds,
    format_seconds,
    measure,
    summarize,
)


def test_summary_takes_the_median_of_blocks_and_flags_load() -> None:
    t = summarize([2e-3, 1e-3, 4e-3], [0.0, 0.5, 0.1], calls=10, threads=2)
    assert (t.median, t.minimum, t.maximum, t.blocks) == (2e-3, 1e-3, 4e-3, 3)
    assert t.spread == 1.5 and t.loaded and t.other_cpu == 0.5
    assert t.format() == (
        "2.00 ms median, spread 150% (3x10 calls, 2 threads) [loaded: other processes used "
        "0.50 cores]"
    )


def test_each_candidate_runs_whole_blocks_in_turn() -> None:
    order: list[str] = []
    config = TimingConfig(warmup=1, blocks=2, block_seconds=0.0, pause_seconds=0.0)
    result = measure({"a": lambda: order.append("a"), "b": lambda: order.append("b")}, config)
    # warm-up, the sizing call, then blocks of one call each, taking turns
    assert order == ["a", "a", "b", "b", "a", "b", "a", "b"]
    assert result["a"].calls_per_block == 1 and result["b"].blocks == 2


def test_machine_load_is_read_from_proc_stat() -> None:
    assert (busy_seconds() or 0) > 0


def test_seconds_are_printed_in_a_readable_unit() -> None:
    assert [format_seconds(s) for s in (2.5, 0.0125, 3e-6)] == ["2.50 s", "12.50 ms", "3.0 us"]
