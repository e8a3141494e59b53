"""--mlirpipe-expectations FILE: the failures `mlirpipe expectations` kept from a run's results
are strict xfails, for RUN/CHECK files and for each pipeline of an execution check, under
xdist too; a listed test that passes fails the run, and entries matching no test are named."""

from __future__ import annotations

import io
import json

import pytest

from pytest_mlirpipe.cli.main import run as mlirpipe

GOOD = "// RUN: %python -c \"print('ok')\" | filecheck %s\n// CHECK: ok\n"
BAD = "// RUN: %python -c \"print('ok')\" | filecheck %s\n// CHECK: nothing like it\n"

# A pipeline that stops before bufferizing: the compiler refuses to make native code of it.
BROKEN_PIPELINE = """\
[pipeline]
name = "broken"
description = "stops before bufferizing"
input = "linalg-on-tensors"
output = "llvm"

[[stage]]
name = "to-llvm"
reason = "only the function boundary"
passes = ["convert-func-to-llvm"]
"""

# Why bad.mlir fails (the Python FileCheck port's words), and as the TOML file writes it.
WHY = 'FAIL: RUN line 1: Couldn\'t match "nothing like it".'
WHY_TOML = 'reason = "FAIL: RUN line 1: Couldn\'t match \\"nothing like it\\"."'

MODELS = """
import torch


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_add_one(mlirpipe):
    mlirpipe.check(AddOne(), torch.ones(4), pipelines=["refbackend", "broken"])
"""


def _expectations(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = mlirpipe(["expectations", *argv], io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.chdir(pytester.path)
    pytester.makeini("[pytest]\nmlirpipe_isolation = subprocess\n")
    pytester.makefile(".mlir", good=GOOD, bad=BAD)
    return pytester


def _kept(suite: pytest.Pytester, *args: str, run=None) -> str:
    """Run the suite, write its expectations file from the results, return its text."""
    (run or suite.runpytest)("-p", "no:cacheprovider", "--mlirpipe-json=run.json", *args)
    status, _, err = _expectations("run.json", "-o", "expected.toml")
    assert (status, err) == (0, ""), err
    return (suite.path / "expected.toml").read_text()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_failing_file_kept_from_a_run_is_an_xfail_with_its_reason(suite, workers):
    text = _kept(suite, *workers)
    files = json.loads((suite.path / "run.json").read_text())["files"]
    assert (
        files["bad.mlir::bad.mlir"]["reason"] == WHY
        and "reason" not in files["good.mlir::good.mlir"]
    )
    assert 'test = "bad.mlir::bad.mlir"' in text and "good.mlir" not in text
    assert WHY_TOML in text
    result = suite.runpytest(
        "-p", "no:cacheprovider", "-rx", "--mlirpipe-expectations=expected.toml", *workers
    )
    assert result.ret == 0
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines([f"XFAIL bad.mlir::bad.mlir - {WHY} (listed in expected.toml:6)"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_listed_file_that_passes_fails_the_run_and_a_stale_entry_is_named(suite, workers):
    _kept(suite)
    (suite.path / "bad.mlir").write_text(GOOD)
    with (suite.path / "expected.toml").open("a") as f:
        f.write('\n[[xfail]]\ntest = "gone.mlir::gone.mlir"\nreason = "FAIL"\n')
    result = suite.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-expectations=expected.toml", *workers
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "listed as failing in expected.toml:6, now passes: remove the entry",
            "mlirpipe: expected.toml:10: the entry matches no test: no test "
            "gone.mlir::gone.mlir; remove it",
        ]
    )


def test_running_a_subset_does_not_make_the_other_entries_stale(suite):
    _kept(suite)
    result = suite.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-expectations=expected.toml", "good.mlir"
    )
    assert result.ret == 0
    result.assert_outcomes(passed=1)
    assert "matches no test" not in result.stdout.str()
    result = suite.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-expectations=expected.toml", "-k", "good"
    )
    assert result.ret == 0 and "matches no test" not in result.stdout.str()


