"""--mlirpipe-pipelines / mlirpipe_pipelines: RUN lines find the folder's pipelines under every
isolation, in-process or as processes, and the test process's environment is left as it was."""

from __future__ import annotations

import os

import pytest

PIPELINE = """\
[pipeline]
name = "tidy-only"
description = "one stage of canonicalize"
input = "linalg-on-tensors"
output = "linalg-on-tensors"

[[stage]]
name = "tidy"
reason = "folds what folds"
passes = ["canonicalize"]
"""
TEST = """\
// RUN: mlirpipe-opt %s --pipeline tidy-only | filecheck %s
// CHECK: arith.addf
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "pipes").mkdir()
    (pytester.path / "pipes" / "tidy-only.toml").write_text(PIPELINE)
    (pytester.path / "uses_folder.mlir").write_text(TEST)
    return pytester


@pytest.mark.parametrize("isolation", ["fork", "none", "subprocess"])
def test_the_flag_puts_the_folder_on_the_run_lines_search_path(suite, isolation):
    before = os.environ.get("MLIRPIPE_PIPELINES_PATH")
    pipes = suite.path / "pipes"  # RUN lines run in the test's output folder
    result = suite.runpytest(
        f"--mlirpipe-pipelines={pipes}",
        f"--mlirpipe-isolation={isolation}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1)
    assert os.environ.get("MLIRPIPE_PIPELINES_PATH") == before


def test_the_ini_key_puts_the_folder_on_the_run_lines_search_path(suite):
    suite.makeini("[pytest]\nmlirpipe_pipelines = pipes\n")
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_flag_takes_a_folder_relative_to_where_pytest_starts(suite):
    result = suite.runpytest("--mlirpipe-pipelines=pipes", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_folder_that_is_not_there_stops_the_run_before_any_test(suite):
    result = suite.runpytest("--mlirpipe-pipelines=absent", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (
        "ERROR: mlirpipe: pipeline directory 'absent' does not exist "
        "(--mlirpipe-pipelines / mlirpipe_pipelines)"
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_without_the_folder_the_pipeline_is_unknown(suite):
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*unknown pipeline 'tidy-only'*"])


BROKEN = PIPELINE.replace("passes = [", "pases = [")
SHIPPED = TEST.replace(
    "--pipeline tidy-only", "--pipeline refbackend --stop-after generalize-tensor-pad"
)
NO_PIPELINE = TEST.replace("--pipeline tidy-only", "--pass-pipeline='builtin.module(cse)'")


@pytest.mark.parametrize("isolation", ["fork", "subprocess"])
def test_a_broken_pipeline_file_is_reported_once_first_and_the_other_files_run(suite, isolation):
    (suite.path / "pipes" / "tidy-only.toml").write_text(BROKEN)
    (suite.path / "also_uses_folder.mlir").write_text(TEST)
    (suite.path / "shipped.mlir").write_text(SHIPPED)
    (suite.path / "no_pipeline.mlir").write_text(NO_PIPELINE)
    pipes = suite.path / "pipes"
    result = suite.runpytest(
        f"--mlirpipe-pipelines={pipes}",
        f"--mlirpipe-isolation={isolation}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=2, failed=3)
    out = result.stdout.str()
    head = (
        "1 pipeline file of the run did not load; the tests that use their pipelines fail, "
        "the others run"
    )
    # once in the failures (pytest's short summary repeats a failure's first line, whole
    # where $CI is set)
    failures = out.split("short test summary info")[0]
    assert failures.count(head) == 1
    result.stdout.fnmatch_lines(
        [
            "collected 4 items",
            "",
            "pipes/tidy-only.toml F*",
            "*_ pipelines: pipes/tidy-only.toml _*",
            head,
            f"{pipes}/tidy-only.toml:10:1: error: unknown key 'pases' in [[stage]]",
            "  hint: did you mean 'passes' or 'replaces' or 'sizes'?",
        ]
    )
    failed = {line.split(" - ")[0] for line in out.splitlines() if line.startswith("FAILED")}
    assert failed == {
        "FAILED pipes/tidy-only.toml",
        "FAILED uses_folder.mlir::uses_folder.mlir",
        "FAILED also_uses_folder.mlir::also_uses_folder.mlir",
    }


def test_without_a_broken_file_no_pipeline_item_is_added(suite):
    pipes = suite.path / "pipes"
    result = suite.runpytest(f"--mlirpipe-pipelines={pipes}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "pipelines:" not in result.stdout.str()


def test_under_lit_a_broken_pipeline_file_fails_only_the_files_that_use_it(suite):
    from litrun import lit_verdicts
    from parity import LIT_CFG

    (suite.path / "lit.cfg.py").write_text(LIT_CFG)
    (suite.path / "pipes" / "tidy-only.toml").write_text(BROKEN)
    (suite.path / "shipped.mlir").write_text(SHIPPED)
    (suite.path / "no_pipeline.mlir").write_text(NO_PIPELINE)
    pipes = suite.path / "pipes"
    codes, out = lit_verdicts(suite.path, f"--param=mlirpipe_pipelines={pipes}", ".")
    assert codes == {"uses_folder.mlir": "FAIL", "shipped.mlir": "PASS", "no_pipeline.mlir": "PASS"}
    assert f"{pipes}/tidy-only.toml:10:1: error: unknown key 'pases' in [[stage]]" in out
