"""--mlirpipe-repeat / mlirpipe_repeat / lit's --param mlirpipe_repeat: a file whose commands
print something different from run to run fails, whatever FileCheck said; a steady one passes."""

from __future__ import annotations

import sys

import pytest
from litrun import lit_verdicts

from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""
# A tool whose output order changes from run to run; CHECK-DAG lets FileCheck pass anyway.
SHUFFLE = "import random, sys\nlines = sys.stdin.read().splitlines()\nrandom.shuffle(lines)\n"
SHUFFLE += "print('\\n'.join(lines))\n"
SHUFFLED = (
    "// RUN: printf 'a\\nb\\nc\\nd\\ne\\nf\\n' | shuffle | FileCheck %s\n"
    "// CHECK-DAG: a\n// CHECK-DAG: f\n"
)
STEADY = (
    "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s\n"
    "// CHECK: func.func @f\nfunc.func @f() {\n  return\n}\n"
)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    (pytester.path / "shuffle.py").write_text(SHUFFLE)
    (pytester.path / "shuffled.mlir").write_text(SHUFFLED)
    (pytester.path / "steady.mlir").write_text(STEADY)
    tool = f"shuffle={sys.executable} {pytester.path / 'shuffle.py'}"
    (pytester.path / "pytest.ini").write_text(f"[pytest]\nmlirpipe_tools = {tool}\n")
    return pytester


def test_without_repeat_a_shuffling_tool_passes_its_checks(suite) -> None:
    suite.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


@pytest.mark.parametrize(
    "options",
    [[], ["-n", "2"], ["--mlirpipe-isolation=subprocess"], ["--mlirpipe-isolation=none"]],
    ids=["serial", "xdist", "subprocess", "none"],
)
def test_a_file_whose_output_changes_between_runs_fails_with_the_diff(suite, options) -> None:
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "--mlirpipe-repeat=5", *options)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "shuffled.mlir: FAIL: output of * differs between runs (run 1 and run * of 5):"
            " the input * *shuffled.mlir`",
            "  --- run 1",
            "  +++ run *",
        ]
    )


def test_the_ini_key_and_lit_s_param_give_the_same_verdicts(suite) -> None:
    (suite.path / "pytest.ini").write_text(
        (suite.path / "pytest.ini").read_text() + "mlirpipe_repeat = 5\n"
    )
    suite.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1, failed=1)
    codes, output = lit_verdicts(suite.path, ".", "--param", "mlirpipe_repeat=5")
    assert codes == {"shuffled.mlir": "FAIL", "steady.mlir": "PASS"}, output
    assert "output of a RUN line differs between runs (run 1 and run " in output
    assert lit_verdicts(suite.path, ".")[0] == {"shuffled.mlir": "PASS", "steady.mlir": "PASS"}


@pytest.mark.parametrize("value", ["0", "often"])
def test_a_repeat_count_that_is_not_a_number_of_runs_is_refused(suite, value) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", f"--mlirpipe-repeat={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"*mlirpipe: the repeat count must be a whole number of runs >= 1, got '{value}' "
            "(--mlirpipe-repeat / mlirpipe_repeat)*"
        ]
    )


def test_lit_s_repeat_param_that_is_not_a_number_of_runs_is_unresolved_with_why(suite) -> None:
    codes, output = lit_verdicts(suite.path, ".", "--param", "mlirpipe_repeat=often")
    assert codes == {"shuffled.mlir": "UNRESOLVED", "steady.mlir": "UNRESOLVED"}, output
    assert "--param mlirpipe_repeat takes a whole number of runs >= 1, got 'often'" in output


EXTERNAL_CFG = """\
import os
import lit.formats
config.name = "EXTERNAL"
import lit
forced = {"force_execute_external": True} if lit.__versioninfo__ >= (19,) else {}
config.test_format = lit.formats.ShTest(execute_external=True, **forced)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join([os.path.dirname(__file__), os.environ["PATH"]])
"""


