"""tools/filecheck.py: the engine each RUN line's FileCheck uses, and what each says."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_mlirpipe.tools import filecheck

LLVM = filecheck.find_llvm_filecheck()
needs_llvm = pytest.mark.skipif(
    LLVM is None, reason="no LLVM FileCheck here (Debian: apt-get install llvm-22-tools)"
)


def _run(argv, text: str = "", monkeypatch=None, **env) -> tuple[int, str, str]:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out, err = io.StringIO(), io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
    status = filecheck.run([str(a) for a in argv], stdin, out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def long_case(tmp_path: Path) -> tuple[Path, Path]:
    lines = []
    for i in range(400):
        lines += [f"func.func @f{i}() {{", f"  %{i} = arith.constant {i} : i32", "}"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "check.txt").write_text(
        "// CHECK-LABEL: @f10()\n// CHECK-DAG: arith.constant 10\n// CHECK: @f200()\n"
        "// CHECK-NOT: arith.constant 7\n// CHECK: arith.constant 999\n"
    )
    return tmp_path / "check.txt", tmp_path / "in.txt"


def test_the_python_port_names_the_line_it_stopped_at_on_a_long_input(long_case, monkeypatch):
    check, text = long_case
    status, _, err = _run(
        [check, "--input-file", text], monkeypatch=monkeypatch, MLIRPIPE_FILECHECK="python"
    )
    assert status == 1
    # @f200 is on line 601 (3 lines per function); the port's own counter says 570.
    assert f"Current position at {text}:601:18\nfunc.func @f200() {{\n{' ' * 17}^" in err


@needs_llvm
def test_llvm_filecheck_reports_the_same_position(long_case, monkeypatch):
    check, text = long_case
    status, _, err = _run(
        [check, "--input-file", text], monkeypatch=monkeypatch, MLIRPIPE_FILECHECK="llvm"
    )
    assert status == 1
    assert f"{text}:601:18: note: scanning from here" in err


def test_llvm_asked_for_but_not_found_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv(filecheck.LLVM_ENV, raising=False)
    monkeypatch.setattr(filecheck, "find_llvm_filecheck", lambda dirs=(): None)
    (tmp_path / "c.txt").write_text("// CHECK: x\n")
    status, _, err = _run(
        [tmp_path / "c.txt"], "x\n", monkeypatch=monkeypatch, MLIRPIPE_FILECHECK="llvm"
    )
    assert status == 2
    assert err == (
        "filecheck: error: mlirpipe_filecheck is 'llvm' but no LLVM FileCheck was found "
        "(looked on PATH and in /usr/lib/llvm-*/bin)\n  hint: install it (Debian: apt-get "
        "install llvm-22-tools), name it with mlirpipe_tools = FileCheck=/path/to/FileCheck, "
        "or use mlirpipe_filecheck = python\n"
    )


def test_auto_without_llvm_uses_the_python_port(tmp_path, monkeypatch):
    monkeypatch.delenv(filecheck.LLVM_ENV, raising=False)
    monkeypatch.setattr(filecheck, "find_llvm_filecheck", lambda dirs=(): None)
    (tmp_path / "c.txt").write_text("// CHECK: y\n")
    status, _, err = _run(
        [tmp_path / "c.txt"], "x\n", monkeypatch=monkeypatch, MLIRPIPE_FILECHECK="auto"
    )
    assert status == 1 and 'Couldn\'t match "y"' in err


def test_both_engines_warn_when_their_verdicts_differ(tmp_path, monkeypatch):
    fake = tmp_path / "FileCheck"
    fake.write_text("#!/bin/sh\necho 'fake LLVM: no' >&2\nexit 1\n")
    fake.chmod(0o755)
    (tmp_path / "c.txt").write_text("// CHECK: x\n")
    status, _, err = _run(
        [tmp_path / "c.txt"],
        "x\n",
        monkeypatch=monkeypatch,
        MLIRPIPE_FILECHECK="both",
        MLIRPIPE_FILECHECK_LLVM=str(fake),
    )
    assert status == 1  # LLVM's verdict
    assert err.startswith("fake LLVM: no\n" + filecheck.DISAGREE)
    assert ": LLVM exit 1, Python port exit 0\n" in err
    assert f"--- LLVM FileCheck ({fake}) ---\nfake LLVM: no\n--- Python port ---\n" in err


def test_an_unknown_engine_is_named_with_the_accepted_ones(tmp_path, monkeypatch):
    (tmp_path / "c.txt").write_text("// CHECK: x\n")
    status, _, err = _run([tmp_path / "c.txt"], "x\n", monkeypatch, MLIRPIPE_FILECHECK="fast")
    assert status == 2
    assert err == (
        "filecheck: error: $MLIRPIPE_FILECHECK is 'fast'; use one of auto, llvm, python, both\n"
    )


def test_a_same_named_script_on_path_is_not_taken_for_llvm_filecheck(tmp_path, monkeypatch):
    script = tmp_path / "FileCheck"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    found = filecheck.find_llvm_filecheck([str(tmp_path)])
    assert found != str(script)


def test_the_ports_argument_errors_are_one_line(tmp_path, monkeypatch):
    (tmp_path / "c.txt").write_text("// CHECK: x\n")
    status, _, err = _run(
        [tmp_path / "c.txt", "extra"], "x\n", monkeypatch, MLIRPIPE_FILECHECK="python"
    )
    assert status == 2
    assert err.startswith("filecheck: error: Unconsumed arguments:")


# CHECK-NOT's range ends where the next match begins (LLVM's rule; the port 1.0.6 searched to
# where that match ends, and failed files that LLVM passes).
NOT_BEFORE_NEXT_MATCH = [
    ("// CHECK: a\n// CHECK-NOT: bar\n// CHECK: foo bar\n", "a\nfoo bar\nb\n", 0),
    ("// CHECK: a\n// CHECK-NOT: bar\n// CHECK: bar\n", "a\nbar\n", 0),
    ("// CHECK: a\n// CHECK-NOT: foo\n// CHECK-NEXT: foo bar\n", "a\nfoo bar\n", 0),
    ("// CHECK: a\n// CHECK-NOT: bar\n// CHECK: foo\n", "a\nbar\nfoo\n", 1),
    ("// CHECK: a\n// CHECK-NOT: x\n// CHECK-SAME: b x\n", "a b x\n", 0),
    ("// CHECK: x\n// CHECK-NOT: bar\n// CHECK-COUNT-2: foo bar\n", "x\nfoo bar\nfoo bar\n", 0),
    ("// CHECK: x\n// CHECK-NOT: bar\n// CHECK-COUNT-2: foo\n", "x\nbar\nfoo\nfoo\n", 1),
]


@pytest.mark.parametrize(("checks", "text", "status"), NOT_BEFORE_NEXT_MATCH)
def test_the_python_port_ends_a_check_not_range_where_the_next_match_begins(
    tmp_path, monkeypatch, checks, text, status
):
    (tmp_path / "c.txt").write_text(checks)
    got, _, err = _run([tmp_path / "c.txt"], text, monkeypatch, MLIRPIPE_FILECHECK="python")
    assert got == status, err


@needs_llvm
@pytest.mark.parametrize(("checks", "text", "status"), NOT_BEFORE_NEXT_MATCH)
def test_llvm_filecheck_agrees_on_where_a_check_not_range_ends(
    tmp_path, monkeypatch, checks, text, status
):
    (tmp_path / "c.txt").write_text(checks)
    got, _, err = _run([tmp_path / "c.txt"], text, monkeypatch, MLIRPIPE_FILECHECK="llvm")
    assert got == status, err
