"""RUN/CHECK files as pytest tests: lit's verdicts, mapped onto pytest outcomes."""

from __future__ import annotations

import re
import textwrap

import pytest
from litrun import lit_verdicts

from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

LLVM = find_llvm_filecheck()

IR = textwrap.dedent(
    """\
    func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    """
)

CANON = "// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(canonicalize)' | FileCheck %s\n"
FORBID = (
    "// RUN: not mlirpipe-opt %s --pass-pipeline "
    "'builtin.module(mlirpipe-forbid-ops{ops=arith.*})' 2>&1 | FileCheck %s\n"
)

FILES = {
    "pass.mlir": CANON + "// CHECK: arith.addf\n" + IR,
    "fail.mlir": CANON + "// CHECK: arith.mulf\n" + IR,
    "xfail.mlir": "// XFAIL: *\n" + CANON + "// CHECK: arith.subf\n" + IR,
    "xpass.mlir": "// XFAIL: *\n" + CANON + "// CHECK: arith.addf\n" + IR,
    "unsupported.mlir": "// REQUIRES: no-such-feature\n// RUN: false\n" + IR,
    "norun.mlir": "// CHECK: arith.addf\n" + IR,
    "not-pass-failure.mlir": FORBID
    + "// CHECK: error: 'arith.addf' is forbidden here by mlirpipe-forbid-ops\n"
    + IR,
}

EXPECTED = {
    "pass.mlir": ("passed", "PASS"),
    "fail.mlir": ("failed", "FAIL"),
    "xfail.mlir": ("xfailed", "XFAIL"),
    "xpass.mlir": ("failed", "XPASS"),
    "unsupported.mlir": ("skipped", "UNSUPPORTED"),
    "norun.mlir": ("failed", "UNRESOLVED"),
    "not-pass-failure.mlir": ("passed", "PASS"),
}

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""


@pytest.fixture
def suite(pytester: pytest.Pytester):
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    tests = pytester.mkdir("tests")
    for name, text in FILES.items():
        (tests / name).write_text(text)
    (tests / "Inputs").mkdir()
    (tests / "Inputs" / "plain.mlir").write_text("// CHECK: not a test\n" + IR)
    (tests / "input-only.mlir").write_text(IR)
    return pytester


def _pytest_outcomes(result: pytest.RunResult) -> dict[str, str]:
    out = {}
    for line in result.outlines:
        m = re.match(r"^tests/(\S+\.mlir)::\S+ (PASSED|FAILED|XFAIL|SKIPPED|ERROR)", line)
        if m:
            out[m.group(1)] = {
                "PASSED": "passed",
                "FAILED": "failed",
                "XFAIL": "xfailed",
                "SKIPPED": "skipped",
                "ERROR": "error",
            }[m.group(2)]
    return out


def test_each_verdict_maps_to_the_pytest_outcome(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests", "-v", "-p", "no:cacheprovider")
    assert _pytest_outcomes(result) == {n: e[0] for n, e in EXPECTED.items()}


def test_lit_and_pytest_give_the_same_verdict_on_every_file(suite: pytest.Pytester) -> None:
    lit_codes, output = lit_verdicts(suite.path, "tests")
    assert lit_codes == {n: e[1] for n, e in EXPECTED.items()}, output
    result = suite.runpytest("tests", "-v", "-p", "no:cacheprovider")
    assert _pytest_outcomes(result) == {n: e[0] for n, e in EXPECTED.items()}


def test_a_failure_shows_the_run_line_and_the_filecheck_diagnostic(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests/fail.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/fail.mlir:1: FAIL at RUN line 1",
            "  mlirpipe-opt */tests/fail.mlir --pass-pipeline 'builtin.module(canonicalize)'"
            " | FileCheck */tests/fail.mlir",
            "command: FileCheck */tests/fail.mlir",
            "exit status: 1",
            '  */tests/fail.mlir:2: error: Couldn\'t match "arith.mulf".',
            "failing directive:",
            "  2 | // CHECK: arith.mulf",
            "input around the failing position:",
            "  >> 1 | module {",
            "     2 |   func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {",
            "reproduce with:",
            "  cd * && mlirpipe-opt */tests/fail.mlir --pass-pipeline"
            " 'builtin.module(canonicalize)' | filecheck */tests/fail.mlir",  # the port ran
        ]
    )


