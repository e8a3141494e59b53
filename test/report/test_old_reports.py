"""A file that passes again loses the stage report its failure named, in every run's folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_inputs import MATMUL

RUN = "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | FileCheck %s\n"
FAILING = RUN + "// CHECK: linalg.generic\n" + MATMUL
PASSING = RUN + "// CHECK: linalg.matmul\n" + MATMUL


def test_the_report_of_a_file_that_passes_again_is_removed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the inner runs: without -n
    bad = pytester.makefile(".mlir", bad=FAILING)
    failed = pytester.runpytest("-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    page = Path(next(ln for ln in failed.outlines if ln.startswith("stage report: "))[14:])
    assert page == pytester.path / "build/pytest/main/Output/bad.mlir.stages.html"
    assert page.exists()
    # One from a run under -n 8, whose worker gw7 ran the file.
    worker = pytester.path / "build/pytest/gw7/Output/bad.mlir.stages.html"
    worker.parent.mkdir(parents=True)
    worker.write_text(page.read_text())
    bad.write_text(PASSING)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not page.exists() and not worker.exists()
    assert (pytester.path / "build/pytest/main/Output").is_dir()  # the %t folder itself stays
