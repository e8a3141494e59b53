"""--mlirpipe-update-checks and `mlirpipe update-checks`: only failing RUN lines' checks are
regenerated (generate-test-checks.py style), every other line stays, a second run is a no-op."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.main import run as mlirpipe
from pytest_mlirpipe.filetests import update
from pytest_mlirpipe.filetests.site import site_file_text
from pytest_mlirpipe.filetests.verdict import CommandResult, RunStep
from pytest_mlirpipe.tools import update_checks
from pytest_mlirpipe.tools.update_checks import generate_checks

SEED = """\
func.func @forward(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c0 = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%c0 : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>)
                     outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
"""
OPT = "mlirpipe-opt %s --pipeline refbackend"
STAGES = f"""\
// Stage checks of the seed; a comment that stays.
// RUN: {OPT} --stop-after bufferize | filecheck %s --check-prefix=BUF
// RUN: {OPT} --stop-after linalg-to-loops | filecheck %s --check-prefixes=LOOPS,ANY
// RUN: {OPT} --stop-after bufferize | filecheck %s --check-prefix=OTHER

// BUF: linalg.fill
// BUF: linalg.batch_matmul
// COM: the LOOPS lines pass and stay as they are
// LOOPS-LABEL: func.func @forward
// ANY: scf.for
// OTHER: memref.subview

