"""Expected crashes and hangs are data: MLIRPIPE-EXPECT: crash / timeout and MLIRPIPE-TIMEOUT: N
give the same verdicts under lit and under pytest. (lit's `not --crash` needs LLVM's `not`
binary on PATH, so it is not used here.)"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from litrun import lit_verdicts

HERE = Path(__file__).parent  # crash_passes.py: passes that abort, segfault or hang
IR = """\
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""


def _run_line(pass_name: str, prefix: str = "") -> str:
    return (
        f"// RUN: {prefix}mlirpipe-opt %s --pass-pipeline 'builtin.module({pass_name})' "
        "| filecheck %s\n"
    )


CHECK = "// CHECK: arith.addf\n"
FILES = {
    "expect-crash.mlir": "// MLIRPIPE-EXPECT: crash\n" + _run_line("crash-abort") + CHECK + IR,
    "expect-crash-segv.mlir": "// MLIRPIPE-EXPECT: crash\n" + _run_line("crash-segv") + CHECK + IR,
    "expect-crash-wrong-answer.mlir": (
        "// MLIRPIPE-EXPECT: crash\n" + _run_line("canonicalize") + "// CHECK: arith.mulf\n" + IR
    ),
    "expect-crash-passes.mlir": (
        "// MLIRPIPE-EXPECT: crash\n" + _run_line("canonicalize") + CHECK + IR
    ),
    "expect-timeout.mlir": (
        "// MLIRPIPE-EXPECT: timeout\n// MLIRPIPE-TIMEOUT: 1\n" + _run_line("crash-hang") + IR
    ),
    "expect-timeout-ends.mlir": (
        "// MLIRPIPE-EXPECT: timeout\n// MLIRPIPE-TIMEOUT: 20\n"
        + _run_line("canonicalize")
        + CHECK
        + IR
    ),
    "file-timeout.mlir": "// MLIRPIPE-TIMEOUT: 1\n" + _run_line("crash-hang") + CHECK + IR,
    "wrong-answer-xfail.mlir": "// XFAIL: *\n" + _run_line("canonicalize") + "// CHECK: x.y\n" + IR,
}
EXPECTED = {  # lit's code, pytest's outcome
    "expect-crash.mlir": ("XFAIL", "xfailed"),
    "expect-crash-segv.mlir": ("XFAIL", "xfailed"),
    "expect-crash-wrong-answer.mlir": ("FAIL", "failed"),
    "expect-crash-passes.mlir": ("FAIL", "failed"),
    "expect-timeout.mlir": ("XFAIL", "xfailed"),
    "expect-timeout-ends.mlir": ("FAIL", "failed"),
    "file-timeout.mlir": ("TIMEOUT", "failed"),
    "wrong-answer-xfail.mlir": ("XFAIL", "xfailed"),
}


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(HERE), prepend=os.pathsep)  # and the code under test
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "crash_passes")
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    tests = pytester.mkdir("tests")
    for name, text in FILES.items():
        (tests / name).write_text(text)
    return pytester


def _lit(suite: pytest.Pytester, *args: str) -> dict[str, str]:
    codes, output = lit_verdicts(suite.path, *args)
    return codes | {"_output": output}


def _pytest_outcomes(result: pytest.RunResult) -> dict[str, str]:
    words = {"PASSED": "passed", "FAILED": "failed", "XFAIL": "xfailed", "SKIPPED": "skipped"}
    out = {}
    for line in result.outlines:
        m = re.search(r"\b(PASSED|FAILED|XFAIL|SKIPPED) tests/(\S+\.mlir)::", line) or re.search(
            r"^tests/(\S+\.mlir)::\S+ (PASSED|FAILED|XFAIL|SKIPPED)", line
        )
        if m:
            word, name = sorted(m.groups(), key=lambda g: g not in words)
            out[name] = words[word]
    return out


needs_psutil = pytest.mark.skipif(
    not __import__("lit.util").util.killProcessAndChildrenIsSupported()[0],
    reason="lit's time limits need psutil",
)


@needs_psutil
def test_lit_and_pytest_agree_on_expected_crashes_and_hangs(suite):
    lit = _lit(suite, "tests")
    output = lit.pop("_output")
    assert lit == {n: e[0] for n, e in EXPECTED.items()}, output
    result = suite.runpytest("tests", "-v", "-p", "no:cacheprovider")
    assert _pytest_outcomes(result) == {n: e[1] for n, e in EXPECTED.items()}


def test_under_xdist_the_outcomes_are_the_same(suite):
    result = suite.runpytest("tests", "-v", "-n", "2", "-p", "no:cacheprovider")
    assert _pytest_outcomes(result) == {n: e[1] for n, e in EXPECTED.items()}


def test_an_expected_crash_is_an_xfail_that_names_the_signal(suite):
    result = suite.runpytest("tests/expect-crash.mlir", "-rx", "-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "XFAIL tests/expect-crash.mlir::* - XFAIL: crashed as MLIRPIPE-EXPECT: crash expects"
            " (SIGABRT)"
        ]
    )
    assert not list(suite.path.glob("build/**/*.repro")), "an expected crash needs no repro"


