"""An XFAIL file's report carries its reason, not a formatted traceback of pytest's frames."""

from __future__ import annotations

import pytest

RECORD = """
def pytest_runtest_logreport(report):
    if report.when == "call":
        with open("longrepr.txt", "w") as f:
            f.write(str(report.longrepr))
"""


def test_an_xfailed_file_reports_its_reason_without_a_traceback(pytester: pytest.Pytester):
    pytester.makeconftest(RECORD)
    pytester.path.joinpath("x.mlir").write_text("// XFAIL: *\n// RUN: false\n")

    result = pytester.runpytest("-rx", "-p", "no:cacheprovider")

    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL x.mlir::x.mlir - XFAIL: failed as the file's XFAIL*"])
    recorded = pytester.path.joinpath("longrepr.txt").read_text()
    assert recorded == "XFAIL: failed as the file's XFAIL line expects"
