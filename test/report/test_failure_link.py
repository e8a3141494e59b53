"""A failing stage check writes the file's stage report, names it in the failure text and,
with pytest-html, links it among the test's extras."""

from __future__ import annotations

from pathlib import Path

import pytest

BODY = """\
func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %cst = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.matmul ins(%arg0, %cst : tensor<2x2xf32>, tensor<2x2xf32>) \
outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}
"""
FAILING = (
    "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | FileCheck %s\n"
    "// CHECK: linalg.fill\n" + BODY
)
PASSING = (
    "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | FileCheck %s\n"
    "// CHECK: linalg.matmul\n" + BODY
)
PIPED = (
    "// RUN: cat %s | mlirpipe-opt --pipeline refbackend | FileCheck %s\n"
    "// CHECK: linalg.fill\n" + BODY
)


def _report_line(result: pytest.RunResult) -> str:
    return next(ln for ln in result.outlines if ln.startswith("stage report: "))


@pytest.mark.parametrize("isolation", ["fork", "none"])
def test_a_failing_stage_check_names_its_report_beside_the_files_output(pytester, isolation):
    pytester.makefile(".mlir", bad=FAILING, good=PASSING)
    result = pytester.runpytest(
        f"--mlirpipe-isolation={isolation}", "--junitxml=run.xml", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1, failed=1)
    page = Path(_report_line(result).removeprefix("stage report: "))
    junit = (pytester.path / "run.xml").read_text()
    assert f'<property name="mlirpipe_stage_report" value="{page}" />' in junit
    assert page.name == "bad.mlir.stages.html" and page.parent.name == "Output"
    text = page.read_text()
    assert "RUN line 1 checks the IR after stage &#x27;bufferize&#x27;." in text
    assert 'id="stage-9"' in text  # the whole pipeline, not only the checked stages
    # the stage the RUN line checked is open and marked, no other
    assert text.count("checked by the failing RUN line") == 1
    assert '<details class="stage checked" id="stage-2" data-stage="bufferize" open>' in text
    assert not (page.parent / "good.mlir.stages.html").exists()


def test_a_run_line_fed_by_a_pipe_gets_no_report_and_is_told_how_to_make_one(pytester):
    pytester.makefile(".mlir", piped=PIPED)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert _report_line(result) == (
        "stage report: not written: RUN line 1 reads its input from a pipe"
    )
    hint = next(ln for ln in result.outlines if ln.startswith("  hint: make one by hand: "))
    source = pytester.path / "piped.mlir"
    assert hint.startswith(
        f"  hint: make one by hand: cat {source} | mlirpipe stages - --pipeline refbackend --html /"
    )
    assert hint.endswith("/Output/piped.mlir.stages.html")


def test_pytest_html_links_the_report_among_the_extras(pytester):
    pytest.importorskip("pytest_html")
    pytester.makefile(".mlir", bad=FAILING)
    result = pytester.runpytest("--html=run.html", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    page = Path(_report_line(result).removeprefix("stage report: "))
    html = (pytester.path / "run.html").read_text()
    assert "stage report" in html and page.resolve().as_uri() in html


MATMUL_32 = """\
func.func @forward(%a: tensor<12x8xf32>, %b: tensor<8x64xf32>) -> tensor<12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x64xf32>) -> tensor<12x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<12x8xf32>, tensor<8x64xf32>) \
outs(%f : tensor<12x64xf32>) -> tensor<12x64xf32>
  return %r : tensor<12x64xf32>
}
"""


def test_the_report_lowers_with_the_run_line_s_env_assignments(pytester, monkeypatch):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "avx512f")  # the run's; the RUN line says avx2
    pytester.makefile(
        ".mlir",
        pinned="// RUN: env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt %s --pipeline "
        "refbackend-vectorized --stop-after pack-panels | FileCheck %s\n"
        "// CHECK: no-such-op\n" + MATMUL_32,
        piped="// RUN: cat %s | env MLIRPIPE_CPU_FEATURES=avx2 mlirpipe-opt --pipeline "
        "refbackend-vectorized | FileCheck %s\n// CHECK: no-such-op\n" + MATMUL_32,
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlirpipe-isolation=none")
    result.assert_outcomes(failed=2)
    page = Path(next(ln for ln in result.outlines if ln.startswith("stage report: /")).split()[-1])
    text = page.read_text()
    assert "width=16 rows=6" in text and "tensor&lt;4x8x16xf32&gt;" in text
    assert "width=64" not in text
    hint = next(ln for ln in result.outlines if ln.startswith("  hint: make one by hand: "))
    source = pytester.path / "piped.mlir"
    assert hint.startswith(
        f"  hint: make one by hand: cat {source} | MLIRPIPE_CPU_FEATURES=avx2 mlirpipe stages - "
        "--pipeline refbackend-vectorized --html /"
    )
