"""The sweep's verdicts from the project's errors and comparisons, its results file and reports."""

from __future__ import annotations

import json
import re

import pytest

from pytest_mlirpipe.errors import MlirpipeError, Problem, StageFailure
from pytest_mlirpipe.execution.check import Outcome
from pytest_mlirpipe.execution.native.model_lowering import check_llvm_only
from pytest_mlirpipe.execution.refusal import COMPILER, TORCH, Refusal, RefusedError
from pytest_mlirpipe.execution.results.compare import Comparison, ResultComparison
from pytest_mlirpipe.execution.sweep import report as sweep_report
from pytest_mlirpipe.execution.sweep import run as sweep
from pytest_mlirpipe.execution.sweep.opinfo import Unit
from pytest_mlirpipe.execution.sweep.verdicts import (
    EntryResult,
    Verdict,
    classify_comparison,
    classify_error,
    classify_exception,
    classify_outcome,
    stage_of_note,
)
from pytest_mlirpipe.model import Diagnostic, Location


def test_a_stage_failure_is_not_lowered_with_its_stage_pass_and_first_diagnostic():
    failure = StageFailure(
        "tosa",
        "tosa-to-linalg",
        ["func.func(tosa-to-linalg)", "canonicalize"],
        [Diagnostic("error", "failed to legalize operation 'math.erf'", Location("m", 3, 5))],
        "pass 'tosa-to-linalg' failed",
    )
    assert classify_error(failure) == Verdict(
        "NOT-LOWERED", "failed to legalize operation 'math.erf'", "tosa-to-linalg", "tosa-to-linalg"
    )


def test_a_stage_failure_without_a_named_pass_keeps_its_reason():
    failure = StageFailure("refbackend", "bufferize", ["a", "b"], [], "one of its passes failed")
    assert classify_error(failure) == Verdict(
        "NOT-LOWERED", "one of its passes failed", "bufferize", ""
    )


def _refused(by: str, stage: str, reason: str, pass_name: str = "") -> RefusedError:
    return RefusedError(Problem("words that do not matter"), Refusal(by, stage, pass_name, reason))


def test_the_compilers_refusal_is_not_lowered_with_its_stage_and_pass():
    refused = _refused(
        COMPILER,
        "import",
        "failed to legalize operation 'torch.aten.Float.Tensor'",
        "torch-backend-to-tosa-backend-pipeline",
    )
    assert classify_error(refused) == Verdict(
        "NOT-LOWERED",
        "failed to legalize operation 'torch.aten.Float.Tensor'",
        "import",
        "torch-backend-to-tosa-backend-pipeline",
    )


def test_a_refusal_drops_the_printed_op_but_keeps_an_opaque_operators_name():
    reason = (
        "failed to legalize operation 'torch.operator' that was explicitly marked illegal: %1 = "
        '"torch.operator"(%arg0) <{name = "torch.aten.addmv"}> : (!torch.vtensor) -> !torch.int'
    )
    assert classify_error(_refused(COMPILER, "import", reason)).detail == (
        "failed to legalize operation 'torch.operator' that was explicitly marked illegal "
        "(torch.aten.addmv)"
    )


def test_torchs_refusals_are_torch_with_their_stage():
    assert classify_error(_refused(TORCH, "export", "RuntimeError: no")) == Verdict(
        "TORCH", "RuntimeError: no", "export"
    )


def test_an_outcome_carries_its_refusal_whatever_its_message_says():
    refusal = Refusal(COMPILER, "llvm", reason="left math.erf, scf.for")
    outcome = Outcome("c", "p", "FAIL", error="error: anything at all", refusal=refusal)
    assert classify_outcome(outcome) == Verdict("NOT-LOWERED", "left math.erf, scf.for", "llvm")


def test_any_other_project_error_is_harness_with_its_first_line():
    error = MlirpipeError(
        Problem("result 'r' has type f64, which is not a ranked tensor", Location("e", 8, 1), "h")
    )
    assert classify_error(error) == Verdict(
        "HARNESS", "result 'r' has type f64, which is not a ranked tensor"
    )
    outcome = Outcome("c", "p", "FAIL", error=error.format())
    assert classify_outcome(outcome) == classify_error(error)


