"""`mlirpipe reduce`: a planted failure, a crash and a RUN line's FileCheck failure in a
30-op function, each brought down to a few ops that fail the same way."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.main import run
from pytest_mlirpipe.lowering.reduce import count_ops

FORBID_EXP = "builtin.module(canonicalize,mlirpipe-forbid-ops{ops=math.exp})"


def thirty_ops(special: str = "math.exp") -> str:
    """@f: a chain of 28 elementwise ops with one `special` op at the 18th, and @g beside it."""
    lines = ["func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {"]
    previous = "%a"
    for i in range(28):
        op = special if i == 17 else ("arith.addf", "arith.mulf", "arith.subf", "math.tanh")[i % 4]
        operands = previous if op.startswith("math.") else f"{previous}, %b"
        lines.append(f"  %v{i} = {op} {operands} : tensor<4xf32>")
        previous = f"%v{i}"
    lines += [f"  return {previous} : tensor<4xf32>", "}"]
    lines += [
        "func.func @g(%x: f32) -> f32 {",
        "  %0 = arith.addf %x, %x : f32",
        "  return %0 : f32",
    ]
    return "\n".join([*lines, "}", ""])


def mlirpipe(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(list(argv), io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def test_a_failing_pass_is_reduced_to_the_op_it_fails_on_with_the_same_message(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.mlir").write_text(thirty_ops())
    small = tmp_path / "small.mlir"
    status, out, err = mlirpipe(
        "reduce", str(tmp_path / "big.mlir"), "--pass-pipeline", FORBID_EXP, "-o", str(small)
    )
    assert (status, out) == (0, "")
    assert err.startswith(
        "reduce: keeping the failure: stage 'pass-pipeline' fails in mlirpipe-forbid-ops: "
        "'math.exp' is forbidden here by mlirpipe-forbid-ops\n"
    )
    assert count_ops(thirty_ops()) == 31 and count_ops(small.read_text()) <= 6
    assert "math.exp" in small.read_text() and "@g" not in small.read_text()
    assert err.splitlines()[-1].startswith("reduce: 31 ops -> 2 ops (15.5x smaller) in ")


def test_the_module_found_keeps_no_argument_its_function_does_not_use(tmp_path: Path) -> None:
    (tmp_path / "big.mlir").write_text(thirty_ops())

    status, out, err = mlirpipe("reduce", str(tmp_path / "big.mlir"), "--pass-pipeline", FORBID_EXP)

    assert status == 0, err
    assert out == (
        "module {\n"
        "  func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = math.exp %arg0 : tensor<4xf32>\n"
        "    return %0 : tensor<4xf32>\n"
        "  }\n"
        "}\n"
    )


def test_progress_is_one_line_each_time_the_module_gets_smaller(tmp_path: Path) -> None:
    # declarations hold no ops: removing them keeps the failure and the number of ops
    declarations = "".join(f"func.func private @d{i}(f32)\n" for i in range(10))
    (tmp_path / "big.mlir").write_text(thirty_ops() + declarations)

    status, _, err = mlirpipe("reduce", str(tmp_path / "big.mlir"), "--pass-pipeline", FORBID_EXP)

    assert status == 0, err
    progress = [line for line in err.splitlines() if " ops left (" in line]
    left = [int(line.split()[1]) for line in progress]
    assert progress[0].startswith("reduce: ") and left[-1] == 2
    assert left == sorted(set(left), reverse=True) and left[0] < 31, progress


ABORT_ON_EXP = """\
import os

from pytest_mlirpipe.lowering import passes


@passes.register("abort-on-exp", "aborts when a math.exp is left (a planted crash)")
def abort_on_exp(options):
    def run(op, pass_):
        from pytest_mlirpipe.lowering.op_query import all_ops

        if any(inner.name == "math.exp" for inner in all_ops(op)):
            os.abort()

    return run
