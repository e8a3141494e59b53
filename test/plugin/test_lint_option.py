"""mlirpipe_lint / --mlirpipe-lint: CHECK lines FileCheck would ignore, found as each file's test
starts, are a warning each (warn, the default), fail the file (error) or go unsaid (off); also
under -n 2, where each file is linted once, by the worker that runs it."""

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
        ["*= warnings summary =*", "t.mlir::t.mlir", WARNING, "    // CHEK: never checked"]
    )


@XDIST
def test_error_fails_the_file_with_each_line_and_the_run_goes_on(planted, workers):
    result = _run(planted, "--mlirpipe-lint=error", *workers)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED t.mlir::t.mlir*"])
    assert result.stdout.lines.count(ERROR) == 1


@XDIST
def test_off_says_nothing(planted, workers):
    planted.makeini("[pytest]\nmlirpipe_lint = off\n")
    result = _run(planted, *workers)
    result.assert_outcomes(passed=2)
    assert "MlirpipeLintWarning" not in result.stdout.str()


def test_the_ini_key_chooses_error_and_the_flag_wins_over_it(planted):
    planted.makeini("[pytest]\nmlirpipe_lint = error\n")
    _run(planted).assert_outcomes(passed=1, failed=1)
    _run(planted, "--mlirpipe-lint=warn").assert_outcomes(passed=2, warnings=1)


def test_a_filter_that_makes_every_warning_an_error_leaves_them_warnings(planted):
    planted.makeini("[pytest]\nfilterwarnings =\n    error\n")
    result = planted.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines([WARNING])


def test_a_filter_that_names_the_lint_warning_as_an_error_fails_the_file(planted):
    planted.makeini("[pytest]\nfilterwarnings =\n    error::pytest_mlirpipe.MlirpipeLintWarning\n")
    result = planted.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
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


# A first CHECK-NEXT: the Python port matches it against the input's first line (here the
# file's own first line); LLVM's FileCheck refuses it.
NEXT_FIRST = "// RUN: FileCheck %s --input-file=%s\n// CHECK-NEXT: RUN: FileCheck\n"
NOTHING_TO_FOLLOW = (
    "*t.mlir:2: MlirpipeLintWarning: 'CHECK-NEXT:' comes before any match of the FileCheck of "
    "RUN line 1, so it has no line to follow; write 'CHECK:' or 'CHECK-LABEL:' for the first "
    "match [[]nothing-to-follow]"
)


def test_a_first_check_next_is_judged_by_the_filecheck_engine_the_run_chose(pytester):
    from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

    pytester.makefile(".mlir", t=NEXT_FIRST)
    result = _run(pytester, "--mlirpipe-filecheck=python")
    result.assert_outcomes(passed=1)
    assert "MlirpipeLintWarning" not in result.stdout.str()
    if find_llvm_filecheck() is None:
        pytest.skip("no LLVM FileCheck installed")
    result = _run(pytester, "--mlirpipe-filecheck=llvm")
    result.assert_outcomes(failed=1, warnings=1)
    result.stdout.fnmatch_lines([NOTHING_TO_FOLLOW])


# Writes down which process linted which file (xdist's worker id, "main" without xdist).
COUNTING_CONFTEST = """
import os
from pathlib import Path

import pytest_mlirpipe.filetests.lint as lint

_real = lint.lint_file


def _counted(test, path, *engine):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(__file__).parent / "linted.log", "a") as log:
        log.write(f"{worker} {path.name}\\n")
    return _real(test, path, *engine)


lint.lint_file = _counted
"""


def _linted(pytester: pytest.Pytester) -> list[str]:
    return sorted((pytester.path / "linted.log").read_text().splitlines())


@pytest.mark.parametrize(
    "setting",
    [(), ("--mlirpipe-lint=error",), ("-W", "error::pytest_mlirpipe.MlirpipeLintWarning")],
    ids=["warn", "lint-error", "filter-error"],
)
def test_under_xdist_each_file_is_linted_once_by_the_worker_that_runs_it(planted, setting):
    planted.makeconftest(COUNTING_CONFTEST)
    planted.runpytest("-p", "no:cacheprovider", "-W", "default", "-n", "2", *setting)
    linted = _linted(planted)
    assert sorted(line.split()[1] for line in linted) == ["clean.mlir", "t.mlir"]
    assert all(line.split()[0] in ("gw0", "gw1") for line in linted)


def test_collection_alone_lints_nothing(planted):
    planted.makeconftest(COUNTING_CONFTEST)
    result = _run(planted, "--collect-only", "-q")
    result.stdout.fnmatch_lines(["t.mlir::t.mlir"])
    assert not (planted.path / "linted.log").exists()
