"""A time limit ends a file's whole process tree: the tools its RUN lines started and their
children, also one that keeps printing. Under fork, none and subprocess isolation and under lit
the verdict is TIMEOUT, and no process the file started outlives it."""

from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import psutil
import pytest
from litrun import lit_verdicts

from pytest_mlirpipe import contain

# What the RUN lines run: a tool that starts a child and waits for it forever.
SPAWN = '''\
"""Start a child that sleeps (ARGV[2] == "sleep") or keeps printing ("print") for minutes,
append this process's pid and the child's to the file ARGV[1], then wait for the child. With
"orphan" the printing child is left behind as this process exits; with "leave", a sleeping
child that holds no pipe."""
import os
import subprocess
import sys

import psutil

PRINT = "import time\\nwhile True:\\n    print('still here', flush=True)\\n    time.sleep(0.01)"
SLEEP = "import time; time.sleep(300)"
mode = sys.argv[2]
quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL} if mode == "leave" else {}
code = PRINT if mode in ("print", "orphan") else SLEEP
child = subprocess.Popen([sys.executable, "-c", code], **quiet)
with open(sys.argv[1], "a") as f:
    # each pid with its start time: a pid the kernel hands out again is another process
    for pid in (os.getpid(), child.pid):
        f.write(f"{pid}@{psutil.Process(pid).create_time()!r}\\n")
if mode in ("sleep", "print"):
    # A child killed by the time limit (lit kills children first) is not a success: exiting 0
    # then would race the kill of this process, and lit calls an exit status of 0 a PASS.
    sys.exit(child.wait() or 1)
'''

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""

IR = "func.func @f() {\n  return\n}\n"


def _files(pids: Path) -> dict[str, str]:
    """The test files: each RUN line's tool notes its pids in `pids`."""
    spawn = "%python %S/../spawn.py " + str(pids)
    return {
        # its own limit; a sleeping grandchild
        "sleeper.mlir": f"// MLIRPIPE-TIMEOUT: 2\n// RUN: {spawn} sleep\n// CHECK: never\n{IR}",
        # the run's limit; a grandchild that prints into the pipe to filecheck, past the limit
        "printer.mlir": f"// RUN: {spawn} print | filecheck %s\n// CHECK: never\n{IR}",
    }


@pytest.fixture
def suite(pytester: pytest.Pytester):
    """A lit suite of files whose tools never end; every process they started is killed
    when the test ends, whatever its outcome."""
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    (pytester.path / "spawn.py").write_text(SPAWN)
    tests = pytester.mkdir("tests")
    for name, text in _files(pytester.path / "pids").items():
        (tests / name).write_text(text)
    yield pytester
    for p in _alive(_recorded(pytester.path / "pids")):
        with contextlib.suppress(psutil.Error):
            p.kill()


def _recorded(pids: Path) -> list[tuple[int, float]]:
    """(pid, start time) of each process the tools noted in `pids`."""
    if not pids.exists():
        return []
    return [(int(p), float(t)) for p, t in (w.split("@") for w in pids.read_text().split())]


def _alive(recorded: list[tuple[int, float]]) -> list[psutil.Process]:
    """The recorded processes that still run (a zombie has ended; a pid now held by a process
    started at another time, after the kernel reused it, is not one of them)."""
    found = []
    for pid, started in recorded:
        with contextlib.suppress(psutil.Error):
            p = psutil.Process(pid)
            if p.create_time() == started and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
    return found


def _assert_all_ended(suite: pytest.Pytester, runs: int) -> None:
    """Each file's tool and its child were started (`runs` times in all) and are gone."""
    pids = _recorded(suite.path / "pids")
    assert len(pids) == 2 * runs, pids
    # Killed ones may still be on their way out: give the kernel a moment.
    _, alive = psutil.wait_procs(_alive(pids), timeout=5)
    assert not alive, f"still running after the TIMEOUT: {alive}"


