"""mlirpipe_filecheck / --mlirpipe-filecheck / lit's --param mlirpipe_filecheck: which FileCheck
RUN lines get, and an explicit `mlirpipe_tools = FileCheck=...` always wins."""

from __future__ import annotations

import pytest
from litrun import lit_verdicts

from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

LLVM = find_llvm_filecheck()
needs_llvm = pytest.mark.skipif(
    LLVM is None, reason="no LLVM FileCheck here (Debian: apt-get install llvm-22-tools)"
)
LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""
IR = "func.func @f() {\n  return\n}\n"
FAILING = (
    "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s\n"
    "// CHECK: func.func @f\n// CHECK: arith.addf\n" + IR
)


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch) -> pytest.Pytester:
    monkeypatch.delenv("MLIRPIPE_FILECHECK", raising=False)
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    (pytester.path / "fails.mlir").write_text(FAILING)
    return pytester


def _ini(suite: pytest.Pytester, *lines: str) -> None:
    (suite.path / "pytest.ini").write_text("[pytest]\n" + "".join(f"{ln}\n" for ln in lines))


def test_an_explicit_filecheck_tool_wins_over_the_builtin_one(suite):
    tool = suite.mkdir("bin") / "my-filecheck"
    tool.write_text("#!/bin/sh\ncat > /dev/null\necho 'my FileCheck ran' >&2\nexit 1\n")
    tool.chmod(0o755)
    _ini(suite, f"mlirpipe_tools = FileCheck={tool}")
    (suite.path / "fails.mlir").write_text(FAILING.replace("arith.addf", "return"))
    result = suite.runpytest("-p", "no:cacheprovider", "fails.mlir")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*my FileCheck ran*"])
    codes, output = lit_verdicts(suite.path, "fails.mlir")
    assert codes == {"fails.mlir": "FAIL"}, output
    assert "my FileCheck ran" in output


def test_the_python_port_is_chosen_by_the_ini_key(suite):
    _ini(suite, "mlirpipe_filecheck = python")
    result = suite.runpytest("-p", "no:cacheprovider", "fails.mlir")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*Couldn\'t match "arith.addf".*'])


@needs_llvm
@pytest.mark.parametrize("how", ["ini", "flag"])
def test_llvm_filecheck_is_chosen_and_lit_agrees(suite, how):
    args = ["-p", "no:cacheprovider", "fails.mlir"]
    if how == "ini":
        _ini(suite, "mlirpipe_filecheck = llvm")
    else:
        args.append("--mlirpipe-filecheck=llvm")
    result = suite.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*error: CHECK: expected string not found in input*", "*note: scanning from here*"]
    )
    codes, output = lit_verdicts(suite.path, "--param", "mlirpipe_filecheck=llvm", "fails.mlir")
    assert codes == {"fails.mlir": "FAIL"}, output
    assert "expected string not found in input" in output


def test_both_engines_disagreeing_is_a_warning_that_names_the_run_line(suite, monkeypatch):
    fake = suite.mkdir("llvm") / "FileCheck"
    fake.write_text("#!/bin/sh\ncat > /dev/null\nexit 0\n")  # passes everything
    fake.chmod(0o755)
    monkeypatch.setenv("MLIRPIPE_FILECHECK_LLVM", str(fake))
    _ini(suite, "mlirpipe_filecheck = both")
    # (this project's own suite turns warnings into errors; a user's shows them)
    result = suite.runpytest("-p", "no:cacheprovider", "-W", "default", "fails.mlir")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*FileCheckDisagreement: *fails.mlir:1: filecheck: warning: LLVM FileCheck and the "
            "Python port disagree: LLVM exit 0, Python port exit 1",
        ]
    )


PIPED = (
    "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s 2>&1 "
    "| not grep disagree\n"
    "// CHECK: arith.addf\n" + IR
)


@pytest.mark.parametrize("mode", ["fork", "none", "subprocess"])
def test_a_disagreement_never_reaches_the_commands_a_run_line_pipes_into(suite, monkeypatch, mode):
    """The report goes beside the test's %t files, not to FileCheck's stderr, so `2>&1 | ...`
    sees what the engine said and nothing else; the file keeps LLVM's verdict, as under lit,
    where the report is in the test's output."""
    fake = suite.mkdir("llvm") / "FileCheck"
    fake.write_text("#!/bin/sh\ncat > /dev/null\nexit 0\n")  # passes everything
    fake.chmod(0o755)
    monkeypatch.setenv("MLIRPIPE_FILECHECK_LLVM", str(fake))
    (suite.path / "piped.mlir").write_text(PIPED)
    _ini(suite, "mlirpipe_filecheck = both")
    result = suite.runpytest(
        "-p", "no:cacheprovider", "-W", "default", f"--mlirpipe-isolation={mode}", "piped.mlir"
    )
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(
        ["*FileCheckDisagreement: *piped.mlir:1: filecheck: warning: LLVM FileCheck and the *"]
    )
    codes, output = lit_verdicts(suite.path, "-a", "piped.mlir")
    assert codes == {"piped.mlir": "PASS"}, output
    assert "LLVM exit 0, Python port exit 1" in output
    assert not list((suite.path / "build").rglob("*.filecheck-notes"))


def test_an_unknown_engine_stops_the_run_with_the_accepted_ones(suite):
    _ini(suite, "mlirpipe_filecheck = fast")
    result = suite.runpytest("-p", "no:cacheprovider", "fails.mlir")
    result.stderr.fnmatch_lines(
        ["*mlirpipe: mlirpipe_filecheck must be one of auto, llvm, python, both, got 'fast'*"]
    )