def test_an_expected_hang_is_an_xfail_that_says_so(suite):
    result = suite.runpytest("tests/expect-timeout.mlir", "-rx", "-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "XFAIL tests/expect-timeout.mlir::* - XFAIL: timed out after 1 s as MLIRPIPE-EXPECT:"
            " timeout expects"
        ]
    )


def test_an_expected_crash_that_fails_otherwise_says_it_did_not_crash(suite):
    result = suite.runpytest("tests/expect-crash-wrong-answer.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/expect-crash-wrong-answer.mlir:2: FAIL at RUN line 2",
            "  */tests/expect-crash-wrong-answer.mlir:1: error: MLIRPIPE-EXPECT: crash, but no"
            " command was killed by a signal (it failed without a crash)",
            "    hint: a crash is a signal (abort, segfault); for a wrong answer or an error exit"
            " use XFAIL: *",
        ]
    )


def test_an_expected_crash_that_passes_says_so(suite):
    result = suite.runpytest("tests/expect-crash-passes.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/expect-crash-passes.mlir: FAIL: the file did not end as it expects",
            "*/tests/expect-crash-passes.mlir:1: error: MLIRPIPE-EXPECT: crash, but no command"
            " was killed by a signal (the file passed)",
        ]
    )


def test_an_expected_hang_that_ends_says_so(suite):
    result = suite.runpytest("tests/expect-timeout-ends.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*/tests/expect-timeout-ends.mlir:1: error: MLIRPIPE-EXPECT: timeout, but the file"
            " ended within 20 s (passed)"
        ]
    )


def test_the_file_timeout_overrides_the_session_timeout_and_is_named(suite):
    result = suite.runpytest(
        "tests/file-timeout.mlir", "--mlirpipe-timeout=300", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/file-timeout.mlir: TIMEOUT: the test took too long",
            "no verdict after 1 s (MLIRPIPE-TIMEOUT at line 1), while running RUN line 2: *",
        ]
    )


@needs_psutil
def test_lits_own_timeout_option_stops_a_hang_under_lit(suite):
    (suite.path / "tests" / "hang.mlir").write_text(_run_line("crash-hang") + CHECK + IR)
    # a limit the crashing file's tools start well within, even on a loaded machine
    lit = _lit(suite, "--timeout=8", "tests/hang.mlir", "tests/expect-crash.mlir")
    output = lit.pop("_output")
    assert lit == {"hang.mlir": "TIMEOUT", "expect-crash.mlir": "XFAIL"}, output


@needs_psutil
def test_the_file_timeout_holds_when_tools_run_as_processes(suite):
    result = suite.runpytest(
        "tests/file-timeout.mlir",
        "tests/expect-timeout.mlir",
        "--mlirpipe-isolation=subprocess",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=1, xfailed=1)


BAD = {
    "unknown-kind.mlir": (
        "// MLIRPIPE-EXPECT: crsh\n",
        [
            "*/tests/unknown-kind.mlir:1: error: MLIRPIPE-EXPECT takes 'crash' or 'timeout',"
            " got 'crsh'",
            "  hint: did you mean 'crash'?; for an expected wrong answer use XFAIL: *",
        ],
    ),
    "bad-timeout.mlir": (
        "// MLIRPIPE-TIMEOUT: soon\n",
        [
            "*/tests/bad-timeout.mlir:1: error: MLIRPIPE-TIMEOUT takes a number of seconds > 0,"
            " got 'soon'",
            "  hint: e.g. MLIRPIPE-TIMEOUT: 30",
        ],
    ),
    "timeout-without-limit.mlir": (
        "// MLIRPIPE-EXPECT: timeout\n",
        [
            "*/tests/timeout-without-limit.mlir:1: error: MLIRPIPE-EXPECT: timeout needs a"
            " MLIRPIPE-TIMEOUT line",
        ],
    ),
    "unknown-directive.mlir": (
        "// MLIRPIPE-EXPCT: crash\n",
        [
            "*/tests/unknown-directive.mlir:1: error: unknown directive 'MLIRPIPE-EXPCT'",
            "  hint: did you mean 'MLIRPIPE-EXPECT'?",
        ],
    ),
    "with-xfail.mlir": (
        "// XFAIL: *\n// MLIRPIPE-EXPECT: crash\n",
        [
            "*/tests/with-xfail.mlir:2: error: MLIRPIPE-EXPECT and XFAIL exclude each other",
            "  hint: MLIRPIPE-EXPECT: crash/timeout expects that way of ending; XFAIL: * expects"
            " a wrong answer or an error; keep one",
        ],
    ),
    "twice.mlir": (
        "// MLIRPIPE-EXPECT: crash\n// MLIRPIPE-EXPECT: crash\n",
        ["*/tests/twice.mlir:2: error: a second MLIRPIPE-EXPECT line (the first is line 1)"],
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_malformed_expectation_is_unresolved_with_a_located_message(suite, name):
    text, expected = BAD[name]
    (suite.path / "tests" / name).write_text(text + _run_line("canonicalize") + CHECK + IR)
    result = suite.runpytest(f"tests/{name}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"tests/{name}: UNRESOLVED: the test file is malformed", *expected]
    )
