"""A foreign repository's suite whose RUN lines run in an external shell loads lit and the
file runner, not this package's own test format, pipelines or in-process tools (a failing
file's report loads what it needs)."""

from __future__ import annotations

import pytest

LIT_CFG = """\
import lit.formats
config.name = "FOREIGN"
import lit
forced = {"force_execute_external": True} if lit.__versioninfo__ >= (19,) else {}
config.test_format = lit.formats.ShTest(execute_external=True, **forced)
config.suffixes = [".mlir"]
config.test_source_root = config.test_exec_root = __import__("os").path.dirname(__file__)
"""
REPORT = """
import sys

def pytest_sessionfinish(session):
    loaded = sorted(m for m in sys.modules if m.startswith("pytest_mlirpipe."))
    with open("loaded.txt", "w") as f:
        f.write(" ".join(loaded))
"""
NOT_NEEDED = (
    "pytest_mlirpipe.filetests.format",
    "pytest_mlirpipe.filetests.config",
    "pytest_mlirpipe.lowering.spec",
    "pytest_mlirpipe.lowering.catalog",
    "pytest_mlirpipe.tools.opt",
    "pytest_mlirpipe.tools.filecheck",
)


def test_an_external_shell_suite_loads_no_format_pipelines_or_tools(pytester: pytest.Pytester):
    pytester.makeconftest(REPORT)
    suite = pytester.mkdir("test")
    (suite / "lit.cfg.py").write_text(LIT_CFG)
    (suite / "passes.mlir").write_text("// RUN: echo ok | grep ok\n")
    (suite / "unsupported.mlir").write_text("// RUN: true\n// REQUIRES: no-such-feature\n")

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test")

    result.assert_outcomes(passed=1, skipped=1)
    loaded = pytester.path.joinpath("loaded.txt").read_text().split()
    assert "pytest_mlirpipe.filetests.runner" in loaded
    assert not set(NOT_NEEDED) & set(loaded), loaded