{SEED}"""


def test_generated_checks_follow_generate_test_checks() -> None:
    ir = (
        "#map = affine_map<(d0) -> (d0)>\nmodule {\n"
        "  func.func @f(%arg0: memref<2xf32>, %arg1: memref<2xf32>) -> memref<2xf32> {\n"
        "    %0 = arith.constant {a = [[1]]} 0 : index\n"
        "    return %arg0 : memref<2xf32>\n  }\n"
        "  func.func private @g(i32)\n}\n"
    )
    assert generate_checks(ir, "P") == [
        ["// P: #[[$ATTR_0:.+]] = affine_map<(d0) -> (d0)>"],
        [
            "// P-LABEL: func.func @f(",
            "// P-SAME:               %[[ARG0:[^:]*]]: memref<2xf32>,",
            "// P-SAME:               %[[ARG1:[^:]*]]: memref<2xf32>) -> memref<2xf32> {",
            "// P:           %[[VAL_0:.*]] = arith.constant {a = {{\\[\\[}}1]]} 0 : index",
            "// P:           return %[[ARG0]] : memref<2xf32>",
            "// P:         }",
            "// P:         func.func private @g(i32)",
        ],
    ]


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "stages.mlir").write_text(STAGES)
    return pytester


def test_only_failing_run_lines_are_regenerated_and_a_second_run_changes_nothing(suite) -> None:
    path = suite.path / "stages.mlir"
    result = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-update-checks")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["mlirpipe-update-checks: *stages.mlir: updated the CHECK lines of RUN line(s) 2, 4"]
    )
    updated = path.read_text()
    kept = [ln for ln in updated.splitlines() if not ln.startswith(("// BUF", "// OTHER"))]
    assert kept == [ln for ln in STAGES.splitlines() if not ln.startswith(("// BUF", "// OTH"))]
    assert "// BUF-LABEL: func.func @forward(\n// BUF-SAME:" in updated
    assert "// BUF:           linalg.fill ins(%[[VAL_2]] : f32) outs(%[[VAL_3]]" in updated
    assert "// OTHER:           linalg.matmul ins(%[[VAL_1]], %[[VAL_0]] : " in updated
    assert updated.index("// OTHER-LABEL") > updated.index("// BUF:         }")
    again = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-update-checks")
    again.assert_outcomes(passed=1)
    assert "mlirpipe-update-checks" not in again.stdout.str()
    assert path.read_text() == updated
    suite.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_each_split_input_chunk_gets_its_own_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipe = "mlirpipe-opt %s --split-input-file --pass-pipeline='builtin.module(canonicalize)'"
    text = (
        f"// RUN: {pipe} | filecheck %s\n\n// CHECK: nothing\n"
        "func.func @a(%x: i32) -> i32 {\n  %0 = arith.addi %x, %x : i32\n  return %0 : i32\n}\n"
        "\n// -----\n\n"
        "func.func @b() -> i32 {\n  %c = arith.constant 1 : i32\n  return %c : i32\n}\n"
    )
    path = tmp_path / "split.mlir"
    path.write_text(text)
    monkeypatch.chdir(tmp_path)  # named as users do, relative to where they stand
    out = io.StringIO()
    assert mlirpipe(["update-checks", "split.mlir"], io.StringIO(), out, io.StringIO()) == 0
    path = Path("split.mlir")
    assert out.getvalue().splitlines() == [
        f"{path}: updated the CHECK lines of RUN line(s) 1",
        f"{path}: PASS after the update",
    ]
    chunks = path.read_text().split("// -----\n")
    assert "// CHECK-LABEL: func.func @a(" in chunks[0] and "@b" not in chunks[0]
    assert "// CHECK-LABEL: func.func @b() -> i32 {" in chunks[1]
    assert "// CHECK:           %[[VAL_0:.*]] = arith.constant 1 : i32" in chunks[1]
    assert "nothing" not in path.read_text()
    updated = path.read_text()
    out = io.StringIO()
    assert mlirpipe(["update-checks", str(path)], io.StringIO(), out, io.StringIO()) == 0
    assert out.getvalue() == f"{path}: passes; not changed\n"
    assert path.read_text() == updated


REFUSED = f"""\
// RUN: {OPT} --stop-after bufferize | grep linalg | filecheck %s --check-prefix=GREP
// RUN: {OPT} --stop-after bufferize --print-after bufferize 2>&1 \\
// RUN:   | filecheck %s --check-prefix=ERR
// RUN: {OPT} --stop-after bufferize | filecheck %s --check-prefix=SHARED
// RUN: {OPT} --stop-after linalg-to-loops | filecheck %s --check-prefixes=SHARED,LOOPS
// GREP: linalg.nothing
// ERR: some other error
// SHARED: func.func @forward
// LOOPS: linalg.nothing
{SEED}"""


def test_run_lines_that_cannot_be_regenerated_say_why_and_stay(suite) -> None:
    path = suite.path / "stages.mlir"
    path.write_text(REFUSED)
    result = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-update-checks")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*stages.mlir:1: not updated: FileCheck reads the output of `grep`, not of an "
            "*-opt tool; update it by hand",
            "*stages.mlir:2: not updated: it checks stderr (2>&1): diagnostics are not regenerated",
            "*stages.mlir:5: not updated: prefix SHARED is also checked by RUN line 4, which "
            "is not updated; give the RUN lines prefixes of their own",
        ]
    )
    assert path.read_text() == REFUSED


def test_the_help_lists_the_update_flag(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        ["*--mlirpipe-update-checks", "*rewrite the CHECK lines of each RUN line whose FileCheck"]
    )


def test_a_file_that_fails_outside_filecheck_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "false.mlir"
    text = "// RUN: false\n// CHECK: anything\nfunc.func @f() {\n  return\n}\n"
    path.write_text(text)
    out = io.StringIO()
    assert mlirpipe(["update-checks", str(path)], io.StringIO(), out, io.StringIO()) == 1
    assert out.getvalue().splitlines() == [
        f"{path}: nothing to update: it fails, but not in a FileCheck that reads an *-opt "
        "tool's output (RUN line 1: `false` exited 1); see the failure with pytest or lit",
        f"{path}: FAIL",
    ]
    assert path.read_text() == text


def test_update_checks_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    err = io.StringIO()
    status = mlirpipe(
        ["update-checks", str(tmp_path / "no.mlir")], io.StringIO(), io.StringIO(), err
    )
    assert status == 2
    assert err.getvalue() == (
        f"mlirpipe update-checks: error: no such file or folder: {tmp_path / 'no.mlir'}\n"
        "  hint: give RUN/CHECK files, or folders of them\n"
    )


def test_a_folder_updates_the_files_pytest_would_run_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub" / "Output").mkdir(parents=True)
    failing = f"// RUN: mlirpipe-opt %s {CANON} | filecheck %s\n{FOLDS}"
    (tmp_path / "sub" / "fold.mlir").write_text(failing)
    (tmp_path / "sub" / "Output" / "fold.mlir").write_text(failing)  # lit's, not a test
    (tmp_path / "input.mlir").write_text("func.func @f() {\n  return\n}\n")  # no RUN line
    (tmp_path / "norun.mlir").write_text("// CHECK: f\nfunc.func @f() {\n  return\n}\n")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert mlirpipe(["update-checks", "."], io.StringIO(), out, io.StringIO()) == 1
    assert out.getvalue().splitlines() == [
        "norun.mlir: nothing to update: it runs no RUN line (lit: UNRESOLVED, Test has no "
        "'RUN:' line); see the failure with pytest or lit",
        "norun.mlir: UNRESOLVED",
        "sub/fold.mlir: updated the CHECK lines of RUN line(s) 1",
        "sub/fold.mlir: PASS after the update",
    ]
    assert (tmp_path / "sub" / "Output" / "fold.mlir").read_text() == failing
    err = io.StringIO()
    (tmp_path / "empty").mkdir()
    assert mlirpipe(["update-checks", "empty"], io.StringIO(), io.StringIO(), err) == 2
    assert err.getvalue() == (
        "mlirpipe update-checks: error: no RUN/CHECK files in empty\n  hint: files with RUN "
        "or CHECK lines and a suffix lit runs (.mlir outside a lit suite)\n"
    )


def test_a_run_line_whose_stage_fails_says_so_and_is_not_updated(tmp_path: Path) -> None:
    path = tmp_path / "stage.mlir"
    text = (
        "// RUN: mlirpipe-opt %s --pipeline tosa | filecheck %s\n// CHECK: foo\n"
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = tosa.custom %a "
        '{domain_name = "d", operator_name = "op", implementation_attrs = ""} : '
        "(tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n"
    )
    path.write_text(text)
    out = io.StringIO()
    assert mlirpipe(["update-checks", str(path)], io.StringIO(), out, io.StringIO()) == 1
    assert out.getvalue().splitlines() == [
        f"{path}:1: not updated: `mlirpipe-opt` exited 1: error: pipeline 'tosa', stage "
        "'tosa-to-linalg' failed: pass 'tosa-to-linalg' failed; the checks are not "
        "regenerated from a failed run",
        f"{path}: FAIL",
    ]
    assert path.read_text() == text


# As nearly every MLIR project's test/lit.cfg.py: lit.llvm substitutes FileCheck with the
# binary it finds in llvm_tools_dir (a path), which the update must record as well.
LLVM_LIT_CFG = """\
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "FOO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = {".mlir"}
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "Output")
llvm_config.use_default_substitutions()
"""
CANON = "--pass-pipeline='builtin.module(canonicalize)'"
FOLDS = (
    "// CHECK: arith.muli\nfunc.func @f(%a: i32) -> i32 {\n  %c0 = arith.constant 0 : i32\n"
    "  %r = arith.addi %a, %c0 : i32\n  return %r : i32\n}\n"
)


def _llvm_tools(folder: Path) -> Path:
    """Stand-ins for the LLVM tools lit.llvm looks for (FileCheck, not, count), FileCheck the
    Python port behind a program of that name (what LLVM's binary is to lit: a path)."""
    scripts = {
        "FileCheck": f'exec {sys.executable} -m filecheck "$@"',
        "not": '"$@" && exit 1\nexit 0',
        "count": 'test "$(wc -l)" -eq "$1"',
    }
    folder.mkdir(parents=True)
    for name, script in scripts.items():
        (folder / name).write_text(f"#!/bin/sh\n{script}\n")
        (folder / name).chmod(0o755)
    return folder / "FileCheck"


@pytest.mark.parametrize("suite_kind", ["lit.llvm substitutions", "FileCheck by path"])
def test_checks_a_filecheck_program_reads_are_updated(
    suite_kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = _llvm_tools(tmp_path / "llvm" / "bin")
    test = tmp_path / "test"
    test.mkdir()
    path = test / "fold.mlir"
    if suite_kind == "lit.llvm substitutions":
        (tmp_path / "pyproject.toml").write_text(
            '[tool.pytest.ini_options]\nmlirpipe_lit_site = ["llvm_tools_dir = llvm/bin"]\n'
        )
        (test / "lit.cfg.py").write_text(LLVM_LIT_CFG)
        (test / "lit.site.cfg.py").write_text(site_file_text("lit.cfg.py", "pyproject.toml", True))
        # `| not` becomes LLVM's `not` by path: still seen as a negated FileCheck.
        run_line = (
            f"// RUN: mlirpipe-opt %s {CANON} | FileCheck %s\n"
            f"// RUN: mlirpipe-opt %s {CANON} | not FileCheck %s --check-prefix=NEG\n// NEG: @f\n"
        )
        said = [
            f"{path}: updated the CHECK lines of RUN line(s) 1",
            f"{path}:2: not updated: its FileCheck is negated (`not`): it expects the checks "
            "to fail",
            f"{path}: FAIL after the update",
        ]
    else:
        run_line = f"// RUN: mlirpipe-opt %s {CANON} | {program} %s\n"
        said = [
            f"{path}: updated the CHECK lines of RUN line(s) 1",
            f"{path}: PASS after the update",
        ]
    path.write_text(run_line + FOLDS)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    out = io.StringIO()
    status = mlirpipe(["update-checks", str(path)], io.StringIO(), out, io.StringIO())
    assert (status, out.getvalue().splitlines()) == (len(said) - 2, said)
    assert path.read_text().startswith(
        f"{run_line}// CHECK-LABEL: func.func @f(\n"
        "// CHECK-SAME:               %[[ARG0:[^:]*]]: i32) -> i32 {\n"
        "// CHECK:           return %[[ARG0]] : i32\n"
    )


def test_a_filecheck_the_update_could_not_record_is_named_with_its_run_line() -> None:
    # A FileCheck lit ran as a process (under `ulimit`, say): what it read is unknown.
    check = CommandResult(("/llvm/bin/FileCheck", "/t/a.mlir"), 1, "", "error", stdin=None)
    step = RunStep(3, "foo-opt /t/a.mlir | /llvm/bin/FileCheck /t/a.mlir", (check,))
    targets, refused = update._targets([step], [], "/t/a.mlir")
    assert [(t.line, t.prefixes, t.updatable) for t in targets] == [(3, ("CHECK",), False)]
    assert refused == [
        (3, "its FileCheck ran as a process the update cannot follow; update it by hand")
    ]


INSIDE = f"""\
// RUN: mlirpipe-opt %s {CANON} | filecheck %s
func.func @f(%a: i32) -> i32 {{
// CHECK-LABEL: func.func @f
// CHECK: arith.muli
// CHECK-NOT: arith.addi
  %c0 = arith.constant 0 : i32
  %r = arith.addi %a, %c0 : i32
  return %r : i32
}}
func.func @g() {{
  return
}}
// CHECK-NOT: arith.subi
"""


def test_blocks_go_above_their_functions_and_dropped_not_lines_are_named(tmp_path: Path) -> None:
    path = tmp_path / "inside.mlir"
    path.write_text(INSIDE)
    out = io.StringIO()
    assert mlirpipe(["update-checks", str(path)], io.StringIO(), out, io.StringIO()) == 0
    assert out.getvalue().splitlines() == [
        f"{path}: updated the CHECK lines of RUN line(s) 1",
        f"{path}:5: dropped `// CHECK-NOT: arith.addi`: the output cannot say what must be "
        "absent; put it back where it belongs",
        f"{path}:13: dropped `// CHECK-NOT: arith.subi`: the output cannot say what must be "
        "absent; put it back where it belongs",
        f"{path}: PASS after the update",
    ]
    assert path.read_text() == (
        f"// RUN: mlirpipe-opt %s {CANON} | filecheck %s\n"
        "// CHECK-LABEL: func.func @f(\n"
        "// CHECK-SAME:               %[[ARG0:[^:]*]]: i32) -> i32 {\n"
        "// CHECK:           return %[[ARG0]] : i32\n"
        "// CHECK:         }\n"
        "func.func @f(%a: i32) -> i32 {\n"
        "  %c0 = arith.constant 0 : i32\n"
        "  %r = arith.addi %a, %c0 : i32\n"
        "  return %r : i32\n"
        "}\n"
        "\n"
        "// CHECK-LABEL: func.func @g() {\n"
        "// CHECK:           return\n"
        "// CHECK:         }\n"
        "func.func @g() {\n"
        "  return\n"
        "}\n"
    )


def test_a_block_of_an_op_the_pipeline_made_follows_the_block_before_it() -> None:
    lines = [
        "// RUN: x\n",
        "module {\n",
        '  func.func @f() attributes {s = "{"} {\n',
        "    func.call @g() : () -> ()  // calls @g {\n",
        "  }\n",
        "}\n",
    ]
    blocks = [["// P: #[[$ATTR_0:.+]] = a"], ["// P-LABEL: func.func @f("], ["// P-LABEL: @made"]]
    old = update_checks.directive_pattern(["P"])
    assert update_checks.replace_checks(lines, (0, len(lines)), old, blocks) == [
        "// RUN: x\n",
        "module {\n",
        "// P: #[[$ATTR_0:.+]] = a\n",
        "\n",
        "// P-LABEL: func.func @f(\n",
        "\n",
        "// P-LABEL: @made\n",
        *lines[2:],
    ]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("PASS", 0),
        ("FLAKYPASS", 0),
        ("XFAIL", 0),
        ("UNSUPPORTED", 0),
        ("FAIL", 1),
        ("XPASS", 1),
        ("UNRESOLVED", 1),
        ("TIMEOUT", 1),
    ],
)
def test_update_checks_exits_1_only_when_lit_counts_the_verdict_after_the_update_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, status: int
) -> None:
    import lit.Test

    from pytest_mlirpipe.filetests.runner import FileTestRunner
    from pytest_mlirpipe.filetests.verdict import FileVerdict

    def verdict(name: str) -> FileVerdict:
        return FileVerdict(name, "", getattr(lit.Test, name).isFailure)

    path = tmp_path / "f.mlir"
    path.write_text("// RUN: true\n")
    monkeypatch.setattr(FileTestRunner, "run", lambda self, path: verdict("FAIL"))
    monkeypatch.setattr(
        update,
        "update_file",
        lambda runner, path: update.UpdateReport(str(path), (1,), (), verdict(code)),
    )
    out = io.StringIO()
    assert mlirpipe(["update-checks", str(path)], io.StringIO(), out, io.StringIO()) == status
    assert out.getvalue().splitlines()[-1] == f"{path}: {code} after the update"
