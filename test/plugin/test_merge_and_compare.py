"""`mlirpipe merge` joins shards' junit XML and timing JSON; --mlirpipe-compare fails a run whose
tests got slower than a stored baseline beyond the threshold."""

from __future__ import annotations

import io
import json

import pytest

from pytest_mlirpipe.cli.main import run as mlirpipe

SLEEPY = "// RUN: %python -c \"import time; time.sleep({s}); print('ok')\" | filecheck %s\n"


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nmlirpipe_isolation = subprocess\n")
    for name in ("a", "b", "c", "d"):
        pytester.makefile(".mlir", **{name: SLEEPY.format(s=0.2) + "// CHECK: ok\n"})
    return pytester


def _merge(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = mlirpipe(["merge", *argv], io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def test_two_shards_merge_into_one_junit_and_one_timing_report(suite):
    for k in (1, 2):
        suite.runpytest(
            f"--mlirpipe-shard={k}/2", f"--junitxml=s{k}.xml", f"--mlirpipe-json=s{k}.json"
        ).assert_outcomes(passed=2)
    status, out, err = _merge("all.json", "s1.json", "s2.json")
    assert (status, err) == (0, ""), err
    assert out == "mlirpipe merge: 4 tests of 2 reports in all.json\n"
    merged = json.loads((suite.path / "all.json").read_text())
    assert sorted(merged["files"]) == [f"{n}.mlir::{n}.mlir" for n in "abcd"]
    assert {e["verdict"] for e in merged["files"].values()} == {"PASS"}
    status, out, err = _merge("all.xml", "s1.xml", "s2.xml")
    assert status == 0, err
    text = (suite.path / "all.xml").read_text()
    assert text.count("<testcase ") == 4 and 'tests="4"' in text
    status, _, err = _merge("twice.xml", "s1.xml", "s1.xml")
    assert status == 2
    assert "error: a.mlir::a.mlir is in both s1.xml and s1.xml" in err or "is in both" in err
    assert "hint: the shards overlap: give each machine its own --mlirpipe-shard K/N" in err


def test_merge_says_what_is_wrong_with_its_inputs(suite):
    (suite.path / "x.json").write_text('{"results": []}')
    status, _, err = _merge("out.txt", "x.json")
    assert (status, err) == (
        2,
        "mlirpipe merge: error: cannot tell the kind of out.txt\n  hint: name it *.xml or *.json\n",
    )
    status, _, err = _merge("out.json", "x.json", "gone.json", "y.xml")
    assert status == 2
    assert "error: no such report: gone.json" in err
    assert "error: y.xml is not a .json report like out.json" in err
    status, _, err = _merge("out.json", "x.json")
    assert "error: x.json is not a timing report of pytest-mlirpipe (format 1)" in err
    assert "hint: write one with pytest --mlirpipe-json PATH" in err


def test_merge_never_overwrites_a_report_such_as_a_shards_own(suite):
    one = suite.path / "shard1.xml"
    one.write_text('<testsuites><testsuite name="s" tests="1"/></testsuites>')
    before = one.read_text()
    status, _, err = _merge("shard1.xml", "shard2.xml")
    assert (status, err) == (
        2,
        "mlirpipe merge: error: shard1.xml exists: merge writes a new report and never overwrites "
        "one (its first argument is where the merged report goes)\n"
        "  hint: name a new file first: mlirpipe merge merged.xml shard2.xml\n",
    )
    assert one.read_text() == before


def _baseline(path, seconds: dict[str, float]) -> None:
    files = {f"{n}.mlir::{n}.mlir": {"verdict": "PASS", "seconds": s} for n, s in seconds.items()}
    path.write_text(json.dumps({"format": 1, "files": files, "results": []}))


def test_compare_passes_within_the_threshold_and_fails_a_regression(suite):
    _baseline(suite.path / "base.json", {n: 1000.0 for n in "abcd"})
    same = suite.runpytest("--mlirpipe-compare=base.json")
    assert same.ret == 0
    same.stdout.fnmatch_lines(
        ["mlirpipe: no test more than 20% slower than base.json (4 compared)"]
    )
    # b ran in 0.1 s in the baseline; a sleep of 0.2 s is more than 50 % slower
    _baseline(suite.path / "base.json", {"a": 1000.0, "b": 0.1, "c": 1000.0, "d": 0.01})
    slow = suite.runpytest("--mlirpipe-compare=base.json", "--mlirpipe-compare-threshold=50")
    assert slow.ret == pytest.ExitCode.TESTS_FAILED
    slow.stdout.fnmatch_lines(
        [
            "mlirpipe: 1 of 3 tests more than 50% slower than base.json:",
            "  b.mlir::b.mlir: 0.10 s -> * s (*x)",
        ]
    )


BAD_BASELINES = {
    "none.json": (
        None,
        "cannot read none.json as JSON: [Errno 2] No such file or directory: 'none.json'",
        "name the timing report of an earlier run (pytest --mlirpipe-json=PATH writes one)",
    ),
    "cut.json": (
        '{"format": 1, "files": {',
        "cannot read cut.json as JSON: Expecting property name enclosed in double quotes:"
        " line 1 column 25 (char 24)",
        "name the timing report of an earlier run (pytest --mlirpipe-json=PATH writes one)",
    ),
    "other.json": (
        '{"format": 7}',
        "other.json is not a timing report of pytest-mlirpipe (format 1)",
        "write one with pytest --mlirpipe-json PATH",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_BASELINES))
def test_a_baseline_that_cannot_be_read_stops_the_run_before_any_test(suite, name):
    text, error, hint = BAD_BASELINES[name]
    if text is not None:
        (suite.path / name).write_text(text)
    result = suite.runpytest(f"--mlirpipe-compare={name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "collected" not in result.stdout.str()  # stopped at configure time
    result.stderr.fnmatch_lines(
        [f"ERROR: mlirpipe: --mlirpipe-compare {name}: error: {error}", f"  hint: {hint}"]
    )


def test_a_bad_threshold_is_reported(suite):
    bad = suite.runpytest("--mlirpipe-compare-threshold=-5")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        [
            "ERROR: mlirpipe: the compare threshold must be a percentage >= 0, got '-5' "
            "(--mlirpipe-compare-threshold / mlirpipe_compare_threshold)"
        ]
    )


def test_merge_counts_read_in_the_singular_for_one(suite):
    suite.runpytest("--mlirpipe-shard=1/4", "--mlirpipe-json=one.json").assert_outcomes(passed=1)
    status, out, err = _merge("all.json", "one.json")
    assert (status, out, err) == (0, "mlirpipe merge: 1 test of 1 report in all.json\n", "")


def test_a_comparison_of_one_test_reads_in_the_singular():
    from pytest_mlirpipe.execution.results.baseline import Comparison, Slower, format_comparison

    result = Comparison(compared=1, slower=(Slower("a.mlir::a.mlir", 1.0, 2.0),))
    assert format_comparison(result, "base.json", 0.2).splitlines()[0] == (
        "mlirpipe: 1 of 1 test more than 20% slower than base.json:"
    )


def test_a_timing_report_that_cannot_be_written_is_one_line_not_a_traceback(suite):
    name = "t" * 300 + ".json"  # longer than a file name may be: only the write finds out
    result = suite.runpytest("a.mlir", f"--mlirpipe-json={name}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [f"mlirpipe: error: cannot write the timing report {name}: File name too long"]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
