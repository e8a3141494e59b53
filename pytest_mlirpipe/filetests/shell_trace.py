"""What lit's internal shell did: the command results of a script, kept for reports."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(slots=True)
class ShellTrace:
    """The command results of the last script lit ran in this scope (for failure reports)."""

    results: list | None = None
    in_process: int = 0
    subprocesses: int = 0
    stdins: dict[int, str] = field(default_factory=dict)  # id(result) -> its stdin text


@contextlib.contextmanager
def recording() -> Iterator[ShellTrace]:
    """Keep the command results of lit's shell (tools stay subprocesses)."""
    import lit.TestRunner as TestRunner

    original = TestRunner.executeShCmd
    trace = ShellTrace()

    def execute_top(cmd, shenv, results, timeout=0):
        trace.results = results
        return original(cmd, shenv, results, timeout)

    TestRunner.executeShCmd = execute_top
    try:
        yield trace
    finally:
        TestRunner.executeShCmd = original
