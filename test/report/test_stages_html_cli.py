"""`mlirpipe stages FILE --pipeline P --html OUT`: the page, what it says, its errors."""

from __future__ import annotations

import io

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
    page = tmp_path / "out" / "mm.html"
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


def test_an_out_path_that_cannot_be_written_is_a_usage_error(tmp_path):
    source = tmp_path / "mm.mlir"
    source.write_text(MATMUL)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    status, out, err = _mlirpipe(
        "stages", str(source), "--pipeline", "refbackend", "--html", str(blocked / "mm.html")
    )
    assert status == 2 and out == ""
    assert err.startswith(
        f"mlirpipe stages: {blocked / 'mm.html'}: error: --html: cannot write the report: "
        f"File exists: {blocked}\n"
    )
    assert "hint: give a path in a folder you can write to" in err