def _values(**kw) -> ResultComparison:
    return ResultComparison("result 0", False, "values", total=4, differing=1, **kw)


def test_wrong_values_are_a_mismatch_with_the_max_error():
    v = classify_comparison(Comparison((_values(max_abs=0.5, rtol=1e-4, atol=1e-5),)))
    assert (v.verdict, v.stage, v.max_abs) == ("MISMATCH", "compare", 0.5)
    assert v.detail.startswith("result 0: 1 of 4 elements differ (25.00%)")
    assert "max abs error 0.5" in v.detail


def test_a_wrong_result_count_or_signedness_is_how_the_harness_read_them():
    count = Comparison((), count_problem="the native code returned 2 results, torch returned 1")
    sign = ResultComparison("result 0", False, "dtype", dtype="int8", expected_dtype="uint8")
    assert classify_comparison(count) == Verdict(
        "HARNESS", "the native code returned 2 results, torch returned 1", "compare"
    )
    assert classify_comparison(Comparison((sign,))).verdict == "HARNESS"


def test_a_wrong_dtype_beyond_signedness_is_a_mismatch():
    wrong = ResultComparison("result 0", False, "dtype", dtype="float64", expected_dtype="float32")
    assert classify_comparison(Comparison((wrong,))).verdict == "MISMATCH"


def test_an_outcome_that_passed_keeps_its_max_error():
    match = ResultComparison("result 0", True, "match", max_abs=1e-7)
    outcome = Outcome("c", "tosa", "PASS", comparison=Comparison((match,)))
    assert classify_outcome(outcome) == Verdict("PASS", "", max_abs=1e-7)


def test_a_python_exception_is_harness_naming_where_in_the_project_it_rose():
    try:
        EntryResult.from_json(None)  # type: ignore[arg-type]
    except TypeError as exc:
        v = classify_exception(exc)
    assert v.verdict == "HARNESS"
    assert re.fullmatch(
        r"TypeError: argument of type 'NoneType' is not iterable "
        r"\(at execution/sweep/verdicts\.py:\d+ in <dictcomp>\)",
        v.detail,
    )


def test_a_crash_is_placed_by_the_last_progress_note():
    assert stage_of_note("stage 'bufferize' of pipeline 'tosa'") == "bufferize"
    assert stage_of_note("compiling the lowered module to native code (jit)") == "native"
    assert stage_of_note("running the compiled code") == "run"
    assert stage_of_note(None) == "import"


def _r(op: str, pipeline: str, verdict: str, detail: str = "", **kw) -> EntryResult:
    return EntryResult(
        op, kw.pop("dtype", "float32"), kw.pop("sample", 0), pipeline, verdict, detail, **kw
    )


def test_the_results_file_keeps_the_last_line_per_entry_and_skips_a_cut_line(tmp_path):
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(_r("add", "tosa", v).to_json()) for v in ("HARNESS", "PASS")]
    path.write_text("\n".join(lines) + '\n{"op": "mul", "dty')
    assert list(sweep.read_results(path).values()) == [_r("add", "tosa", "PASS")]


