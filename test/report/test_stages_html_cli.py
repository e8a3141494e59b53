"""`mlirpipe stages FILE --pipeline P --html OUT`: the page, what it says, its errors."""

from __future__ import annotations

import io

import pytest
from report_inputs import MATMUL

from pytest_mlirpipe.cli.main import run

UNLOWERABLE = """\
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.custom %a {domain_name = "d", operator_name = "op", implementation_attrs = ""} \
: (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def _mlirpipe(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(list(argv), io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def test_html_writes_the_page_and_says_where(tmp_path):
    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    page = tmp_path / "mm.html"
    status, out, err = _mlirpipe(
        "stages", str(source), "--pipeline", "refbackend", "--html", str(page)
    )
    assert (status, err) == (0, "")
    assert out == f"wrote {page} (9 stage(s) of pipeline 'refbackend')\n"
    text = page.read_text()
    assert f"<h1>{source}</h1>" in text and 'id="stage-9"' in text


def test_html_keeps_the_stage_range(tmp_path):
    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    page = tmp_path / "mm.html"
    status, out, _ = _mlirpipe(
        "stages",
        str(source),
        "--pipeline",
        "refbackend",
        "--stop-after",
        "bufferize",
        "--html",
        str(page),
    )
    assert status == 0 and "(2 stage(s) of pipeline 'refbackend')" in out
    assert 'id="stage-2"' in page.read_text() and 'id="stage-3"' not in page.read_text()


def test_a_failing_stage_is_on_the_page_and_on_stderr_and_exits_1(tmp_path):
    source = tmp_path / "u.mlir"
    source.write_text(UNLOWERABLE)
    page = tmp_path / "u.html"
    status, out, err = _mlirpipe("stages", str(source), "--pipeline", "tosa", "--html", str(page))
    assert status == 1
    assert out == f"wrote {page} (0 stage(s) of pipeline 'tosa')\n"
    assert err.startswith("error: pipeline 'tosa', stage '") and f"{source}:2:8" in err
    assert 'class="failure"' in page.read_text()


@pytest.mark.parametrize(
    ("out", "says"),
    [
        (
            "missing/mm.html",
            "cannot write the report: no folder {tmp}/missing\n"
            "  hint: make the folder first, or name one that is",
        ),
        (
            "a-folder",
            "cannot write the report: it is a folder\n"
            "  hint: name the page: --html {tmp}/a-folder/mm.mlir.html",
        ),
        (
            "a-file/mm.html",
            "cannot write the report: {tmp}/a-file is not a folder\n"
            "  hint: give a path in a folder you can write to",
        ),
    ],
)
def test_an_out_path_that_cannot_be_written_is_refused_before_the_pipeline_runs(
    tmp_path, monkeypatch, out, says
):
    import pytest_mlirpipe.lowering.stage_report as stage_report

    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(stage_report, "report_stages", None)  # never reached
    page = tmp_path / out
    status, stdout, err = _mlirpipe(
        "stages", str(source), "--pipeline", "refbackend", "--html", str(page)
    )
    assert (status, stdout) == (2, "")
    assert err.startswith(
        f"mlirpipe stages: {page}: error: --html: {says.format(tmp=tmp_path)}\n"
    ), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "a-folder", "mm.mlir"]


def test_a_failed_write_names_the_folder_not_the_temporary_file(tmp_path, monkeypatch):
    import pytest_mlirpipe.lowering.report_html as report_html

    def refused(report, path, make_parents=True):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".mm.html.x1y2.tmp"))

    monkeypatch.setattr(report_html, "write_html", refused)
    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    status, _, err = _mlirpipe(
        "stages",
        str(source),
        "--pipeline",
        "refbackend",
        "--stop-after",
        "bufferize",
        "--html",
        str(tmp_path / "mm.html"),
    )
    assert status == 2
    assert err.startswith(
        f"mlirpipe stages: {tmp_path / 'mm.html'}: error: --html: cannot write the report: "
        f"Permission denied (in {tmp_path})\n  hint: give a path in a folder you can write to"
    ), err