def test_the_repro_runs_the_filecheck_the_test_ran(suite: pytest.Pytester) -> None:
    (suite.path / "tests" / "two.mlir").write_text(
        CANON.replace("FileCheck %s", "FileCheck %s --check-prefix=A \\")
        + "// RUN:   && cat %s | filecheck %s --check-prefix=B\n// A: arith.addf\n// B-NOT: RUN:\n"
        + IR
    )
    result = suite.runpytest("tests/two.mlir", "--mlirpipe-filecheck=python")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/two.mlir:1: FAIL at RUN line 1",
            "  mlirpipe-opt * | FileCheck */two.mlir --check-prefix=A * && cat */two.mlir"
            " | filecheck */two.mlir --check-prefix=B",
            "command: filecheck */two.mlir --check-prefix=B",
            "reproduce with:",
            "  cd * && mlirpipe-opt * | filecheck */two.mlir --check-prefix=A * && cat */two.mlir"
            " | filecheck */two.mlir --check-prefix=B",
        ]
    )


@pytest.mark.skipif(LLVM is None, reason="LLVM FileCheck not installed (llvm-22-tools)")
def test_the_repro_names_llvm_filecheck_when_it_ran(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests/fail.mlir", "--mlirpipe-filecheck=llvm")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "reproduce with:",
            f"  cd * && mlirpipe-opt * | {LLVM} */tests/fail.mlir",
        ]
    )


def test_a_skipped_file_is_located_at_itself_in_the_summary(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests/unsupported.mlir", "-rA", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED [[]1] tests/unsupported.mlir:1: Test requires the following unavailable*"]
    )


def test_xpass_says_the_file_passed_against_its_xfail_line(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests/xpass.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*XPASS: the file passed but its XFAIL line expects a failure*"])


def test_a_check_file_without_run_lines_is_reported_unresolved(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests/norun.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*UNRESOLVED: the test file is malformed*", "*Test has no 'RUN:' line*"]
    )


def test_unsupported_is_a_skip_with_lits_reason(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests/unsupported.mlir", "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*requires the following unavailable features: no-such-feature*"])


def test_plain_mlir_files_and_inputs_folders_are_not_collected(suite: pytest.Pytester) -> None:
    result = suite.runpytest("tests", "--collect-only", "-q", "-p", "no:cacheprovider")
    assert "input-only.mlir" not in result.stdout.str()
    assert "plain.mlir" not in result.stdout.str()
    assert "pass.mlir" in result.stdout.str()


def test_a_file_without_a_lit_config_uses_the_default_configuration(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".mlir", alone=FILES["pass.mlir"])
    result = pytester.runpytest("alone.mlir", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_bad_suffix_option_is_rejected_with_the_accepted_form(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mlirpipe-suffixes=mlir", "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*mlirpipe: suffixes must start with '.', got 'mlir'*"])


def test_the_help_lists_the_mlirpipe_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "MLIR lowering-pipeline tests (pytest-mlirpipe):",
            "*--mlirpipe-pipelines=DIR*",
            "*--mlirpipe-suffixes=LIST*",
            "*--mlirpipe-isolation={fork,none,subprocess}*",
            "*--mlirpipe-filecheck={auto,llvm,python,both}*",
            "*--mlirpipe-timeout=SECONDS*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*mlirpipe_tools (linelist):*",
            "*mlirpipe_tool_dirs (args):*",
            "*mlirpipe_features (args):*",
            "*mlirpipe_isolation (string):*",
            "*mlirpipe_filecheck (string):*",
            "*mlirpipe_timeout (string):*",
        ]
    )
