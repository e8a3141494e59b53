"""The verdict types: one Enum per vocabulary, lit's codes by name, and plain strings outside."""

from __future__ import annotations

import json

import lit.Test
import pytest

from pytest_mlirpipe import ExecutionVerdict, ResultCode, SweepVerdict
from pytest_mlirpipe.execution.sweep.verdicts import VERDICTS, EntryResult
from pytest_mlirpipe.filetests.verdict import FileVerdict

LIT_CODES = lit.Test.ResultCode._instances


# Codes of a newer lit than the one installed (lit 23 added FIXED; lit 17 and 18 never give it).
NEWER_LITS_CODES = {"FIXED"}


def test_result_codes_are_lits_codes_by_name():
    assert set(LIT_CODES) <= set(ResultCode)
    assert set(ResultCode) - set(LIT_CODES) <= NEWER_LITS_CODES
    if lit.__versioninfo__ >= (19,):
        assert sorted(ResultCode) == sorted(LIT_CODES)


@pytest.mark.parametrize("name", sorted(LIT_CODES))
def test_a_result_code_maps_to_lits_own_object_and_fails_where_lits_fails(name):
    code = ResultCode(name)
    assert code.lit_code is LIT_CODES[name]
    assert ResultCode.of(LIT_CODES[name]) is code
    assert code.is_failure == LIT_CODES[name].isFailure


def test_only_fail_is_a_failing_execution_verdict():
    assert [v for v in ExecutionVerdict if v.is_failure] == [
        ExecutionVerdict.FAIL,
        ExecutionVerdict.TIMEOUT,
    ]


def test_sweep_verdicts_keep_the_summarys_column_order_and_fail_for_the_compiler_only():
    assert VERDICTS == ("PASS", "MISMATCH", "NOT-LOWERED", "CRASH", "TORCH", "HARNESS")
    assert [str(v) for v in SweepVerdict] == list(VERDICTS)
    assert [v.value for v in SweepVerdict if v.is_failure] == ["MISMATCH", "NOT-LOWERED", "CRASH"]


def test_a_verdict_given_by_name_becomes_the_enum_and_prints_as_the_name():
    verdict = FileVerdict("XFAIL", "", False)
    assert verdict.code is ResultCode.XFAIL
    assert verdict.code == "XFAIL" and f"{verdict.code}" == "XFAIL"


def test_a_sweep_entry_is_plain_json_with_its_verdict_as_a_string():
    entry = EntryResult("add", "float32", 0, "refbackend", "NOT-LOWERED")
    assert entry.verdict is SweepVerdict.NOT_LOWERED
    data = entry.to_json()
    assert type(data["verdict"]) is str and json.loads(json.dumps(data)) == data
    assert EntryResult.from_json(data) == entry


def test_an_unknown_name_is_refused():
    with pytest.raises(ValueError, match="'MAYBE' is not a valid ResultCode"):
        ResultCode("MAYBE")
