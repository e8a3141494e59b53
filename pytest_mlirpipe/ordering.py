"""lit's smart order for RUN/CHECK files under pytest: last run's failures first, then the
longest files first, from the times pytest's cache kept (so `-n 2` does not start a long file
last); other tests keep their places."""

from __future__ import annotations

from typing import Any

import pytest

from .items import REASON, VERDICT, MlirItem

# pytest cache key: {node id: seconds its last run took}.
DURATIONS_KEY = "mlirpipe/durations"


class FileOrder:
    """A pytest plugin object (one per run): orders the file tests, records their times."""

    def __init__(self, config: pytest.Config, smart: bool):
        self.config = config
        self.smart = smart  # lit's smart order; else collection order
        self.seen: dict[str, float] = {}
        self.verdicts: dict[str, str] = {}
        self.reasons: dict[str, str] = {}  # of the failing files

    @pytest.hookimpl(trylast=True)  # after -k/-m and other plugins' selections
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.smart:
            order_items(getattr(self.config, "cache", None), items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep how long a file test ran (on the xdist controller too: workers send reports)."""
        properties = dict(report.user_properties)
        verdict = properties.get(VERDICT)
        if report.when == "call" and verdict is not None:
            self.seen[report.nodeid] = report.duration
            self.verdicts[report.nodeid] = str(verdict)
            if properties.get(REASON):
                self.reasons[report.nodeid] = str(properties[REASON])

    def file_timings(self) -> dict[str, dict[str, object]]:
        """{node id: {"verdict": lit's code, "seconds": its run}} of this run's file tests;
        a failing file's entry also has its "reason" (one line)."""
        timings: dict[str, dict[str, object]] = {}
        for n, s in self.seen.items():
            timings[n] = {"verdict": self.verdicts[n], "seconds": s}
            if n in self.reasons:
                timings[n]["reason"] = self.reasons[n]
        return timings

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under `-n N` (`--dist load`) in smart order: tests handed out one at a time in that
        order, as lit's workers take files, not in xdist's first batches of consecutive tests
        (which put every long file on the first worker)."""
        if not self.smart or config.getvalue("dist") != "load":
            return None
        return longest_first_scheduling(config, log)

    def pytest_sessionfinish(self) -> None:
        """Store this run's times with the earlier ones (the controller's, not each worker's)."""
        cache = getattr(self.config, "cache", None)
        if cache is None or not self.seen or hasattr(self.config, "workerinput"):
            return
        cache.set(DURATIONS_KEY, {**cache.get(DURATIONS_KEY, {}), **self.seen})


def order_items(cache: Any, items: list[pytest.Item]) -> None:
    """Reorder the file tests among `items` in place: those that failed last time (pytest's
    cache/lastfailed), then by last recorded time, longest first; ties keep collection order.
    Without a cache (-p no:cacheprovider) nothing was recorded and nothing moves."""
    if cache is None:
        return
    times: dict[str, float] = cache.get(DURATIONS_KEY, {})
    failed: dict[str, Any] = cache.get("cache/lastfailed", {})
    slots = [i for i, item in enumerate(items) if isinstance(item, MlirItem)]
    ranked = sorted(
        (items[i] for i in slots),
        key=lambda it: (it.nodeid not in failed, -float(times.get(it.nodeid, 0.0))),
    )
    for slot, item in zip(slots, ranked, strict=True):
        items[slot] = item


def longest_first_scheduling(config: pytest.Config, log: Any) -> Any:
    """An xdist LoadScheduling whose nodes each hold two tests at a time (the one running and
    the next), the first ones dealt round-robin in collection (smart) order."""
    from itertools import cycle

    from xdist.scheduler import LoadScheduling

    class LongestFirstScheduling(LoadScheduling):
        collection: list[str] | None  # xdist's: the node ids, once the nodes agree on them

        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self.maxschedchunk = 1  # refills: one test at a time

        def schedule(self) -> None:
            if self.collection is not None or not self._check_nodes_have_same_collection():
                return super().schedule()  # a later node, or collections that differ
            self.collection = next(iter(self.node2collection.values()))
            self.pending[:] = range(len(self.collection))
            nodes = cycle(self.nodes)
            for _ in range(min(len(self.pending), 2 * len(self.nodes))):
                self._send_tests(next(nodes), 1)
            if not self.pending:
                for node in self.nodes:
                    node.shutdown()
            return None

    return LongestFirstScheduling(config, log)
