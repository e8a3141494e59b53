"""The `mlirpipe` fixture in a user's suite: failures, the end-of-run table, --mlirpipe-json."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cases import HAS_OPENBLAS, NO_OPENBLAS

from pytest_mlirpipe.execution.results.report import format_side_by_side

SUITE = """
import torch


class Add(torch.nn.Module):
    def forward(self, a, b):
        return a + b


class Wrong(torch.nn.Module):
    def forward(self, a, b):
        return a - b


def test_add(mlirpipe):
    mlirpipe.check(Add(), torch.ones(4), torch.ones(4), pipelines=["refbackend"], flops=4)


def test_wrong(mlirpipe):
    mlirpipe.check(
        Wrong(), torch.ones(4), torch.ones(4), pipelines=["refbackend-dps"],
        reference=lambda a, b: a + b,
    )
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_table_and_json_cover_every_case_and_failures_show_the_report(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    report = pytester.path / "out.json"
    result = pytester.runpytest_subprocess(
        *workers, "-p", "no:cacheprovider", "--mlirpipe-time", f"--mlirpipe-json={report}"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*error: case 'test_wrong' through pipeline 'refbackend-dps' (jit, "
            "destination-passing): result 0 ('result0'): 4 of 4 elements differ (100.00%)*",
            "*mlirpipe execution*",
            "case *pipeline *verdict*max err*median*torch*ratio*GFLOP/s*notes*",
            "*mlirpipe: wrote 2 execution outcomes and 0 file timings to*",
        ]
    )
    rows = {r["case"]: r for r in json.loads(report.read_text())["results"]}
    assert rows["test_add"]["verdict"] == "PASS" and rows["test_wrong"]["verdict"] == "FAIL"
    assert rows["test_add"]["timing"]["median"] > 0 and rows["test_add"]["flops"] == 4


def test_an_untimed_session_ends_with_one_line_and_failures_carry_no_trace_records(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["mlirpipe: 2 execution checks (1 FAIL, 1 PASS); --mlirpipe-time for the table"]
    )
    text = result.stdout.str()
    assert "mlirpipe execution" not in text and "GFLOP/s" not in text
    assert "torch.__trace" not in text and "Captured log" not in text


BLAS_SUITE = """
import torch


class MatMul(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


def test_matmul(mlirpipe):
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    mlirpipe.check(
        MatMul(), a, b, pipelines=["refbackend-dps", "refbackend-dps-blas"], flops=2 * 8**3
    )
"""


@pytest.mark.skipif(not HAS_OPENBLAS, reason=NO_OPENBLAS)
def test_timed_session_shows_torch_plain_and_blas_side_by_side(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=BLAS_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlirpipe-time")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*mlirpipe execution: pipelines side by side*",
            "case *torch *refbackend-dps *refbackend-dps-blas",
            "test_matmul *s *s (*x) *s (*x)",
            "median per call; (Nx) = pipeline median / torch eager median",
        ]
    )


def _row(case: str, pipeline: str, median: float | None, verdict: str = "PASS") -> dict:
    timing = {"median": median} if median is not None else None
    return {
        "case": case,
        "pipeline": pipeline,
        "verdict": verdict,
        "timing": timing,
        "torch_timing": {"median": 1e-3} if timing else None,
    }


def test_side_by_side_has_a_column_per_pipeline_blas_last() -> None:
    rows = [
        _row("mlp", "refbackend-blas", 2e-3),
        _row("mlp", "refbackend", 4e-3),
        _row("add", "refbackend", 1e-3),  # one pipeline only: not in this table
        _row("mm", "refbackend", 1e-3),
        _row("mm", "refbackend-blas", None, "FAIL"),
    ]
    lines = format_side_by_side(rows).splitlines()
    assert lines[0].split() == ["case", "torch", "refbackend", "refbackend-blas"]
    assert lines[2].split() == [
        "mlp",
        "1.00",
        "ms",
        "4.00",
        "ms",
        "(4.00x)",
        "2.00",
        "ms",
        "(2.00x)",
    ]
    assert len(lines) == 4
    assert format_side_by_side([_row("add", "refbackend", 1e-3)]) == ""


TWO_CALLS = """
import torch


class Sub(torch.nn.Module):
    def forward(self, a, b):
        return a - b


def test_two_calls(mlirpipe):
    mlirpipe.check(Sub(), torch.ones(4), torch.ones(4), reference=lambda a, b: a - b)
    mlirpipe.check(Sub(), torch.ones(4), torch.ones(4), reference=lambda a, b: a + b)
"""


def test_a_failing_check_names_its_call_and_how_to_reproduce_the_lowering(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_suite=TWO_CALLS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_suite.py:11: error: case 'test_two_calls' through pipeline 'refbackend' (jit, "
            "*): result 0 ('result0'): 4 of 4 elements differ (100.00%)*",
            "  reproduce the lowering with: mlirpipe-opt *test_two_calls.input.mlir "
            "--pipeline refbackend -o *test_two_calls.llvm.mlir",
        ]
    )
    assert "test_suite.py:10" not in result.stdout.str()  # the first call, which passed
    assert "mlirpipe run" not in result.stdout.str().replace("`mlirpipe run --bisect`", "")
    line = next(x for x in result.stdout.lines if "reproduce the lowering with: " in x)
    command = line.split("reproduce the lowering with: ")[1].split()
    lowered = subprocess.run(command, capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr
    assert "llvm.func @forward" in Path(command[-1]).read_text()


COUNTING = """
import torch


class Counting(torch.nn.Module):  # one more in eager than torch.export sees
    def forward(self, x):
        return x if torch.compiler.is_exporting() else x + 1


def test_counting(mlirpipe):
    mlirpipe.check(Counting(), torch.ones(2, 3), atol=1e-6, rtol=0.0)
"""


def test_a_failing_check_of_a_model_in_a_file_prints_the_mlirpipe_run_command(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_counting=COUNTING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_counting.py:10: error: case 'test_counting' through pipeline 'refbackend'*",
            "  check it again outside pytest (seeded random inputs of these shapes): "
            f"cd {pytester.path} && mlirpipe run test_counting.py::Counting --inputs 2x3xf32 "
            "--pipeline refbackend --atol 1e-06 --rtol 0.0",
        ]
    )
    line = next(x for x in result.stdout.lines if x.startswith("  check it again outside"))
    command = line.split("shapes): ", 1)[1]
    elsewhere = pytester.mkdir("elsewhere")  # it runs as printed, from any folder
    rerun = subprocess.run(
        ["sh", "-c", f"{command} --no-time"], cwd=elsewhere, capture_output=True, text=True
    )
    assert rerun.returncode == 1
    assert rerun.stderr.startswith(
        "error: case 'test_counting.py::Counting' through pipeline 'refbackend' (jit, "
    )
