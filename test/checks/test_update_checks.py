"""--mlirpipe-update-checks and `mlirpipe update-checks`: only failing RUN lines' checks are
regenerated (generate-test-checks.py style), every other line stays, a second run is a no-op."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.main import run as mlirpipe
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
    assert "// OTHER:           memref.copy %[[VAL_3]], %[[VAL_4]]" in updated
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
        "tool's output; see the failure with pytest or lit",
        f"{path}: FAIL",
    ]
    assert path.read_text() == text


def test_update_checks_of_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    err = io.StringIO()
    status = mlirpipe(
        ["update-checks", str(tmp_path / "no.mlir")], io.StringIO(), io.StringIO(), err
    )
    assert status == 2
    assert (
        f"error: no such file: {tmp_path / 'no.mlir'}\n  hint: give RUN/CHECK files"
        in err.getvalue()
    )
