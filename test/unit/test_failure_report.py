"""The failure report of a RUN/CHECK file built from lit's results: the commands' output,
hints about missing tools and a reproduce command the user can paste."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_mlirpipe.filetests import failure
from pytest_mlirpipe.filetests.failure import format_failure
from pytest_mlirpipe.filetests.verdict import CommandResult, FileVerdict, RunStep


def _verdict(*results: CommandResult, command: str) -> FileVerdict:
    step = RunStep(line=1, command=command, results=results)
    return FileVerdict(code="FAIL", output="", is_failure=True, steps=(step,))


def test_a_failing_command_s_stdout_is_in_the_report_as_lit_shows_it(tmp_path: Path) -> None:
    result = CommandResult(("my-opt", "x.mlir"), 1, "module {\n  partial output\n}\n", "boom\n")
    report = format_failure(tmp_path / "t.mlir", _verdict(result, command="my-opt x.mlir"))
    assert (
        "command: my-opt x.mlir\nexit status: 1\nstdout:\n  module {\n    partial output\n  }\n"
        "stderr:\n  boom\n"
    ) in report


def test_a_long_stdout_is_cut_to_its_last_lines_saying_so(tmp_path: Path) -> None:
    out = "".join(f"line {i}\n" for i in range(100))
    result = CommandResult(("my-opt",), 2, out, "")
    report = format_failure(tmp_path / "t.mlir", _verdict(result, command="my-opt"))
    assert "stdout:\n  ... (60 lines above not shown)\n  line 60\n" in report
    assert "  line 99\nstderr: (empty)" in report
    assert "line 59\n" not in report


def test_a_missing_tool_named_by_an_absolute_path_gets_a_hint_that_is_a_path(
    tmp_path: Path,
) -> None:
    tool = "/usr/lib/llvm-22/bin/torch-mlir-opt"
    result = CommandResult((tool, "x.mlir"), 127, "", f"'{tool}': command not found\n")
    report = format_failure(tmp_path / "t.mlir", _verdict(result, command=f"{tool} x.mlir"))
    assert (
        f"  hint: there is no program at '{tool}': build it, or point the suite's "
        "configuration at the folder that has it "
        "(e.g. mlirpipe_tools: torch-mlir-opt=build/bin/torch-mlir-opt)"
    ) in report
    assert "build/bin//usr" not in report


def test_a_bare_filecheck_missing_from_the_user_s_path_is_replaced_in_the_repro(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(failure, "filecheck_program", lambda *a: "/opt/llvm/bin/FileCheck")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    command = "my-opt x.mlir | FileCheck x.mlir --check-prefix=A && not FileCheck y.mlir"
    result = CommandResult(("FileCheck", "x.mlir"), 1, "", "x.mlir:3: error: no match\n")
    report = format_failure(tmp_path / "t.mlir", _verdict(result, command=command))
    repro = report.split("reproduce with:\n", 1)[1].splitlines()[0]
    assert repro.endswith(
        "my-opt x.mlir | /opt/llvm/bin/FileCheck x.mlir --check-prefix=A "
        "&& not /opt/llvm/bin/FileCheck y.mlir"
    )


def test_a_filecheck_on_the_user_s_path_stays_as_the_run_line_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(failure, "filecheck_program", lambda *a: "/opt/llvm/bin/FileCheck")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: f"/usr/bin/{name}")
    result = CommandResult(("FileCheck", "x.mlir"), 1, "", "")
    report = format_failure(
        tmp_path / "t.mlir", _verdict(result, command="my-opt x.mlir | FileCheck x.mlir")
    )
    assert (
        report.split("reproduce with:\n", 1)[1]
        .splitlines()[0]
        .endswith("&& my-opt x.mlir | FileCheck x.mlir")
    )


def test_a_tool_s_own_error_at_an_ir_line_is_not_taken_for_the_failing_directive(
    tmp_path: Path,
) -> None:
    test = tmp_path / "t.mlir"
    test.write_text("// RUN: bad-opt %s | FileCheck %s\n// CHECK: foo.bar\n\n\nfoo.bar\n")
    tool = CommandResult(("bad-opt", str(test)), 1, "", f"{test}:5:1: error: bad op\n")
    check = CommandResult(("FileCheck", str(test)), 1, "", f"{test}:2:11: error: no match\n")
    step = RunStep(line=1, command=f"bad-opt {test} | FileCheck {test}", results=(tool, check))
    report = format_failure(test, FileVerdict("FAIL", "", True, steps=(step,)))
    assert "failing directive:\n  2 | // CHECK: foo.bar\n" in report