def test_the_appender_starts_a_new_line_after_a_cut_one(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"op": "mul", "dty')
    with sweep._appender(path) as write:
        write([_r("add", "tosa", "PASS")])
    assert list(sweep.read_results(path)) == [("add", "float32", 0, "tosa")]


def test_only_units_with_entries_left_are_run_and_they_skip_the_done_ones():
    units = [Unit("add", "float32", 1), Unit("mul", "float32", 2)]
    done = [("add", "float32", 0, "a"), ("add", "float32", 0, "b"), ("mul", "float32", 1, "a")]
    assert sweep._done_by_unit(units, ("a", "b"), done) == [(units[1], ((1, "a"),))]


RESULTS = [
    _r("add", "refbackend", "PASS", max_abs=0.0),
    _r("add", "tosa", "MISMATCH", "result 0: 1 of 4 differ", stage="compare", max_abs=0.25),
    _r("cumsum", "refbackend", "HARNESS", "Dialect `tm_tensor' not found for 'tm_tensor.scan'"),
    _r("sort", "refbackend", "HARNESS", "Dialect `tm_tensor' not found for 'tm_tensor.sort'"),
    _r("item", "refbackend", "HARNESS", "result has type f64, which is <not> a ranked tensor"),
    _r("add", "tosa", "PASS", dtype="float64", sample=1),
]


def test_the_summary_counts_each_verdict_per_pipeline():
    table = sweep_report.summary_table(RESULTS, ["refbackend", "tosa"]).splitlines()
    assert (
        table[0].replace(" ", "")
        == "|pipeline|PASS|MISMATCH|NOT-LOWERED|CRASH|TORCH|HARNESS|total|"
    )
    assert table[2].replace(" ", "") == "|refbackend|1|0|0|0|0|3|4|"
    assert table[3].replace(" ", "") == "|tosa|1|1|0|0|0|0|2|"


def test_harness_causes_are_grouped_by_message_commonest_first():
    rows = sweep_report.harness_causes(RESULTS).splitlines()
    assert (
        rows[2].replace(" ", "").startswith("|2|Dialect'…'notfoundfor'…'|cumsum(refbackend),sort")
    )
    assert "item (refbackend)" in rows[3]


def test_the_matrix_is_op_by_pipeline_sorted_with_dtype_and_sample_in_the_row_name():
    m = sweep_report.matrix(RESULTS, ["refbackend", "tosa"])
    assert list(m["ops"]) == ["add", "add [float64] #1", "cumsum", "item", "sort"]
    assert m["ops"]["add"] == {
        "refbackend": {"verdict": "PASS", "detail": "", "max_abs": 0.0},
        "tosa": {
            "verdict": "MISMATCH",
            "detail": "result 0: 1 of 4 differ",
            "stage": "compare",
            "max_abs": 0.25,
        },
    }
    assert set(m["versions"]) == {"torch-mlir", "torch"}


def test_the_html_matrix_is_one_escaped_page_with_a_cell_per_op_and_pipeline():
    m = sweep_report.matrix(RESULTS, ["refbackend", "tosa"])
    page = sweep_report.matrix_html(m, "counts <here>")
    assert page.startswith("<!DOCTYPE html>")
    assert "<pre>counts &lt;here&gt;</pre>" in page
    assert "which is &lt;not&gt; a ranked tensor" in page
    assert page.count("<tr>") == 1 + len(m["ops"])
    assert "<script" not in page and "http" not in page
    assert '<td style="background:#c8e6c9" title="max abs error 0.0"><b>PASS</b></td>' in page
    assert "<b>MISMATCH</b> <i>compare</i><br><small>result 0: 1 of 4 differ</small>" in page


def test_a_pipeline_that_leaves_non_llvm_ops_is_not_lowered_at_llvm():
    with pytest.raises(MlirpipeError) as info:
        check_llvm_only("  %0 = math.erf %x : f32\n  scf.for %i = ...\n", "p")
    assert info.value.format().startswith(
        "error: pipeline 'p' left non-LLVM ops: math.erf, scf.for\n  hint: an execution test"
    )
    assert classify_error(info.value) == Verdict("NOT-LOWERED", "left math.erf, scf.for", "llvm")


def test_a_results_file_that_is_not_text_is_a_usage_error_not_a_resume(tmp_path):
    from pytest_mlirpipe.errors import UsageError

    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"op": "add"}\n\xff\xfe\n')
    with pytest.raises(UsageError) as info:
        sweep.read_results(path)
    assert str(info.value) == (
        f"{path}: error: not the results file of a sweep: it is not UTF-8 text\n"
        "  hint: name a new folder with --out, or one a sweep wrote, to resume it"
    )
