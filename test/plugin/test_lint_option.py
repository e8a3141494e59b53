"""mlirpipe_lint / --mlirpipe-lint: CHECK lines FileCheck would ignore, found at collection, are a
warning each (warn, the default), fail the file (error) or go unsaid (off); also under -n 2."""

from __future__ import annotations

import pytest

# The file's own text is FileCheck's input: its checks pass, the misspelled one is ignored.
PLANTED = (
    "// RUN: FileCheck %s --input-file=%s\n"
    "// CHECK: func.func @f\n"
    "// CHEK: never checked\n"
    "func.func @f() {\n  return\n}\n"
)
CLEAN = PLANTED.replace("// CHEK: never checked\n", "// CHECK-NEXT: // CHEK\n")
WARNING = (
    "*t.mlir:3: MlirpipeLintWarning: 'CHEK:' is not a directive FileCheck knows, so it ignores "
    "the line; did you mean 'CHECK:'? [[]misspelled-directive]"
)
ERROR = (
    "t.mlir:3: error: 'CHEK:' is not a directive FileCheck knows, so it ignores the line; "
    "did you mean 'CHECK:'? [misspelled-directive]"
)
XDIST = pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])


@pytest.fixture
def planted(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".mlir", t=PLANTED, clean=CLEAN)
    return pytester


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # (this project's own suite turns warnings into errors; a user's shows them)
    return pytester.runpytest("-p", "no:cacheprovider", "-W", "default", *args)


@XDIST
def test_warn_is_the_default_and_says_each_line_once(planted, workers):
    result = _run(planted, *workers)
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines(
        ["*= warnings summary =*", "t.mlir:3", WARNING, "    // CHEK: never checked"]
    )


@XDIST
def test_error_fails_the_file_at_collection_with_each_line(planted, workers):
    result = _run(planted, "--mlirpipe-lint=error", *workers)
    # pytest stops at a collection error; xdist runs the other files first
    result.assert_outcomes(passed=1 if workers else 0, errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting t.mlir*"])
    assert result.stdout.lines.count(ERROR) == 1


@XDIST
def test_off_says_nothing(planted, workers):
    planted.makeini("[pytest]\nmlirpipe_lint = off\n")
    result = _run(planted, *workers)
    result.assert_outcomes(passed=2)
    assert "MlirpipeLintWarning" not in result.stdout.str()


def test_the_ini_key_chooses_error_and_the_flag_wins_over_it(planted):
    planted.makeini("[pytest]\nmlirpipe_lint = error\n")
    _run(planted).assert_outcomes(errors=1)
    _run(planted, "--mlirpipe-lint=warn").assert_outcomes(passed=2, warnings=1)


def test_a_filter_that_makes_every_warning_an_error_leaves_them_warnings(planted):
    planted.makeini("[pytest]\nfilterwarnings =\n    error\n")
    result = planted.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines([WARNING])


def test_a_filter_that_names_the_lint_warning_as_an_error_fails_the_file(planted):
    planted.makeini("[pytest]\nfilterwarnings =\n    error::pytest_mlirpipe.MlirpipeLintWarning\n")
    result = planted.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert result.stdout.lines.count(ERROR) == 1


def test_a_filter_can_silence_the_lint_warning_by_its_public_name(planted):
    planted.makeini(
        "[pytest]\nfilterwarnings =\n    error\n    ignore::pytest_mlirpipe.MlirpipeLintWarning\n"
    )
    planted.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_an_unknown_mode_stops_the_run_with_the_accepted_ones(planted):
    planted.makeini("[pytest]\nmlirpipe_lint = loud\n")
    result = _run(planted)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: mlirpipe: mlirpipe_lint must be one of off, warn, error, got 'loud'"]
    )


# Writes down which process linted which file (xdist's worker id, "main" without xdist).
COUNTING_CONFTEST = """
import os
from pathlib import Path

import pytest_mlirpipe.filetests.lint as lint

_real = lint.lint_file


def _counted(test, path):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(__file__).parent / "linted.log", "a") as log:
        log.write(f"{worker} {path.name}\\n")
    return _real(test, path)


lint.lint_file = _counted
"""


def _linted(pytester: pytest.Pytester) -> list[str]:
    return sorted((pytester.path / "linted.log").read_text().splitlines())


def test_under_xdist_one_worker_lints_when_findings_only_warn(planted):
    planted.makeconftest(COUNTING_CONFTEST)
    result = _run(planted, "-n", "2")
    result.assert_outcomes(passed=2, warnings=1)
    assert _linted(planted) == ["gw0 clean.mlir", "gw0 t.mlir"]


@pytest.mark.parametrize(
    "setting",
    [
        ("--mlirpipe-lint=error",),
        ("-W", "error::pytest_mlirpipe.MlirpipeLintWarning"),
    ],
    ids=["lint-error", "filter-error"],
)
def test_under_xdist_every_worker_lints_when_a_finding_fails_its_file(planted, setting):
    planted.makeconftest(COUNTING_CONFTEST)
    result = planted.runpytest("-p", "no:cacheprovider", "-n", "2", *setting)
    result.assert_outcomes(passed=1, errors=1)
    linted = _linted(planted)
    assert linted == ["gw0 clean.mlir", "gw0 t.mlir", "gw1 clean.mlir", "gw1 t.mlir"]
