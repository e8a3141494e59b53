"""The report's data: op counts per dialect from the bindings, diffs, times, a failing stage."""

from __future__ import annotations

import pytest
from report_inputs import MATMUL

from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stage_report import dialect_counts, report_stages
from pytest_mlirpipe.mlir_env import new_context

TWO_STAGES = """\
[pipeline]
name = "tidy-then-tosa"
description = "a stage that works, then one that fails on tosa.custom"
input = "tosa"
output = "linalg-on-tensors"

[[stage]]
name = "tidy"
reason = "folds what folds"
passes = ["canonicalize"]

[[stage]]
name = "to-linalg"
reason = "no lowering knows tosa.custom"
passes = ["func.func(tosa-to-linalg)"]
"""
UNLOWERABLE = """\
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.custom %a {domain_name = "d", operator_name = "op", implementation_attrs = ""} \
: (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def test_op_counts_show_linalg_falling_to_zero_scf_rising_then_falling_and_llvm_rising(
    matmul_report,
):
    counts = [view.counts for view in matmul_report.views]
    # every op the module holds: fill, matmul and the linalg.yield of each one's implicit body
    assert counts[0]["linalg"] == 4 and "llvm" not in counts[0] and "scf" not in counts[0]
    assert "linalg" not in counts[-1] and "scf" not in counts[-1]
    assert set(counts[-1]) == {"llvm"} and counts[-1]["llvm"] > 50
    loops = matmul_report.views[[v.name for v in matmul_report.views].index("linalg-to-loops")]
    assert loops.counts["scf"] > 0 and "linalg" not in loops.counts


def test_each_stage_keeps_its_passes_and_time_and_the_input_has_none(matmul_report):
    first, *stages = matmul_report.views
    assert (first.number, first.name, first.seconds, first.passes) == (0, "input", None, ())
    assert [v.number for v in stages] == list(range(1, 10))
    assert all(v.seconds is not None and v.seconds >= 0 for v in stages)
    assert stages[1].name == "bufferize" and "one-shot-bufferize" in stages[1].passes[0]


def test_a_stage_that_changes_nothing_has_no_diff_and_one_that_does_has_its_counts(
    matmul_report,
):
    by_name = {v.name: v for v in matmul_report.views}
    same = by_name["generalize-tensor-pad"]
    assert same.diff == () and not same.changed
    changed = by_name["bufferize"]
    added, removed = changed.diff_stat()
    assert changed.changed and added > 0 and removed > 0
    assert changed.diff[0] == "--- after generalize-tensor-pad\n"
    assert changed.diff[1] == "+++ after bufferize\n"


def test_dialects_are_listed_most_ops_first(matmul_report):
    assert matmul_report.dialects[0] == "llvm"
    assert {"linalg", "scf", "memref", "func"} <= set(matmul_report.dialects)


def test_dialect_counts_leave_out_the_module_and_say_none_for_text_that_does_not_parse():
    context = new_context()
    assert dialect_counts("func.func @f() {\n  return\n}\n", context) == {"func": 2}
    assert dialect_counts("func.func @f( {", context) is None


def test_a_failing_stage_ends_the_report_after_the_stages_before_it(tmp_path):
    (tmp_path / "tidy-then-tosa.toml").write_text(TWO_STAGES)
    pipeline = catalog_for([tmp_path]).get("tidy-then-tosa")
    report = report_stages(UNLOWERABLE, pipeline, source_name="u.mlir")
    assert [v.name for v in report.views] == ["input", "tidy"]
    assert "stage 'to-linalg' failed" in report.failure
    assert "u.mlir:2:8" in report.failure


def test_start_after_takes_the_input_as_that_stages_ir_and_numbers_as_the_pipeline_does():
    pipeline = catalog_for([]).get("refbackend")
    report = report_stages(
        MATMUL,
        pipeline,
        source_name="mm.mlir",
        start_after="generalize-tensor-pad",
        stop_after="finalizing-bufferize",
    )
    names = [(v.number, v.name) for v in report.views]
    assert names == [
        (0, "after generalize-tensor-pad"),
        (2, "bufferize"),
        (3, "finalizing-bufferize"),
    ]


def test_input_that_does_not_parse_is_reported_at_its_line():
    from pytest_mlirpipe.errors import IRParseError

    with pytest.raises(IRParseError) as info:
        report_stages("func.func @f( {\n", catalog_for([]).get("refbackend"), source_name="x.mlir")
    assert "x.mlir:1" in info.value.format()


def test_a_report_that_cannot_be_written_suggests_no_command_that_fails_the_same_way(tmp_path):
    from pytest_mlirpipe.filetests.stage_report import StageCommand, write_stage_report

    source = tmp_path / "bad.mlir"
    source.write_text("func.func @f( {\n")
    command = StageCommand(
        line=1,
        input=str(source),
        pipeline="refbackend",
        pipelines_dir=(),
        start_after=None,
        stop_after="bufferize",
        split_input_file=False,
    )

    outcome = write_stage_report(command, tmp_path / "bad.stages.html", {})

    assert outcome.path == "" and outcome.hint == ""
    assert outcome.why_not.startswith(f"{source}:1:")
    assert not (tmp_path / "bad.stages.html").exists()
