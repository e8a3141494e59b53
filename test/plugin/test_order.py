"""lit's smart order under pytest: last run's failures first, then the longest files first,
from the times pytest's cache kept; `lexical` keeps collection order; other tests stay put."""

from __future__ import annotations

import re

import pytest

from pytest_mlirpipe.ordering import DURATIONS_KEY

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""


def _file(seconds: float, check: str = "ok") -> str:
    sleep = f"%python -c \"import time; time.sleep({seconds}); print('ok')\""
    return f"// RUN: {sleep} | filecheck %s\n// CHECK: {check}\n"


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    # every file pays the same start-up (a forked run's first file would also pay the warm-up)
    pytester.makeini("[pytest]\nmlirpipe_isolation = subprocess\n")
    pytester.makefile(".mlir", a_short=_file(0), b_long=_file(0.3), c_middle=_file(0.2))
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    return pytester


def _order(result: pytest.RunResult) -> list[str]:
    """The tests in the order -v reported them."""
    found = re.findall(r"^(\S+::\S+) (?:PASSED|FAILED)", result.stdout.str(), re.M)
    return [name.split("::")[-1] for name in found]


def _record(suite: pytest.Pytester, seconds: dict[str, float]) -> None:
    """Replace the times pytest's cache kept with `seconds` (file name -> seconds): the order
    then follows them exactly, however loaded the machine was when they were measured."""
    import json

    path = suite.path / ".pytest_cache" / "v" / "mlirpipe" / "durations"
    assert path.exists(), "the first run kept no times"
    path.write_text(json.dumps({f"{n}::{n}": t for n, t in seconds.items()}))


def test_the_second_run_starts_with_the_longest_file(suite):
    first = suite.runpytest("-v")
    first.assert_outcomes(passed=4)
    assert _order(first) == ["a_short.mlir", "b_long.mlir", "c_middle.mlir", "test_plain"]
    times = suite.runpytest("--cache-show", DURATIONS_KEY).stdout.str()
    assert "b_long.mlir::b_long.mlir" in times, times
    _record(suite, {"a_short.mlir": 0.1, "b_long.mlir": 3.0, "c_middle.mlir": 1.5})
    second = suite.runpytest("-v")
    assert _order(second) == ["b_long.mlir", "c_middle.mlir", "a_short.mlir", "test_plain"]


def test_last_runs_failure_comes_first_and_lexical_keeps_collection_order(suite):
    suite.runpytest().assert_outcomes(passed=4)
    suite.makefile(".mlir", a_short=_file(0, check="missing"))
    suite.runpytest().assert_outcomes(passed=3, failed=1)
    _record(suite, {"a_short.mlir": 0.1, "b_long.mlir": 3.0, "c_middle.mlir": 1.5})
    again = suite.runpytest("-v")
    assert _order(again)[:3] == ["a_short.mlir", "b_long.mlir", "c_middle.mlir"]
    lexical = suite.runpytest("-v", "--mlirpipe-order=lexical")
    assert _order(lexical) == ["a_short.mlir", "b_long.mlir", "c_middle.mlir", "test_plain"]


def test_with_xdist_workers_collect_the_same_order_and_the_times_are_kept(suite):
    suite.runpytest("-n", "2").assert_outcomes(passed=4)
    suite.runpytest("-n", "2").assert_outcomes(passed=4)  # no "different tests collected"
    times = suite.runpytest("--cache-show", DURATIONS_KEY).stdout.str()
    assert "c_middle.mlir::c_middle.mlir" in times, times


def test_an_unknown_order_is_refused_with_the_choices(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "-o", "mlirpipe_order=random")
    result.stderr.fnmatch_lines(
        ["*mlirpipe: mlirpipe_order must be one of smart, lexical, got 'random'*"]
    )


def test_under_xdist_the_two_longest_files_start_first_one_on_each_worker(pytester):
    """xdist's own first batches hand consecutive tests to one worker (the two longest to the
    same one); in smart order they are dealt one at a time, as lit's workers take files."""
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    pytester.makeini("[pytest]\nmlirpipe_isolation = subprocess\n")
    log = pytester.path / "started"
    note = f"%python -c \"open(r'{log}', 'a').write('%{{name}}\\n')\""
    names = [f"f{i}" for i in range(6)]
    for name in names:
        text = f"// DEFINE: %{{name}} = {name}\n// RUN: {note}\n// RUN: echo ok | filecheck %s\n"
        pytester.makefile(".mlir", **{name: text + "// CHECK: ok\n"})
    pytester.runpytest().assert_outcomes(passed=6)
    _record(suite=pytester, seconds={"f4.mlir": 9.0, "f5.mlir": 8.0})  # the last two collected
    log.unlink()
    pytester.runpytest("-n", "2").assert_outcomes(passed=6)
    started = log.read_text().split()
    assert set(started[:2]) == {"f4", "f5"}, started
