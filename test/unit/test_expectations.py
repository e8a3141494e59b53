"""Expectations files from strings: read (every problem at its line), built from runs' reports,
updated from new ones with the comments kept; the one-line reasons of failing files and checks."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_mlirpipe.execution.check import Outcome
from pytest_mlirpipe.execution.refusal import Refusal
from pytest_mlirpipe.execution.results.compare import Tolerances, compare
from pytest_mlirpipe.execution.results.report import failure_reason as check_reason
from pytest_mlirpipe.execution.results.report import outcome_to_dict
from pytest_mlirpipe.expectations import (
    Entry,
    ExpectationsError,
    format_expectations,
    parse_expectations,
    results_of,
    update_expectations,
)
from pytest_mlirpipe.filetests.verdict import CommandResult, FileVerdict, RunStep
from pytest_mlirpipe.filetests.verdict import failure_reason as file_reason


def _problems(text: str) -> str:
    with pytest.raises(ExpectationsError) as info:
        parse_expectations(text, "exp.toml")
    return info.value.format()


def test_entries_are_read_with_their_lines_and_found_by_test_and_pipeline():
    text = (
        "# known failures\n\n[[xfail]]\ntest = 'a.mlir::a.mlir'\nreason = 'FAIL'\n\n"
        '[[xfail]]\ntest = "t.py::test_m"\npipeline = "tosa"\n'
    )
    index = parse_expectations(text, "exp.toml").by_test()
    assert list(index) == ["a.mlir::a.mlir", "t.py::test_m"]
    whole = index["a.mlir::a.mlir"][""]
    assert (whole.reason, str(whole.location)) == ("FAIL", "exp.toml:3")
    tosa = index["t.py::test_m"]["tosa"]
    assert (tosa.reason, str(tosa.location), list(index["t.py::test_m"])) == (
        "",
        "exp.toml:7",
        ["tosa"],
    )
    assert parse_expectations("", "exp.toml").entries == ()


def test_every_problem_of_a_file_is_said_at_its_line_in_order():
    text = (
        '[[xfail]]\ntest = "a.mlir::a.mlir"\nreson = "x"\n\n'
        '[[xfail]]\ntest = 3\npipeline = "tosa"\n\n'
        '[[xfail]]\nreason = "no test"\n\n'
        "[other]\nx = 1\n"
    )
    assert _problems(text) == (
        "exp.toml:3: error: unknown key 'reson' in an [[xfail]] entry\n"
        "  hint: did you mean 'reason'?\n"
        "exp.toml:6: error: 'test' must be a string, not an integer (3)\n"
        "exp.toml:9: error: an [[xfail]] entry needs a 'test': the pytest node id of the failing"
        " test\n"
        '  hint: e.g. test = "test/test_models.py::test_relu"\n'
        "exp.toml:12: error: unknown key 'other': an expectations file holds only [[xfail]] "
        "entries"
    )


def test_toml_that_does_not_parse_is_located_at_its_line_and_column():
    assert _problems('[[xfail]]\ntest = "a\n') == (
        "exp.toml:2:10: error: not valid TOML: Illegal character '\\n'"
    )


def test_xfail_that_is_no_list_of_tables_and_a_test_listed_twice_are_refused():
    assert _problems("xfail = 3\n") == (
        "exp.toml:1: error: 'xfail' must be a list of tables, each written [[xfail]]"
    )
    twice = '[[xfail]]\ntest = "a"\n[[xfail]]\ntest = "a"\nreason = "x"\n'
    assert _problems(twice) == (
        "exp.toml:3: error: a is listed twice (first at exp.toml:1)\n"
        "  hint: keep one of the two entries"
    )
    assert _problems('[[xfail]]\ntest = "a"\npipeline = ["x"]\n') == (
        "exp.toml:3: error: 'pipeline' must be a string, not an array (['x'])"
    )


REPORT = {
    "files": {
        "a.mlir::a.mlir": {"verdict": "FAIL", "seconds": 1.0, "reason": "FAIL: RUN line 1: x"},
        "b.mlir::b.mlir": {"verdict": "PASS", "seconds": 1.0},
        "c.mlir::c.mlir": {"verdict": "XFAIL", "seconds": 1.0},
        "d.mlir::d.mlir": {"verdict": "TIMEOUT", "seconds": 9.0},  # from before reasons
    },
    "results": [
        {"test": "t.py::test_m", "pipeline": "tosa", "verdict": "FAIL", "reason": "FAIL: no"},
        {"test": "t.py::test_m", "pipeline": "refbackend", "verdict": "PASS"},
        {"case": "m", "pipeline": "tosa", "verdict": "FAIL"},  # `mlirpipe run --json`
        {"test": "t.py::test_n", "pipeline": "tosa", "verdict": "TIMEOUT", "error": "slow\n  x"},
    ],
}


def test_the_failures_of_files_and_of_checks_made_in_tests_are_listed_with_their_reasons():
    results = results_of([REPORT])
    assert results.failures == (
        Entry("a.mlir::a.mlir", "", "FAIL: RUN line 1: x"),
        Entry("d.mlir::d.mlir", "", "TIMEOUT"),
        Entry("t.py::test_m", "tosa", "FAIL: no"),
        Entry("t.py::test_n", "tosa", "TIMEOUT: slow"),
    )
    assert ("t.py::test_m", "refbackend") in results.judged
    assert ("b.mlir::b.mlir", "") in results.judged


def test_shards_reports_add_up_and_the_written_file_reads_back():
    one = {"files": {k: v for k, v in REPORT["files"].items() if k < "c"}, "results": []}
    two = {"files": {k: v for k, v in REPORT["files"].items() if k >= "c"}, "results": []}
    text = format_expectations(results_of([one, two]).failures)
    assert text.endswith(
        '\n[[xfail]]\ntest = "a.mlir::a.mlir"\nreason = "FAIL: RUN line 1: x"\n\n'
        '[[xfail]]\ntest = "d.mlir::d.mlir"\nreason = "TIMEOUT"\n'
    )
    entries = parse_expectations(text, "e.toml").entries
    assert [(e.test, e.reason) for e in entries] == [
        ("a.mlir::a.mlir", "FAIL: RUN line 1: x"),
        ("d.mlir::d.mlir", "TIMEOUT"),
    ]


KEPT = """\
# our suite's known failures

