"""The pytest side of --mlirpipe-expectations: listed failures become strict xfails."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from .expectations import Entry, Expectations, ExpectationsError, parse_expectations
from .model import Location

EXPECTATIONS_KEY = pytest.StashKey["ExpectationsRun"]()
# Per test: the entries of pipelines whose listed failure its execution checks met.
MET_KEY = pytest.StashKey[list[Entry]]()
# workerinput: the entries, read once by the controller; workeroutput: what a worker found.
_WORKER_KEY = "mlirpipe_expectations"

HINT = "write one from a run's results: mlirpipe expectations RUN.json -o {path}"


def configure(config: pytest.Config, path: str | None) -> None:
    """Read the expectations file once (the xdist controller, or a run without workers) and
    register the run's ExpectationsRun; a worker takes the entries its controller read."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _WORKER_KEY in workerinput:
        expectations = _from_plain(workerinput[_WORKER_KEY])
    elif path:
        expectations = read_expectations(path)
    else:
        return
    run = ExpectationsRun(config, expectations)
    config.stash[EXPECTATIONS_KEY] = run
    config.pluginmanager.register(run, "mlirpipe-expectations")


def read_expectations(path: str) -> Expectations:
    """The file's entries; a file that is missing or wrong stops the run with its problems."""
    shown = _shown(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise pytest.UsageError(
            f"mlirpipe: cannot read the expectations file {shown}: {why}\n"
            f"  hint: {HINT.format(path=shown)}"
        ) from None
    try:
        return parse_expectations(text, shown)
    except ExpectationsError as exc:
        raise pytest.UsageError(f"mlirpipe: {exc.format()}") from None


def _shown(path: str) -> str:
    """The path as messages show it: relative to the working folder when under it."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else relative


def _to_plain(expectations: Expectations) -> dict[str, Any]:
    return {"path": expectations.path, "entries": [asdict(e) for e in expectations.entries]}


def _from_plain(data: dict[str, Any]) -> Expectations:
    entries = []
    for e in data["entries"]:
        location = Location(**e["location"]) if e.get("location") else None
        entries.append(Entry(e["test"], e["pipeline"], e["reason"], location))
    return Expectations(data["path"], tuple(entries))


def listed_pipelines(config: pytest.Config, test: str) -> dict[str, Entry]:
    """The pipelines of `test` listed as failing, by name (none without expectations)."""
    run = config.stash.get(EXPECTATIONS_KEY, None)
    listed = run.listed.get(test, {}) if run is not None else {}
    return {pipeline: e for pipeline, e in listed.items() if pipeline}


def note_checked(item: pytest.Item, pipelines: list[str], met: list[Entry]) -> None:
    """An execution check of `item` ran `pipelines`; `met` are the listed failures it met."""
    run = item.config.stash.get(EXPECTATIONS_KEY, None)
    if run is not None:
        run.checked.setdefault(item.nodeid, set()).update(pipelines)
        item.stash.setdefault(MET_KEY, []).extend(met)


def xpass_message(entry: Entry) -> str:
    where = f"pipeline '{entry.pipeline}': " if entry.pipeline else ""
    return f"{where}listed as failing in {entry.location}, now passes: remove the entry"


def xfail_reason(entry: Entry) -> str:
    where = f"pipeline '{entry.pipeline}': " if entry.pipeline else ""
    return f"{where}{entry.reason or 'listed as failing'} (listed in {entry.location})"


class ExpectationsRun:
    """A pytest plugin object (one per process): turns listed failures into strict xfails and
    finds the entries that match no test."""

    def __init__(self, config: pytest.Config, expectations: Expectations):
        self.config = config
        self.expectations = expectations
        self.listed = expectations.by_test()  # test -> pipeline ("" for the whole test) -> entry
        self.checked: dict[str, set[str]] = {}  # test -> the pipelines its checks ran
        self.collected: set[str] = set()
        self.files: set[str] = set()  # the files (node id's first part) collected
        self.found: list[dict[str, list[int]]] = []  # the workers' findings

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_WORKER_KEY] = _to_plain(self.expectations)

    @pytest.hookimpl(tryfirst=True)  # every test collected, before -k, -m and shards select
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.collected = {item.nodeid for item in items}
        self.files = {nodeid.split("::")[0] for nodeid in self.collected}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        if report.when != "call" or hasattr(report, "wasxfail"):
            return report
        entry = self.listed.get(item.nodeid, {}).get("")
        met = item.stash.get(MET_KEY, [])
        if entry is not None and report.failed:
            _xfailed(report, xfail_reason(entry))
        elif entry is not None and report.passed:
            report.outcome = "failed"
            report.longrepr = xpass_message(entry)
        elif met and report.passed:
            _xfailed(report, "; ".join(xfail_reason(e) for e in met))
        return report

    def findings(self) -> dict[str, list[int]]:
        """Which entries this process can judge (their file was collected, or is gone), which
        name a collected test, and which name a pipeline their test's checks never ran."""
        root = Path(self.config.rootpath)
        considered, named, unchecked = [], [], []
        for i, e in enumerate(self.expectations.entries):
            file = e.test.split("::")[0]
            if file in self.files or not (root / file).exists():
                considered.append(i)
            if e.test in self.collected:
                named.append(i)
            if e.pipeline and e.test in self.checked and e.pipeline not in self.checked[e.test]:
                unchecked.append(i)
        return {"considered": considered, "named": named, "unchecked": unchecked}

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_WORKER_KEY] = self.findings()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        found = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
        if found is not None:
            self.found.append(found)

    def stale(self) -> list[tuple[Entry, str]]:
        """The entries that match no test, each with why."""
        found = self.found or [self.findings()]
        considered = set().union(*(f["considered"] for f in found))
        named = set().union(*(f["named"] for f in found))
        unchecked = set().union(*(f["unchecked"] for f in found))
        stale = []
        for i, e in enumerate(self.expectations.entries):
            if i in considered and i not in named:
                stale.append((e, f"no test {e.test}"))
            elif i in unchecked:
                stale.append((e, f"{e.test} checks no pipeline '{e.pipeline}'"))
        return stale

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if getattr(self.config, "workeroutput", None) is not None:
            return
        for entry, why in self.stale():
            terminalreporter.write_line(
                f"mlirpipe: {entry.location}: the entry matches no test: {why}; remove it"
            )


def _xfailed(report: pytest.TestReport, reason: str) -> None:
    report.outcome = "skipped"
    report.wasxfail = reason
