"""Under xdist the controller collects nothing: it never loads lit, the file runner or torch."""

from __future__ import annotations

import pytest

REPORT = """
import os, sys

def pytest_sessionfinish(session):
    who = os.environ.get("PYTEST_XDIST_WORKER", "controller")
    loaded = [m for m in ("lit", "pytest_mlirpipe.filetests.runner", "torch") if m in sys.modules]
    with open(f"loaded-{who}.txt", "w") as f:
        f.write(" ".join(loaded))
"""


def test_the_xdist_controller_loads_no_runner_lit_or_torch(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's name
    pytester.makeconftest(REPORT)
    pytester.path.joinpath("a.mlir").write_text("// RUN: true\n")

    result = pytester.runpytest_subprocess("-n", "1", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=1)
    assert pytester.path.joinpath("loaded-controller.txt").read_text() == ""
    worker = pytester.path.joinpath("loaded-gw0.txt").read_text().split()
    assert worker == ["lit", "pytest_mlirpipe.filetests.runner"]


LOADERS = """
import sys

import pytest_mlirpipe.options


def test_loaders():
    kinds = {
        name: type(sys.modules[name].__spec__.loader).__name__
        for name in ("pytest_mlirpipe.options", "pytest_mlirpipe.items", "pytest_mlirpipe.errors")
        + (__name__,)
    }
    assert kinds == {
        "pytest_mlirpipe.options": "SourceFileLoader",
        "pytest_mlirpipe.items": "SourceFileLoader",
        "pytest_mlirpipe.errors": "SourceFileLoader",
        __name__: "AssertionRewritingHook",  # a test module's asserts still are
    }
"""


def test_the_plugin_s_own_modules_are_not_recompiled_for_assertion_rewriting(
    pytester: pytest.Pytester,
) -> None:
    """Where no bytecode is written (PYTHONDONTWRITEBYTECODE), each rewritten module is read
    and compiled again at every start of pytest and of each xdist worker."""
    pytester.makepyfile(test_loaders=LOADERS)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
