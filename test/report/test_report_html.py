"""The page: self-contained, one chart series per dialect, stages collapsed, IR escaped."""

from __future__ import annotations

import re

from pytest_mlirpipe.lowering.report_html import PALETTE, render_html, write_html


def test_the_page_fetches_nothing_from_anywhere(matmul_report):
    page = render_html(matmul_report)
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "<style>" in page and "<script>" in page and "<svg" in page


def test_the_chart_has_one_series_per_dialect_and_a_point_per_stage(matmul_report):
    page = render_html(matmul_report)
    series = re.findall(r'<g class="series" data-dialect="([^"]+)" stroke="([^"]+)"', page)
    assert [d for d, _ in series] == matmul_report.dialects
    assert series[0][1] == PALETTE[0]
    linalg = re.search(r'<g class="series" data-dialect="linalg".*?</g>', page).group(0)
    assert linalg.count("<circle") == len(matmul_report.views)
    assert "linalg: 4 ops in the input" in linalg
    assert "linalg: 0 ops after stage 9 (convert-to-llvm)" in linalg


def test_every_stage_is_collapsed_and_a_stage_without_change_says_so(matmul_report):
    page = render_html(matmul_report)
    stages = re.findall(r'<details class="(stage[^"]*)" id="stage-(\d+)"[^>]*>', page)
    assert [int(n) for _, n in stages] == list(range(10))
    assert all(" open" not in tag for tag in re.findall(r'<details class="stage[^>]*>', page))
    # buffer-deallocation (4) has nothing to free: the matmul writes the buffer it returns
    assert [n for css, n in stages if css == "stage unchanged"] == ["1", "4", "8"]
    assert page.count('<span class="same">no change</span>') == 6  # table and section, 3 times


def test_ir_and_diffs_are_escaped_and_only_changed_lines_get_elements(matmul_report):
    page = render_html(matmul_report)
    assert "tensor&lt;2x2xf32&gt;" in page and "tensor<2x2xf32>" not in page
    bufferize = re.search(
        r'id="stage-2".*?<details class="diff" open>.*?(<pre>.*?</pre>)', page, re.S
    )
    diff = bufferize.group(1)
    added, removed = matmul_report.views[2].diff_stat()
    assert diff.count('<span class="add">') == added
    assert diff.count('<span class="del">') == removed


def test_a_failure_and_a_note_are_shown_above_the_chart(matmul_report):
    import dataclasses

    report = dataclasses.replace(
        matmul_report, failure="error: stage 'x' failed <here>", note="RUN line 3 checks it."
    )
    page = render_html(report)
    assert page.index('class="failure"') < page.index('id="chart"')
    assert "error: stage &#x27;x&#x27; failed &lt;here&gt;" in page
    assert '<p class="note">RUN line 3 checks it.</p>' in page


def test_write_html_makes_the_folder_and_leaves_no_partial_file(matmul_report, tmp_path):
    out = write_html(matmul_report, tmp_path / "new" / "mm.html")
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["mm.html"]
