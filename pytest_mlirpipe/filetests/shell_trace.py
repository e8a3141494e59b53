"""What lit's internal shell did: the command results of a script, kept for reports."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


@dataclass(slots=True)
class ShellTrace:
    """The command results of the last script lit ran in this scope (for failure reports)."""

    results: list | None = None
    in_process: int = 0
    subprocesses: int = 0
    stdins: dict[int, str] = field(default_factory=dict)  # id(result) -> its stdin text
    # RUN line number -> its command as lit's shell was given it (lit 17 echoes none as it runs)
    commands: dict[int, str] = field(default_factory=dict)


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
        with keeping_commands(trace):
            yield trace
    finally:
        TestRunner.executeShCmd = original


@contextlib.contextmanager
def keeping_commands(trace: ShellTrace) -> Iterator[None]:
    """Keep, in `trace.commands`, the RUN lines of each script lit's internal shell is given."""
    import lit.TestRunner as TestRunner

    original = TestRunner.executeScriptInternal

    def execute_script(test, litConfig, tmpBase, commands, *args, **kwargs):
        trace.commands = run_commands(commands)  # before lit 17 rewrites them in place
        return original(test, litConfig, tmpBase, commands, *args, **kwargs)

    TestRunner.executeScriptInternal = execute_script
    try:
        yield
    finally:
        TestRunner.executeScriptInternal = original


_RUN_AT = re.compile(r"RUN: at line (\d+)")


def run_commands(script: Iterable[str]) -> dict[int, str]:
    """{N: COMMAND} for each `%dbg(RUN: at line N) COMMAND` of a script as lit's shell gets it."""
    import lit.TestRunner as TestRunner

    found: dict[int, str] = {}
    for ln in script:
        m = re.fullmatch(TestRunner.kPdbgRegex, ln, re.S)
        at = _RUN_AT.fullmatch(m.group(1)) if m else None
        if m and at:
            found.setdefault(int(at.group(1)), m.group(2).lstrip())
    return found
