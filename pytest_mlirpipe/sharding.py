"""One CI machine's share of a suite: the files lit's `--num-shards N --run-shard K` runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from .items import MlirItem

# lit's own variables, read by `lit` too: one setting shards both runners alike.
NUM_SHARDS_ENV = "LIT_NUM_SHARDS"
RUN_SHARD_ENV = "LIT_RUN_SHARD"


class ShardError(ValueError):
    """A shard spec that is not K/N with 1 <= K <= N; the message quotes it."""


def parse_shard(flag: str | None, env: dict[str, str] | os._Environ) -> tuple[int, int] | None:
    """(K, N) from `--mlirpipe-shard K/N`, else from $LIT_RUN_SHARD and $LIT_NUM_SHARDS, else
    None (no sharding)."""
    if flag:
        text, source = flag, f"--mlirpipe-shard {flag}"
        run, sep, shards = flag.partition("/")
        if not sep:
            raise ShardError(f"mlirpipe: {source}: expected K/N, e.g. 2/4 (shard 2 of 4)")
    else:
        run, shards = env.get(RUN_SHARD_ENV, ""), env.get(NUM_SHARDS_ENV, "")
        if not run and not shards:
            return None
        text = f"{RUN_SHARD_ENV}={run!r} {NUM_SHARDS_ENV}={shards!r}"
        source = text
        if not run or not shards:
            raise ShardError(f"mlirpipe: {source}: set both, as lit wants them together")
    try:
        k, n = int(run), int(shards)
    except ValueError:
        raise ShardError(f"mlirpipe: {source}: K and N must be whole numbers") from None
    if not 1 <= k <= n:
        raise ShardError(f"mlirpipe: {source}: the shard K must be between 1 and N ({text})")
    return k, n


def lit_order(test: Any, order: str = "smart") -> tuple:
    """The key lit sorts its tests by before it shards them (lit.main.determine_order): with
    --order=smart, lit's default, the tests that failed last time first, then the slower
    (the times lit recorded in the suite's `.lit_test_times.txt`), then by full name
    (`SUITE :: path`); with lexical (or random, which no run can match) by full name."""
    name = test.getFullName()
    if order != "smart":
        return (False, 0.0, name)
    return (
        not getattr(test, "previous_failure", False),
        -getattr(test, "previous_elapsed", 0.0),
        name,
    )


def shard_items(
    items: list[pytest.Item], run: int, shards: int, lit_key: Callable[[MlirItem], Any]
) -> list[pytest.Item]:
    """The items outside shard `run` of `shards` (removed from `items` in place). RUN/CHECK
    files are numbered as lit numbers them (in lit's order, `lit_key`) and shard K keeps
    numbers K, K+N, ...; other tests are numbered by node id the same way."""
    files = [i for i in items if isinstance(i, MlirItem)]
    others = [i for i in items if not isinstance(i, MlirItem)]
    keep = set(_every_nth(sorted(files, key=lit_key), run, shards))
    keep |= set(_every_nth(sorted(others, key=lambda i: i.nodeid), run, shards))
    dropped = [i for i in items if i not in keep]
    items[:] = [i for i in items if i in keep]
    return dropped


def _every_nth(ordered: Sequence[Any], run: int, shards: int) -> list[Any]:
    return [ordered[i] for i in range(run - 1, len(ordered), shards)]


class Shard:
    """A pytest plugin object: keeps only this shard's tests (after -k/-m selection)."""

    def __init__(self, run: int, shards: int, lit_key: Callable[[MlirItem], Any]):
        self.run, self.shards, self.lit_key = run, shards, lit_key

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        dropped = shard_items(items, self.run, self.shards, self.lit_key)
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def pytest_report_header(self) -> str:
        return f"mlirpipe: shard {self.run}/{self.shards} (lit: --run-shard {self.run} " + (
            f"--num-shards {self.shards})"
        )