@pytest.fixture
def models(suite: pytest.Pytester) -> pytest.Pytester:
    (suite.path / "pipelines").mkdir()
    (suite.path / "pipelines" / "broken.toml").write_text(BROKEN_PIPELINE)
    suite.makeini("[pytest]\nmlirpipe_isolation = subprocess\nmlirpipe_pipelines = pipelines\n")
    (suite.path / "good.mlir").unlink()
    (suite.path / "bad.mlir").unlink()
    suite.makepyfile(test_models=MODELS)
    return suite


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_execution_check_xfails_only_on_its_listed_pipeline(models, workers):
    text = _kept(models, *workers, run=models.runpytest_subprocess)
    rows = json.loads((models.path / "run.json").read_text())["results"]
    assert {(r["test"], r["pipeline"], r["verdict"]) for r in rows} == {
        ("test_models.py::test_add_one", "refbackend", "PASS"),
        ("test_models.py::test_add_one", "broken", "FAIL"),
    }
    assert text.count("\n[[xfail]]\n") == 1
    assert 'test = "test_models.py::test_add_one"\npipeline = "broken"\n' in text
    assert "reason = \"FAIL: refused by the compiler at stage 'llvm': left arith.addf" in text
    result = models.runpytest_subprocess(
        "-p", "no:cacheprovider", "-rx", "--mlirpipe-expectations=expected.toml", *workers
    )
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "XFAIL test_models.py::test_add_one - pipeline 'broken': FAIL: refused by the "
            "compiler at stage 'llvm': left arith.addf*(listed in expected.toml:6)"
        ]
    )
    # listed for refbackend, which passes: strict; and for a pipeline the test never checks
    (models.path / "expected.toml").write_text(
        text.replace('pipeline = "broken"', 'pipeline = "refbackend"')
        + '\n[[xfail]]\ntest = "test_models.py::test_add_one"\npipeline = "tosa"\n'
    )
    result = models.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mlirpipe-expectations=expected.toml", *workers
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*error: case 'test_add_one' through pipeline 'broken' (jit): error: pipeline "
            "'broken' left non-LLVM ops*",
            "test_models.py:10: error: pipeline 'refbackend': listed as failing in "
            "expected.toml:6, now passes: remove the entry",
            "mlirpipe: expected.toml:11: the entry matches no test: test_models.py::test_add_one "
            "checks no pipeline 'tosa'; remove it",
        ]
    )


def test_update_keeps_comments_drops_what_passes_and_adds_new_failures(suite):
    text = _kept(suite)
    (suite.path / "expected.toml").write_text(
        "# our suite's known failures\n\n"
        + text.replace("\n[[xfail]]\n", "\n# upstream bug 123\n[[xfail]]\n").replace(
            'reason = "FAIL: RUN', 'reason = "FAIL: RUN'
        )
    )
    (suite.path / "bad.mlir").write_text(GOOD)
    suite.makefile(".mlir", worse=BAD)
    suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-json=run2.json")
    status, out, err = _expectations("--update", "run2.json", "-o", "expected.toml")
    assert (status, err) == (0, "")
    assert out == (
        "mlirpipe expectations: expected.toml: 0 kept, 1 removed (now pass), 1 added\n"
        "  removed bad.mlir::bad.mlir: it passes now\n"
        f"  added worse.mlir::worse.mlir: {WHY}\n"
    )
    updated = (suite.path / "expected.toml").read_text()
    assert updated.startswith("# our suite's known failures\n\n# Expected failures:")
    assert "upstream bug 123" not in updated and "bad.mlir" not in updated
    assert updated.endswith(f'[[xfail]]\ntest = "worse.mlir::worse.mlir"\n{WHY_TOML}\n')
    # still failing: its comment and an inline one stay, the reason follows the run
    (suite.path / "expected.toml").write_text(
        updated.replace("\n[[xfail]]\n", "\n# flaky upstream\n[[xfail]]\n").replace(
            WHY_TOML, WHY_TOML + "  # since May"
        )
    )
    (suite.path / "worse.mlir").write_text(BAD.replace("nothing like it", "other"))
    suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-json=run3.json")
    status, out, _ = _expectations("--update", "run3.json", "-o", "expected.toml")
    assert out == "mlirpipe expectations: expected.toml: 1 kept, 0 removed (now pass), 0 added\n"
    kept = '# flaky upstream\n[[xfail]]\ntest = "worse.mlir::worse.mlir"\n'
    kept += WHY_TOML.replace("nothing like it", "other") + "  # since May\n"
    assert (suite.path / "expected.toml").read_text().endswith(kept)