"""


def test_a_crash_is_reduced_keeping_the_crash_of_the_same_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "abort_on_exp.py").write_text(ABORT_ON_EXP)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "abort_on_exp")
    (tmp_path / "big.mlir").write_text(thirty_ops())
    pipeline = "builtin.module(canonicalize,abort-on-exp)"
    status, out, err = mlirpipe("reduce", str(tmp_path / "big.mlir"), "--pass-pipeline", pipeline)
    assert status == 0
    assert err.startswith(
        "reduce: keeping the failure: stage 'pass-pipeline' ends: killed by SIGABRT"
    )
    assert "math.exp" in out and count_ops(out) <= 6
    assert "Traceback" not in err


def test_a_run_line_s_filecheck_failure_keeps_what_the_checks_before_it_need(
    tmp_path: Path,
) -> None:
    checks = (
        '// RUN: mlirpipe-opt %s --pass-pipeline="builtin.module(canonicalize)" | FileCheck %s\n'
        "// CHECK-LABEL: func.func @f\n// CHECK: arith.mulf\n// CHECK: math.log\n"
    )
    (tmp_path / "checked.mlir").write_text(checks + thirty_ops("math.tanh"))
    status, out, err = mlirpipe("reduce", str(tmp_path / "checked.mlir"), "--run-line", "1")
    assert status == 0, err
    assert err.startswith(
        "reduce: keeping the failure: FileCheck of RUN line 1 fails at checked.mlir:4: "
    )
    assert "func.func @f" in out and "arith.mulf" in out and count_ops(out) <= 6
    assert (tmp_path / "checked.mlir").read_text().startswith(checks)  # the test is untouched


def test_a_module_that_does_not_fail_is_not_reduced(tmp_path: Path) -> None:
    (tmp_path / "fine.mlir").write_text(thirty_ops("math.tanh"))
    status, out, err = mlirpipe(
        "reduce", str(tmp_path / "fine.mlir"), "--pass-pipeline", FORBID_EXP
    )
    assert (status, out) == (1, "")
    assert err == (
        f"error: {tmp_path}/fine.mlir: its module does not fail through the pipeline: "
        "nothing to reduce\n  hint: reduce a module that fails: `mlirpipe-opt FILE "
        "--pass-pipeline TEXT` (or --pipeline P) shows how it does\n"
    )


def test_a_run_line_that_is_not_a_tool_piped_into_filecheck_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.mlir").write_text("// RUN: true\n" + thirty_ops())
    status, _, err = mlirpipe("reduce", str(tmp_path / "t.mlir"), "--run-line", "1")
    assert status == 2
    assert err.splitlines()[0] == (
        f"mlirpipe reduce: {tmp_path}/t.mlir:1: error: RUN line 1 is not of the form "
        "`TOOL ... | FileCheck ...`"
    )


def test_nothing_is_left_in_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    (tmp_path / "checked.mlir").write_text(
        '// RUN: mlirpipe-opt %s --pass-pipeline="builtin.module(cse)" | FileCheck %s\n'
        "// CHECK: math.log\n" + thirty_ops()
    )
    status, _, err = mlirpipe("reduce", str(tmp_path / "checked.mlir"), "--run-line", "1")
    assert status == 0, err
    assert list(scratch.iterdir()) == []
    assert sys.modules.get("pytest_mlirpipe.filetests.reduce_line") is not None


def test_a_run_line_whose_checks_pass_is_not_reduced(tmp_path: Path) -> None:
    (tmp_path / "ok.mlir").write_text(
        "// RUN: mlirpipe-opt %s --pass-pipeline=builtin.module(cse) | FileCheck %s\n"
        "// CHECK: math.exp\n" + thirty_ops()
    )
    status, out, err = mlirpipe("reduce", str(tmp_path / "ok.mlir"), "--run-line", "1")
    assert (status, out) == (1, "")
    assert err == (
        f"error: {tmp_path}/ok.mlir: RUN line 1's FileCheck does not fail on its module: "
        "nothing to reduce\n  hint: the tool before FileCheck must succeed and FileCheck "
        "fail; `pytest FILE` or `lit FILE` shows how the line fails\n"
    )


def test_a_run_line_that_expects_filecheck_to_fail_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.mlir").write_text(
        "// RUN: mlirpipe-opt %s --pass-pipeline=builtin.module(cse) | not FileCheck %s\n"
        "// CHECK: nothere\n" + thirty_ops()
    )
    status, _, err = mlirpipe("reduce", str(tmp_path / "t.mlir"), "--run-line", "1")
    assert status == 2
    assert err.splitlines()[0] == (
        f"mlirpipe reduce: {tmp_path}/t.mlir:1: error: RUN line 1 expects its FileCheck to fail "
        "(`not FileCheck`): reduce keeps a FileCheck failure"
    )


EXTERNAL_CFG = """\
import os
import lit.formats
config.name = "EXTERNAL"
import lit
forced = {"force_execute_external": True} if lit.__versioninfo__ >= (19,) else {}
config.test_format = lit.formats.ShTest(execute_external=True, **forced)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
"""


def test_a_run_line_of_a_suite_with_an_external_shell_is_refused_saying_why(
    tmp_path: Path,
) -> None:
    (tmp_path / "lit.cfg.py").write_text(EXTERNAL_CFG)
    (tmp_path / "t.mlir").write_text(
        "// RUN: cat %s | FileCheck %s\n// CHECK: nothere\n" + thirty_ops()
    )
    status, _, err = mlirpipe("reduce", str(tmp_path / "t.mlir"), "--run-line", "1")
    assert status == 2
    assert err.splitlines()[0] == (
        f"mlirpipe reduce: {tmp_path}/t.mlir: error: its suite runs RUN lines in an external "
        "shell, whose commands lit does not report one by one"
    )


# Each try takes a while: a Ctrl-C lands in the middle of the search.
SLOW_DOWN = """\
import time

