"""`mlirpipe lint-checks PATH...`: each CHECK line FileCheck would ignore, at file:line, with what
it probably meant; nothing on correct files (this project's own, a stand-in of a large suite)."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from lint_standin import PLANTED, PLANTED_FINDINGS, write_standin

from pytest_mlirpipe.cli.main import run as mlirpipe
from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

ROOT = Path(__file__).resolve().parents[2]


def _lint(*paths: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = mlirpipe(["lint-checks", *map(str, paths)], io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def test_each_kind_of_mistake_is_found_exactly_in_a_planted_file(tmp_path, monkeypatch):
    write_standin(tmp_path, 0)  # the suite's config: its %FileCheck substitution
    (tmp_path / "planted.mlir").write_text(PLANTED)
    monkeypatch.chdir(tmp_path)
    status, out, err = _lint("planted.mlir")
    assert (status, out.splitlines()) == (1, PLANTED_FINDINGS)
    assert err == "mlirpipe lint-checks: 10 found in 1 file\n"


def test_a_stand_in_of_a_large_suite_has_nothing_but_the_planted_file(tmp_path, monkeypatch):
    write_standin(tmp_path, 300)
    (tmp_path / "planted.mlir").write_text(PLANTED)
    monkeypatch.chdir(tmp_path)
    status, out, err = _lint(".")
    assert (status, out.splitlines()) == (1, PLANTED_FINDINGS)
    assert err == "mlirpipe lint-checks: 10 found in 301 files\n"


def test_this_projects_own_files_have_no_findings(monkeypatch):
    monkeypatch.chdir(ROOT)
    status, out, err = _lint("test")  # (pipelines/ holds no RUN/CHECK file)
    assert (status, out) == (0, "")
    assert err.startswith("mlirpipe lint-checks: nothing found in ")


def test_prefixes_come_from_define_lines_and_the_suites_substitutions(tmp_path, monkeypatch):
    write_standin(tmp_path, 0)
    (tmp_path / "t.mlir").write_text(
        "// DEFINE: %{check} = FileCheck %s --check-prefix=VIADEF\n"
        "// RUN: %mlir_opt %s | %{check}\n"
        "// RUN: %mlir_opt %s | %FileCheck %s -check-prefix VIASUB\n"
        "// VIADEF: func.func\n// VIASUB: func.func\n// VIADFE: func.func\n"
    )
    monkeypatch.chdir(tmp_path)
    assert _lint("t.mlir") == (
        1,
        "t.mlir:6: warning: 'VIADFE:' is not a directive FileCheck knows, so it ignores the "
        "line; did you mean 'VIADEF:'? [misspelled-directive]\n",
        "mlirpipe lint-checks: 1 found in 1 file\n",
    )


def test_a_path_that_is_not_there_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _lint("nope.mlir") == (
        2,
        "",
        "mlirpipe lint-checks: error: no such file or folder: nope.mlir\n"
        "  hint: give RUN/CHECK files, or folders of them\n",
    )


def test_a_folder_without_test_files_is_a_usage_error(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    assert _lint("empty") == (
        2,
        "",
        "mlirpipe lint-checks: error: no RUN/CHECK files in empty\n"
        "  hint: files with RUN or CHECK lines and a suffix lit runs (.mlir outside a lit "
        "suite)\n",
    )


def test_a_filecheck_in_either_branch_of_an_if_checks_its_prefix(tmp_path, monkeypatch):
    write_standin(tmp_path, 0)
    (tmp_path / "t.mlir").write_text(
        "// RUN: %mlir_opt %s | %if no-such-feature %{ FileCheck %s --check-prefix=ON %} "
        "%else %{ FileCheck %s --check-prefix=OFF %}\n"
        "// ON: func.func\n// ON-NEXT: return\n// OFF: func.func\n// OFF-NEXT: return\n"
    )
    monkeypatch.chdir(tmp_path)
    assert _lint("t.mlir") == (0, "", "mlirpipe lint-checks: nothing found in 1 file\n")


def _readme_example() -> str:
    """The README's matmul example (its BUF and LLVM checks), as a file."""
    readme = (ROOT / "README.md").read_text()
    return re.search(r"```mlir\n(.*?)```", readme, re.DOTALL)[1]


def test_the_readmes_example_has_no_findings(tmp_path, monkeypatch):
    (tmp_path / "matmul.mlir").write_text(_readme_example())
    monkeypatch.chdir(tmp_path)
    assert _lint("matmul.mlir") == (0, "", "mlirpipe lint-checks: nothing found in 1 file\n")


@pytest.mark.parametrize("typo", ["BFU", "BUf"])
def test_a_swap_or_a_case_slip_in_the_readmes_short_prefix_is_found(tmp_path, monkeypatch, typo):
    text = _readme_example()
    assert "\n// BUF: linalg.matmul" in text
    (tmp_path / "matmul.mlir").write_text(text.replace("\n// BUF: ", f"\n// {typo}: "))
    monkeypatch.chdir(tmp_path)
    line = text[: text.index("\n// BUF: ")].count("\n") + 2
    assert _lint("matmul.mlir") == (
        1,
        f"matmul.mlir:{line}: warning: '{typo}:' is not a directive FileCheck knows, so it "
        "ignores the line; did you mean 'BUF:'? [misspelled-directive]\n",
        "mlirpipe lint-checks: 1 found in 1 file\n",
    )


# A suite whose RUN lines name their FileCheck: the Python port (`filecheck`, on PATH beside
# this Python) or LLVM's by path.
ENGINES_CFG = f"""\
import os
import lit.formats
config.name = "engines"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.environment["PATH"] = {str(Path(sys.executable).parent)!r} + os.pathsep + os.environ["PATH"]
"""
NEXT_FIRST = "// RUN: echo 'module {{' | {} %s\n// CHECK-NEXT: module {{\n"


def test_a_first_check_next_is_said_for_llvms_filecheck_and_not_for_the_python_port(
    tmp_path, monkeypatch
):
    """lit passes the file whose FileCheck is the Python port, and fails the one whose
    FileCheck is LLVM's (where one is installed): the lint warns of the second alone."""
    sys.path.insert(0, str(ROOT / "test" / "plugin"))
    try:
        from litrun import lit_verdicts
    finally:
        sys.path.remove(str(ROOT / "test" / "plugin"))
    llvm = find_llvm_filecheck()
    programs = {"port.mlir": "filecheck", **({"llvm.mlir": llvm} if llvm else {})}
    (tmp_path / "lit.cfg.py").write_text(ENGINES_CFG)
    for name, program in programs.items():
        (tmp_path / name).write_text(NEXT_FIRST.format(program))
    codes, output = lit_verdicts(tmp_path, ".")
    assert codes == {"port.mlir": "PASS", **({"llvm.mlir": "FAIL"} if llvm else {})}, output
    monkeypatch.chdir(tmp_path)
    said = (
        "llvm.mlir:2: warning: 'CHECK-NEXT:' comes before any match of the FileCheck of RUN "
        "line 1, so it has no line to follow; write 'CHECK:' or 'CHECK-LABEL:' for the first "
        "match [nothing-to-follow]\n"
    )
    assert _lint(*programs) == (
        1 if llvm else 0,
        said if llvm else "",
        f"mlirpipe lint-checks: {1 if llvm else 'nothing'} found in {len(programs)} "
        f"file{'s' if llvm else ''}\n",
    )
