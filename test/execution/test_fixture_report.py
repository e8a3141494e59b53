"""The `mlirpipe` fixture in a user's suite: failures, the end-of-run table, --mlirpipe-json."""

from __future__ import annotations

import json

import pytest

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
            "*mlirpipe: wrote 2 execution outcomes to*",
        ]
    )
    rows = {r["case"]: r for r in json.loads(report.read_text())["results"]}
    assert rows["test_add"]["verdict"] == "PASS" and rows["test_wrong"]["verdict"] == "FAIL"
    assert rows["test_add"]["timing"]["median"] > 0 and rows["test_add"]["flops"] == 4