def test_a_suite_that_runs_its_run_lines_in_an_external_shell_is_repeated_too(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "lit.cfg.py").write_text(EXTERNAL_CFG)
    (pytester.path / "shuffle").write_text(f"#!{sys.executable}\n{SHUFFLE}")
    (pytester.path / "shuffle").chmod(0o755)
    (pytester.path / "shuffled.mlir").write_text(SHUFFLED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlirpipe-repeat=5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*shuffled.mlir: FAIL: output of a RUN line differs between runs (run 1 and run *"]
    )
    assert list(pytester.path.rglob("*.filecheck-inputs")) == []  # the records are removed


# The shape of most LLVM-based suites: lit's ShTest and its internal shell, no configure(),
# FileCheck named by path (as lit.llvm's use_default_substitutions writes it) or on PATH.
PLAIN_CFG = """\
import os
import lit.formats
config.name = "PLAIN"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join([os.path.dirname(__file__), os.environ["PATH"]])
config.substitutions.append(("%filecheck", {filecheck!r}))
"""


@pytest.mark.parametrize("named", ["FileCheck", "%filecheck"], ids=["on-path", "by-path"])
@pytest.mark.parametrize("isolation", ["fork", "subprocess"])
def test_a_plain_lit_suite_s_filecheck_program_is_watched_too(
    pytester: pytest.Pytester, named: str, isolation: str
) -> None:
    filecheck = pytester.path / "FileCheck"
    llvm = find_llvm_filecheck()
    filecheck.write_text(f'#!/bin/sh\nexec {llvm or sys.executable + " -m filecheck"} "$@"\n')
    filecheck.chmod(0o755)
    (pytester.path / "lit.cfg.py").write_text(PLAIN_CFG.format(filecheck=str(filecheck)))
    (pytester.path / "shuffle").write_text(f"#!{sys.executable}\n{SHUFFLE}")
    (pytester.path / "shuffle").chmod(0o755)
    (pytester.path / "shuffled.mlir").write_text(SHUFFLED.replace("FileCheck", named))
    assert pytester.runpytest("-p", "no:cacheprovider").ret == pytest.ExitCode.OK
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-repeat=4", f"--mlirpipe-isolation={isolation}"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "shuffled.mlir: FAIL: output of RUN line 1 differs between runs (run 1 and run * of"
            " 4): the input piped into `*FileCheck *shuffled.mlir`"
        ]
    )


def test_an_external_shell_s_own_filecheck_checks_and_its_input_is_compared(
    pytester: pytest.Pytester,
) -> None:
    """The FileCheck the suite's PATH has runs (not the project's), once a run, and what it is
    given still tells the runs apart; no record is left behind."""
    (pytester.path / "lit.cfg.py").write_text(EXTERNAL_CFG)
    (pytester.path / "shuffle").write_text(f"#!{sys.executable}\n{SHUFFLE}")
    (pytester.path / "shuffle").chmod(0o755)
    log = pytester.path / "filecheck-runs.log"
    real = find_llvm_filecheck() or f"{sys.executable} -m filecheck"
    (pytester.path / "FileCheck").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    (pytester.path / "FileCheck").chmod(0o755)
    (pytester.path / "shuffled.mlir").write_text(SHUFFLED)
    steady = "// RUN: printf 'a b\\0c\\n' | FileCheck %s --implicit-check-not='x y'\n"
    steady += "// CHECK: a b\n"
    (pytester.path / "steady.mlir").write_text(steady)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlirpipe-repeat=4")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*shuffled.mlir: FAIL: output of a RUN line differs between runs (run 1 and run *"
            " of 4): the input of `FileCheck *shuffled.mlir`"
        ]
    )
    runs = log.read_text().splitlines()
    assert sum("steady.mlir --implicit-check-not=x y" in run for run in runs) == 4
    assert 2 <= sum("shuffled.mlir" in run for run in runs) <= 4  # until a run differs
    assert list(pytester.path.rglob("*.filecheck-inputs*")) == []