# upstream bug 12
[[xfail]]  # since May
test = "a.mlir::a.mlir"
reason = "FAIL: old words"  # the first time

# passes now
[[xfail]]
test = "b.mlir::b.mlir"
reason = "FAIL"

# not run this time
[[xfail]]
test = "z.mlir::z.mlir"
reason = "FAIL"

# last words
"""


def test_update_keeps_comments_drops_what_passes_adds_what_fails_and_leaves_the_unrun():
    update = update_expectations(KEPT, "e.toml", results_of([REPORT]))
    assert update.text == (
        "# our suite's known failures\n\n"
        "# upstream bug 12\n"
        "[[xfail]]  # since May\n"
        'test = "a.mlir::a.mlir"\n'
        'reason = "FAIL: RUN line 1: x"  # the first time\n\n'
        "# not run this time\n"
        "[[xfail]]\n"
        'test = "z.mlir::z.mlir"\n'
        'reason = "FAIL"\n\n'
        '[[xfail]]\ntest = "d.mlir::d.mlir"\nreason = "TIMEOUT"\n\n'
        '[[xfail]]\ntest = "t.py::test_m"\npipeline = "tosa"\nreason = "FAIL: no"\n\n'
        '[[xfail]]\ntest = "t.py::test_n"\npipeline = "tosa"\nreason = "TIMEOUT: slow"\n\n'
        "# last words\n"
    )
    assert update.summary() == (
        "1 kept, 1 removed (now pass), 3 added, 1 not in the runs, left as they were"
    )
    assert [e.test for e in update.removed] == ["b.mlir::b.mlir"]


def test_update_of_a_file_without_entries_adds_them_after_its_own_lines():
    one = {"files": {"a.mlir::a.mlir": REPORT["files"]["a.mlir::a.mlir"]}}
    update = update_expectations("# nothing fails yet\n", "e.toml", results_of([one]))
    assert update.text == (
        "# nothing fails yet\n\n"
        '[[xfail]]\ntest = "a.mlir::a.mlir"\nreason = "FAIL: RUN line 1: x"\n'
    )
    assert update_expectations("", "e.toml", results_of([one])).text == update.text.split("\n\n")[1]


def test_update_refuses_a_file_whose_entries_are_not_xfail_tables():
    inline = 'xfail = [{test = "a.mlir::a.mlir"}]\n'
    with pytest.raises(ExpectationsError) as info:
        update_expectations(inline, "e.toml", results_of([REPORT]))
    assert info.value.format() == (
        "e.toml: error: --update rewrites entries written as [[xfail]] tables; this file writes"
        " them otherwise\n  hint: write each entry as an [[xfail]] table, or write a new file"
    )


def test_a_failing_files_reason_names_its_run_line_and_first_error():
    step = RunStep(
        3,
        "mlirpipe-opt %s | filecheck %s",
        (
            CommandResult(("mlirpipe-opt", "x.mlir"), 0, "ir", ""),
            CommandResult(("filecheck", "x.mlir"), 1, "", "x.mlir:5:11: error: no match\nmore"),
        ),
    )
    assert file_reason(FileVerdict("FAIL", "", True, steps=(step,))) == (
        "FAIL: RUN line 3: no match"
    )
    quiet = RunStep(2, "tool", (CommandResult(("/bin/tool",), 7, "", ""),))
    assert file_reason(FileVerdict("FAIL", "", True, steps=(quiet,))) == (
        "FAIL: RUN line 2: tool exited with status 7"
    )
    crashed = FileVerdict("FAIL", "", True, crash="killed by SIGSEGV, in stage 'x'")
    assert file_reason(crashed) == "FAIL: crashed (killed by SIGSEGV, in stage 'x')"
    assert file_reason(FileVerdict("TIMEOUT", "Reached timeout of 1 seconds\n", True)) == (
        "TIMEOUT: Reached timeout of 1 seconds"
    )


def test_a_failing_checks_reason_says_who_refused_it_where_or_how_it_ended():
    refused = Outcome(
        "m", "tosa", "FAIL", refusal=Refusal("compiler", "lower", "tosa-to-linalg", "no erf")
    )
    assert check_reason(refused) == (
        "FAIL: refused by the compiler at stage 'lower', pass 'tosa-to-linalg': no erf"
    )
    by_torch = Outcome("m", "tosa", "FAIL", refusal=Refusal("torch", "export", "", "data-dep"))
    assert check_reason(by_torch) == "FAIL: refused by torch at stage 'export': data-dep"
    hung = Outcome("m", "p", "TIMEOUT", error="no result after 1 s (mlirpipe_timeout)\n  more")
    assert check_reason(hung) == "TIMEOUT: no result after 1 s (mlirpipe_timeout)"
    assert outcome_to_dict(hung)["reason"] == check_reason(hung)
    one, two = np.ones(2, np.float32), np.zeros(2, np.float32)
    names = ["result 0 ('x')", "result 1 ('y')"]
    wrong = compare([one, one], [one, two], names, Tolerances(1e-5, 1e-5), (), "given")
    assert check_reason(Outcome("m", "p", "FAIL", comparison=wrong)) == (
        "FAIL: wrong results: result 1 ('y'): 2 of 2 elements differ (100.00%) beyond the given "
        "rtol=1e-05, atol=1e-05"
    )
    assert "reason" not in outcome_to_dict(Outcome("m", "p", "PASS"))