from pytest_mlirpipe.lowering import passes


@passes.register("slow-down", "sleeps a fifth of a second")
def slow_down(options):
    return lambda op, pass_: time.sleep(0.2)
"""


def test_ctrl_c_writes_the_smallest_module_found_so_far_says_where_and_exits_130(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.mlir").write_text(long_chain(400))
    (tmp_path / "slow_down.py").write_text(SLOW_DOWN)
    small = tmp_path / "small.mlir"
    code = "import sys; sys.argv[0] = 'mlirpipe'; from pytest_mlirpipe.cli.main import main; main()"
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "MLIRPIPE_PASS_MODULES": "slow_down",
    }
    slow = FORBID_EXP.replace("canonicalize,", "canonicalize,slow-down,")
    argv = ["reduce", str(tmp_path / "big.mlir"), "--pass-pipeline", slow, "-o", str(small)]
    tool = subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    with tool.stderr:
        first = [tool.stderr.readline(), tool.stderr.readline()]
        os.killpg(tool.pid, signal.SIGINT)  # Ctrl-C reaches the group: the forked tries too
        rest = tool.stderr.read().splitlines()

    assert tool.wait() == 130, (first, rest)
    assert " ops left (" in first[1]
    assert rest[-1] == f"reduce: interrupted: the smallest module found so far went to {small}"
    assert re.fullmatch(r"reduce: 401 ops -> \d+ ops .* \(interrupted\)", rest[-2])
    assert "Traceback" not in "".join(rest)
    ops = count_ops(small.read_text())
    assert ops < 401 and rest[-2].startswith(f"reduce: 401 ops -> {ops} ops")
    opt = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_mlirpipe.tools.opt",
            str(small),
            "--pass-pipeline",
            FORBID_EXP,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert opt.returncode == 1 and "'math.exp' is forbidden here" in opt.stderr, opt.stderr


def long_chain(n: int) -> str:
    """@f: a chain of `n` ops, a math.exp in the middle of it."""
    lines = ["func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {"]
    previous = "%a"
    for i in range(n):
        op = "math.exp" if i == n // 2 else ("arith.addf", "arith.mulf")[i % 2]
        operands = previous if op == "math.exp" else f"{previous}, %b"
        lines.append(f"  %v{i} = {op} {operands} : tensor<4xf32>")
        previous = f"%v{i}"
    return "\n".join([*lines, f"  return {previous} : tensor<4xf32>", "}", ""])


def test_ctrl_c_without_o_writes_the_module_found_so_far_to_stdout_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_mlirpipe import contain

    tries = []
    run_contained = contain.run_contained

    def interrupted_at_the_fourth_try(fn, timeout):
        tries.append(1)
        if len(tries) == 4:  # the failure itself, then three candidates
            raise KeyboardInterrupt
        return run_contained(fn, timeout)

    monkeypatch.setattr(contain, "run_contained", interrupted_at_the_fourth_try)
    (tmp_path / "big.mlir").write_text(thirty_ops())

    status, out, err = mlirpipe("reduce", str(tmp_path / "big.mlir"), "--pass-pipeline", FORBID_EXP)

    assert status == 130
    assert "math.exp" in out and 2 < count_ops(out) < 31
    summary = re.fullmatch(
        r"reduce: 31 ops -> (\d+) ops \(.*\) in 3 tries, \d+\.\d s \(interrupted\)",
        err.splitlines()[-2],
    )
    assert summary and int(summary.group(1)) == count_ops(out), err
    assert err.splitlines()[-1] == (
        "reduce: interrupted: the smallest module found so far went to standard output"
    )