MODES = {
    "fork": ("--mlirpipe-isolation=fork",),
    "none": ("--mlirpipe-isolation=none",),
    "subprocess": ("--mlirpipe-isolation=subprocess",),
    "xdist": ("--mlirpipe-isolation=fork", "-n", "2"),
    # the tools forked from the test process (the file's forked child, or the process itself)
    "preload": ("--mlirpipe-isolation=fork", "--mlirpipe-preload=on"),
    "preload-none": ("--mlirpipe-isolation=none", "--mlirpipe-preload=on"),
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_timeout_kills_the_tools_and_their_children(suite, mode):
    result = suite.runpytest(
        "tests", *MODES[mode], "--mlirpipe-timeout=2", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    for name in ("printer.mlir", "sleeper.mlir"):
        assert re.search(rf"^tests/{name}: TIMEOUT: the test took too long$", text, re.M), text
    _assert_all_ended(suite, runs=2)


def test_lit_gives_the_same_verdict_and_leaves_no_process(suite):
    codes, output = lit_verdicts(suite.path, "--timeout=2", "tests")
    assert codes == {"printer.mlir": "TIMEOUT", "sleeper.mlir": "TIMEOUT"}, output
    _assert_all_ended(suite, runs=2)


def _orphan_files(pids: Path) -> dict[str, str]:
    """Files whose tool exits and leaves a child behind: one printing into the pipe to
    filecheck (the file can only time out), one sleeping apart (the file passes)."""
    spawn = "%python %S/../spawn.py " + str(pids)
    return {
        "orphan.mlir": f"// RUN: {spawn} orphan | filecheck %s\n// CHECK: never\n{IR}",
        "leaver.mlir": f"// RUN: {spawn} leave\n// RUN: echo ok | filecheck %s\n// CHECK: ok\n{IR}",
    }


@pytest.mark.parametrize("mode", ["fork", "xdist"])
def test_a_process_left_by_a_tool_that_exited_ends_with_its_file(suite, mode):
    """Forked files adopt their tools' orphans: one keeping the file's pipe open goes at the
    TIMEOUT, one left sleeping goes when its file passes (where lit gives the same verdict;
    lit itself never ends the first file: the orphan is outside the tree it kills and holds
    the pipe lit reads)."""
    tests = suite.path / "tests"
    for name in ("printer.mlir", "sleeper.mlir"):
        (tests / name).unlink()
    for name, text in _orphan_files(suite.path / "pids").items():
        (tests / name).write_text(text)
    result = suite.runpytest(
        "tests", *MODES[mode], "--mlirpipe-timeout=2", "-p", "no:cacheprovider", "-rA"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.re_match_lines([r"^tests/orphan.mlir: TIMEOUT: the test took too long$"])
    _assert_all_ended(suite, runs=2)
    codes, output = lit_verdicts(suite.path, "--timeout=2", "tests/leaver.mlir")
    assert codes == {"leaver.mlir": "PASS"}, output


def test_a_forked_run_that_times_out_ends_with_its_whole_tree(tmp_path):
    pids = tmp_path / "pids"
    (tmp_path / "spawn.py").write_text(SPAWN)

    def work():
        import subprocess
        import sys

        subprocess.run([sys.executable, str(tmp_path / "spawn.py"), str(pids), "sleep"])

    try:
        ended = contain.run_contained(work, timeout=2)
        assert (ended.kind, ended.detail) == ("timeout", "no result after 2 s")
        _, alive = psutil.wait_procs(_alive(_recorded(pids)), timeout=5)
        assert not alive
        assert len(_recorded(pids)) == 2
    finally:
        for p in _alive(_recorded(pids)):
            p.kill()


def test_a_child_that_never_stops_writing_notes_still_times_out():
    def chatter():
        while True:  # the pipe to the parent is never empty
            contain.note("still here " + "." * 4000)

    ended = contain.run_contained(chatter, timeout=1)
    assert ended.kind == "timeout"
    assert ended.notes[-1].startswith("still here ...")
    assert ended.seconds < 10


SLOW_PASSES = """\
import time
from pytest_mlirpipe.lowering import passes

passes.register("sleep-3s", "returns after 3 seconds")(
    lambda options: lambda op, pass_: time.sleep(3)
)
"""


def test_with_isolation_none_an_in_process_hang_is_not_stopped_but_is_a_timeout(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    """What --help and docs/guides/stage-tests.md say: under `none` the limit cannot stop work in
    the test process; the file is a TIMEOUT once that work ends, as lit, which kills it, says."""
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    (pytester.path / "slow_passes.py").write_text(SLOW_PASSES)
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "slow_passes")
    pytester.makefile(
        ".mlir",
        slow="// MLIRPIPE-TIMEOUT: 1\n"
        "// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(sleep-3s)' | filecheck %s\n"
        f"// CHECK: func.func\n{IR}",
    )
    start = time.perf_counter()
    result = pytester.runpytest("--mlirpipe-isolation=none", "-p", "no:cacheprovider")
    assert time.perf_counter() - start >= 3
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["slow.mlir: TIMEOUT: the test took too long"])
    codes, output = lit_verdicts(pytester.path, "slow.mlir")
    assert codes == {"slow.mlir": "TIMEOUT"}, output


def test_the_help_says_what_isolation_none_does_with_a_time_limit(pytester: pytest.Pytester):
    result = pytester.runpytest("--help")
    text = " ".join(result.stdout.str().split())  # as one line, however the help is wrapped
    assert (
        "none (in this process, where a time limit cannot stop a hang), subprocess (every "
        "tool a process, as lit does)" in text
    )
    assert (
        "per-file time limit, 0 for none; at the limit every process the file started is "
        "killed. Isolation none cannot stop a hang in what it runs in this process "
        "(mlirpipe-opt, filecheck, compiled code) (default 0; ini: mlirpipe_timeout)" in text
    )
    assert "mlirpipe_isolation (string): fork, none (no time limit on in-process work) or" in text
    assert (
        "mlirpipe_timeout (string): per-file time limit in seconds (0: none; with isolation "
        "none it cannot stop a hang inside in-process work)" in text
    )


@pytest.mark.parametrize("isolation", ["none", "subprocess"])
def test_a_file_limit_without_lits_time_limits_is_unresolved_with_the_fix(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, isolation: str
):
    import lit.util

    why = "Requires the Python psutil module but it could not be found."
    monkeypatch.setattr(lit.util, "killProcessAndChildrenIsSupported", lambda: (False, why))
    pytester.makefile(
        ".mlir",
        limited=f"// MLIRPIPE-TIMEOUT: 5\n// RUN: mlirpipe-opt %s | filecheck %s\n"
        f"// CHECK: func.func\n{IR}",
    )
    result = pytester.runpytest(f"--mlirpipe-isolation={isolation}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "limited.mlir: UNRESOLVED: the test file is malformed",
            f"*/limited.mlir:1: error: MLIRPIPE-TIMEOUT needs lit's time limits, which are not "
            f"available here: {why}",
            "  hint: pip install psutil",
        ]
    )
