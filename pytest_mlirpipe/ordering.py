"""lit's smart order for RUN/CHECK files under pytest: last run's failures first, then the
longest files first, from the times pytest's cache kept (so `-n 2` does not start a long file
last); other tests keep their places."""

from __future__ import annotations

from typing import Any

import pytest

from .items import VERDICT, MlirItem

# pytest cache key: {node id: seconds its last run took}.
DURATIONS_KEY = "mlirpipe/durations"


class FileOrder:
    """A pytest plugin object (one per run): orders the file tests, records their times."""

    def __init__(self, config: pytest.Config, smart: bool):
        self.config = config
        self.smart = smart  # lit's smart order; else collection order
        self.seen: dict[str, float] = {}

    @pytest.hookimpl(trylast=True)  # after -k/-m and other plugins' selections
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.smart:
            order_items(getattr(self.config, "cache", None), items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep how long a file test ran (on the xdist controller too: workers send reports)."""
        if report.when == "call" and any(k == VERDICT for k, _ in report.user_properties):
            self.seen[report.nodeid] = report.duration

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