def test_shards_results_add_up(suite):
    for k in (1, 2):
        suite.runpytest(
            "-p", "no:cacheprovider", f"--mlirpipe-shard={k}/2", f"--mlirpipe-json=s{k}.json"
        )
    status, out, err = _expectations("s1.json", "s2.json", "-o", "expected.toml")
    assert (status, out, err) == (
        0,
        "mlirpipe expectations: 1 expected failure in expected.toml\n",
        "",
    )
    assert json.loads((suite.path / "s1.json").read_text())["format"] == 1


BAD_FILES = {
    "syntax": (
        '[[xfail]]\ntest = "bad.mlir::bad.mlir\n',
        "expected.toml:2:27: error: not valid TOML: Illegal character '\\n'",
    ),
    "unknown key": (
        '[[xfail]]\ntest = "bad.mlir::bad.mlir"\nreson = "FAIL"\n',
        "expected.toml:3: error: unknown key 'reson' in an [[xfail]] entry\n"
        "  hint: did you mean 'reason'?",
    ),
    "wrong type": (
        '[[xfail]]\ntest = "bad.mlir::bad.mlir"\npipeline = 2\n',
        "expected.toml:3: error: 'pipeline' must be a string, not an integer (2)",
    ),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_a_bad_expectations_file_stops_the_run_at_its_line(suite, name):
    text, message = BAD_FILES[name]
    (suite.path / "expected.toml").write_text(text)
    result = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == f"ERROR: mlirpipe: {message.splitlines()[0]}"
    suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-json=run.json")
    status, _, err = _expectations("--update", "run.json", "-o", "expected.toml")
    assert (status, err) == (2, f"mlirpipe expectations: {message}\n")


def test_the_ini_key_names_the_file_relative_to_the_ini_file(suite):
    _kept(suite)
    suite.makeini(
        "[pytest]\nmlirpipe_isolation = subprocess\nmlirpipe_expectations = expected.toml\n"
    )
    sub = suite.mkdir("sub")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = suite.runpytest("-p", "no:cacheprovider", str(suite.path))
    result.assert_outcomes(passed=1, xfailed=1)


def test_the_help_names_the_flag_and_the_ini_key(suite):
    result = suite.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "*--mlirpipe-expectations=FILE*",
            "*the expected failures listed in FILE (written by*",
            "*mlirpipe_expectations (string):*",
            "*expectations file of expected failures (relative to this*",
        ]
    )


def test_a_missing_expectations_file_is_a_usage_error_with_the_fix(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-expectations=none.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[:2] == [
        "ERROR: mlirpipe: cannot read the expectations file none.toml: No such file or directory",
        "  hint: write one from a run's results: mlirpipe expectations RUN.json -o none.toml",
    ]


def test_the_command_never_replaces_a_file_and_updates_only_one_that_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text('{"format": 1, "files": {}, "results": []}')
    (tmp_path / "old.toml").write_text("")
    assert _expectations("run.json", "-o", "old.toml") == (
        2,
        "",
        "mlirpipe expectations: error: old.toml exists: without --update a new file is "
        "written, never over an old one\n"
        "  hint: rewrite it from the runs, keeping its comments: mlirpipe expectations "
        "--update run.json -o old.toml\n",
    )
    assert _expectations("--update", "run.json", "-o", "new.toml") == (
        2,
        "",
        "mlirpipe expectations: error: no expectations file new.toml to update\n"
        "  hint: write it first: mlirpipe expectations run.json -o new.toml\n",
    )
    assert _expectations("run.json", "-o", "new.toml") == (
        0,
        "mlirpipe expectations: 0 expected failures in new.toml\n",
        "",
    )
