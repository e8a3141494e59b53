"""A pass that aborts, segfaults, exits or hangs fails its own file only, with how it ended,
where, and a repro of the crashing stage; the session goes on and its summary counts it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Passes that crash or hang, loaded through $MLIRPIPE_PASS_MODULES from this folder.
HERE = Path(__file__).parent
PASS_MODULE = "crash_passes"

PIPELINE = """\
[pipeline]
name = "crashy"
description = "canonicalize, then a stage that aborts"
input = "linalg-on-tensors"
output = "linalg-on-tensors"

[[stage]]
name = "tidy"
reason = "something harmless first"
passes = ["canonicalize"]

[[stage]]
name = "boom"
reason = "the crash"
passes = ["crash-abort"]
"""
IR = """\
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
GOOD = (
    "// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(canonicalize)' | filecheck %s\n"
    "// CHECK: arith.addf\n" + IR
)


def _crashing(pass_name: str) -> str:
    return (
        f"// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module({pass_name})' | filecheck %s\n"
        "// CHECK: arith.addf\n" + IR
    )


STAGED = (
    "// RUN: mlirpipe-opt %s --pipeline crashy --stop-after tidy | filecheck %s\n"
    "// RUN: mlirpipe-opt %s --pipeline crashy | filecheck %s\n"
    "// CHECK: arith.addf\n" + IR
)


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(HERE), prepend=os.pathsep)  # and the code under test
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", PASS_MODULE)
    (pytester.path / "pipes").mkdir()
    (pytester.path / "pipes" / "crashy.toml").write_text(PIPELINE)
    monkeypatch.setenv("MLIRPIPE_PIPELINES_PATH", str(pytester.path / "pipes"))
    tests = pytester.mkdir("tests")
    (tests / "good.mlir").write_text(GOOD)
    (tests / "good2.mlir").write_text(GOOD)
    (tests / "abort.mlir").write_text(_crashing("crash-abort"))
    (tests / "segv.mlir").write_text(_crashing("crash-segv"))
    (tests / "exit.mlir").write_text(_crashing("crash-exit"))
    (tests / "staged.mlir").write_text(STAGED)
    return pytester


def _run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest(*args, "-p", "no:cacheprovider")


def test_each_crash_fails_its_file_and_the_rest_of_the_session_runs(suite):
    result = _run(suite, "tests")
    result.assert_outcomes(passed=2, failed=4)
    result.stdout.fnmatch_lines(["mlirpipe: 4 crashes contained"])


def test_the_summary_counts_crashes_from_xdist_workers(suite):
    result = _run(suite, "tests", "-n", "2")
    result.assert_outcomes(passed=2, failed=4)
    result.stdout.fnmatch_lines(["mlirpipe: 4 crashes contained"])


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("abort", "killed by SIGABRT (an abort (failed assertion or LLVM fatal error))"),
        ("segv", "killed by SIGSEGV (a segmentation fault)"),
        ("exit", "exited with status 3"),
    ],
)
def test_a_crash_says_how_the_process_ended_and_where(suite, name, how):
    result = _run(suite, f"tests/{name}.mlir")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"tests/{name}.mlir:1: FAIL at RUN line 1",
            f"  the in-process run ended early: {how}, while running RUN line 1: mlirpipe-opt "
            f"*/tests/{name}.mlir --pass-pipeline 'builtin.module(crash-{name})' | filecheck "
            f"*/tests/{name}.mlir, stage 'pass-pipeline' of pipeline '--pass-pipeline'",
            "  reproduce the crash with (the crashing stage on its input IR):",
            f"    mlirpipe-opt */build/pytest/*/Output/{name}.mlir.repro/"
            f"{name}.pass-pipeline.input.mlir --pass-pipeline 'builtin.module(crash-{name})'",
        ]
    )


def _repro_command(result: pytest.RunResult) -> str:
    lines = result.outlines
    at = lines.index("  reproduce the crash with (the crashing stage on its input IR):")
    return lines[at + 1].strip()


def test_the_repro_runs_only_the_crashing_stage_on_its_input_and_crashes_the_same_way(suite):
    result = _run(suite, "tests/staged.mlir")
    result.assert_outcomes(failed=1)
    command = _repro_command(result)
    (stage_input,) = suite.path.glob("build/pytest/*/**/Output/staged.mlir.repro/*")
    assert stage_input.name == "staged.boom.input.mlir"
    assert command == (
        f"mlirpipe-opt {stage_input} --pipeline crashy --start-after tidy --stop-after boom "
        f"--pipelines-dir {suite.path / 'pipes'}"
    )
    # The input of 'boom' is the output of 'tidy': canonicalized, the RUN comments gone.
    assert "arith.addf" in stage_input.read_text()
    assert "RUN:" not in stage_input.read_text()
    argv = [sys.executable, "-m", "pytest_mlirpipe.tools.opt", *command.split()[1:]]
    ran = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=suite.path)
    assert ran.returncode == -6  # SIGABRT, as in the test


def test_a_file_that_does_not_crash_writes_no_repro(suite):
    result = _run(suite, "tests/good.mlir")
    result.assert_outcomes(passed=1)
    assert "contained" not in result.stdout.str()
    assert not list(suite.path.glob("build/**/*.repro"))


def test_a_hang_is_a_timeout_counted_in_the_summary(suite):
    (suite.path / "tests" / "hang.mlir").write_text(_crashing("crash-hang"))
    # After its crash the file runs again with every tool a process, as lit runs it; under
    # load, starting `mlirpipe-opt` alone can take a second: its own limit leaves it time.
    abort = suite.path / "tests" / "abort.mlir"
    abort.write_text("// MLIRPIPE-TIMEOUT: 120\n" + abort.read_text())
    result = _run(suite, "tests/hang.mlir", "tests/abort.mlir", "--mlirpipe-timeout=1")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "tests/hang.mlir: TIMEOUT: the test took too long",
            "no verdict after 1 s (mlirpipe_timeout), while running RUN line 1: *, stage "
            "'pass-pipeline' of pipeline '--pass-pipeline'",
            "mlirpipe: 1 crash and 1 timeout contained",
        ]
    )


def test_a_pass_module_that_cannot_be_imported_is_named(suite, monkeypatch):
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", f"{PASS_MODULE}, no_such_module")
    result = _run(suite, "tests/good.mlir")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert re.search(
        r"error: cannot import pass module 'no_such_module' named in \$MLIRPIPE_PASS_MODULES: "
        r"No module named 'no_such_module'\n *hint: put the module's folder on PYTHONPATH, or "
        r"fix the name \(\$MLIRPIPE_PASS_MODULES is a comma-separated list of module names\)",
        text,
    ), text
