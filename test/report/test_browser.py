"""The page in a real headless Chromium: the chart renders, a stage expands, and a page whose
last stage holds over 5,000 lines of IR loads and scrolls (times in the log)."""

from __future__ import annotations

import io
import logging
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_inputs import MATMUL, chain_of_adds

from pytest_mlirpipe.cli.main import run

log = logging.getLogger(__name__)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH: install Debian's `chromium` package (README set-up) to run "
    "the browser tests",
)
FAILING = (
    "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize | FileCheck %s\n"
    "// CHECK: linalg.fill_that_is_not_there\n" + MATMUL
)
# Scroll the element (the page when none) by 1.8 times its height per frame to the end; report
# the frames, the longest one, the median and the whole time, in milliseconds.
SCROLL = """async (selector) => {
  const el = selector ? document.querySelector(selector) : document.scrollingElement;
  const frames = [];
  const start = performance.now();
  let last = start;
  while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
    el.scrollTop += el.clientHeight * 1.8;
    await new Promise((done) => requestAnimationFrame(done));
    const now = performance.now();
    frames.push(now - last);
    last = now;
  }
  frames.sort((a, b) => a - b);
  return {frames: frames.length, total: last - start, longest: frames[frames.length - 1],
          median: frames[frames.length >> 1], height: el.scrollHeight};
}"""
OPEN = """async (selector) => {
  const start = performance.now();
  document.querySelector(selector).open = true;
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - start;
}"""
LOADED = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  return {dom: nav.domContentLoadedEventEnd, load: nav.loadEventEnd};
}"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Debian's Chromium driven by Playwright (its driver ships in the wheel: nothing is
    downloaded); the browser's profile goes under the test's folder, not $TMPDIR. Chromium
    aborts when the path of its socket there passes 107 bytes (a deep $TMPDIR): then the
    folder is a short one under /tmp, removed afterwards."""
    sync_api = pytest.importorskip("playwright.sync_api")
    folder = tmp_path_factory.mktemp("chromium")
    short = None
    if len(str(folder)) > 48:  # + /org.chromium.Chromium.XXXXXX/SingletonSocket
        short = Path(tempfile.mkdtemp(prefix="mlp-chromium-", dir="/tmp"))
        folder = short
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(folder))
        with sync_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            try:
                yield chromium
            finally:
                chromium.close()
                if short:
                    shutil.rmtree(short, ignore_errors=True)


@pytest.fixture
def page(browser):
    tab = browser.new_page(viewport={"width": 1200, "height": 900})
    yield tab
    tab.close()


def _stages_html(tmp_path: Path, source: str, name: str) -> Path:
    (tmp_path / name).write_text(source)
    out = tmp_path / f"{name}.html"
    argv = ["stages", str(tmp_path / name), "--pipeline", "refbackend", "--html", str(out)]
    assert run(argv, io.StringIO(), io.StringIO(), io.StringIO()) == 0
    return out


def _assert_chart_is_drawn(page) -> list[str]:
    box = page.locator("#op-chart").bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    series = page.locator("#op-chart g.series")
    dialects = [series.nth(i).get_attribute("data-dialect") for i in range(series.count())]
    legend = page.locator(".legend li")
    assert dialects == [legend.nth(i).get_attribute("data-dialect") for i in range(legend.count())]
    for i in range(series.count()):  # every line is drawn, not an empty path
        line = series.nth(i).locator("path").bounding_box()
        assert line is not None and line["width"] > 0
    return dialects


def test_the_cli_page_draws_the_chart_and_a_stage_expands(page, tmp_path):
    from playwright.sync_api import expect

    out = _stages_html(tmp_path, MATMUL, "mm.mlir")
    page.goto(out.as_uri())
    dialects = _assert_chart_is_drawn(page)
    assert {"linalg", "scf", "llvm"} <= set(dialects)
    diff = page.locator("#stage-2 details.diff pre")
    assert not diff.is_visible()
    page.click("#stage-2 > summary")
    assert diff.is_visible() and "bufferization.to_buffer" in diff.inner_text()
    page.click("#op-chart a[href='#stage-6']")  # a stage's label on the chart opens it
    # (on the hashchange event, which comes after the click: waited for, up to 5 s)
    expect(page.locator("#stage-6 details.diff pre")).to_be_visible(timeout=5000)


def test_the_page_of_a_failing_stage_test_draws_the_chart(page, pytester):
    pytester.makefile(".mlir", bad=FAILING)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    line = next(ln for ln in result.outlines if ln.startswith("stage report: "))
    page.goto(Path(line.removeprefix("stage report: ")).as_uri())
    _assert_chart_is_drawn(page)
    assert "RUN line 1 checks the IR after stage 'bufferize'." in page.inner_text("p.note")


def test_a_page_with_5000_lines_of_ir_loads_and_scrolls(page, tmp_path, record_property):
    out = _stages_html(tmp_path, chain_of_adds(190), "adds.mlir")
    page.goto(out.as_uri())
    loaded = page.evaluate(LOADED)
    last = page.locator("details.stage").last
    summary = last.locator("details.ir > summary").text_content()
    lines = int(re.search(r"\((\d+) lines\)", summary).group(1))
    assert lines >= 5000
    stage = f"#{last.get_attribute('id')}"
    opened = page.evaluate(OPEN, stage), page.evaluate(OPEN, f"{stage} details.ir")
    ir = page.evaluate(SCROLL, f"{stage} details.ir pre")
    diff = page.evaluate(SCROLL, f"{stage} details.diff pre")
    log.warning(
        "%s: %.1f MB, %d lines of IR after the last stage; loaded in %.0f ms (DOM %.0f ms); "
        "opening the stage with its diff %.0f ms, its IR %.0f ms; scrolling the IR: %d frames "
        "in %.0f ms, median %.1f ms, longest %.1f ms; the diff: %d frames in %.0f ms, median "
        "%.1f ms, longest %.1f ms (the machine may be loaded)",
        out.name,
        out.stat().st_size / 1e6,
        lines,
        loaded["load"],
        loaded["dom"],
        *opened,
        ir["frames"],
        ir["total"],
        ir["median"],
        ir["longest"],
        diff["frames"],
        diff["total"],
        diff["median"],
        diff["longest"],
    )
    record_property("page_load_ms", round(loaded["load"]))
    record_property("longest_scroll_frame_ms", round(max(ir["longest"], diff["longest"])))
    assert ir["frames"] > 10 and diff["frames"] > 10  # it did scroll through
    # Generous bounds: only a page that stalls fails them, even on a loaded machine.
    assert loaded["load"] < 15_000 and max(opened) < 10_000
    assert ir["longest"] < 2_000 and diff["longest"] < 2_000
