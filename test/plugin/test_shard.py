"""--mlirpipe-shard K/N (or lit's LIT_RUN_SHARD/LIT_NUM_SHARDS): each CI machine runs the files
lit's --run-shard K --num-shards N runs there; other tests are shared out too."""

from __future__ import annotations

import re

import pytest
from litrun import lit_verdicts

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""
FILE = "// RUN: echo ok | filecheck %s\n// CHECK: ok\n"


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    names = ["b", "a", "zz", "m2", "m10", "sub/c", "sub/a", "Sub2/x"]
    for name in names:
        path = pytester.path / f"{name}.mlir"
        path.parent.mkdir(exist_ok=True)
        path.write_text(FILE)
    pytester.makepyfile(test_plain="def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    return pytester


def _collected(result: pytest.RunResult) -> set[str]:
    return set(re.findall(r"^(\S+\.mlir)::", result.stdout.str(), re.M))


def test_each_shard_holds_the_files_lit_runs_in_that_shard(suite, monkeypatch):
    # lit rewrites its recorded times after each run; in lexical order they do not count
    monkeypatch.setenv("LIT_OPTS", "--order=lexical")
    seen: list[str] = []
    for k in (1, 2, 3):
        ours = _collected(suite.runpytest("--co", "-q", f"--mlirpipe-shard={k}/3"))
        _, output = lit_verdicts(suite.path, "--num-shards=3", f"--run-shard={k}", ".")
        lits = set(re.findall(r"^\w+: \S+ :: (\S+\.mlir) \(", output, re.M))
        assert ours == lits and lits, (ours, output)
        seen += ours
    assert len(seen) == len(set(seen)) == 8


def test_lits_variables_shard_pytest_too_and_other_tests_are_shared(suite, monkeypatch):
    monkeypatch.setenv("LIT_NUM_SHARDS", "2")
    monkeypatch.setenv("LIT_RUN_SHARD", "2")
    result = suite.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*5 passed, 5 deselected*"])
    header = suite.runpytest("--co", "-p", "no:cacheprovider")
    header.stdout.fnmatch_lines(["mlirpipe: shard 2/2 (lit: --run-shard 2 --num-shards 2)"])


@pytest.mark.parametrize(
    ("flag", "env", "message"),
    [
        ("--mlirpipe-shard=3", {}, "mlirpipe: --mlirpipe-shard 3: expected K/N, e.g. 2/4*"),
        ("--mlirpipe-shard=a/2", {}, "*K and N must be whole numbers"),
        (
            "--mlirpipe-shard=3/2",
            {},
            "*the shard K must be between 1 and N (3/2)",
        ),
        (
            "-q",
            {"LIT_NUM_SHARDS": "4"},
            "mlirpipe: LIT_RUN_SHARD='' LIT_NUM_SHARDS='4': set both, as lit wants them together",
        ),
    ],
)
def test_a_bad_shard_is_a_usage_error(suite, monkeypatch, flag, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = suite.runpytest(flag)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_with_lits_recorded_times_each_shard_is_lits_in_its_smart_order(suite):
    """lit shards the tests in its default order: those that failed last time first, then the
    slower, by the times it recorded in the suite's exec root (and rewrites after each run:
    each runner starts from the same file here)."""
    times = suite.path / "build" / "lit" / ".lit_test_times.txt"
    times.parent.mkdir(parents=True)
    recorded = "0.5 zz.mlir\n-0.1 m10.mlir\n2.0 sub/c.mlir\n0.25 a.mlir\n1.0 Sub2/x.mlir\n"
    shards = []
    for k in (1, 2, 3):
        times.write_text(recorded)
        ours = _collected(suite.runpytest("--co", "-q", f"--mlirpipe-shard={k}/3"))
        _, output = lit_verdicts(suite.path, "--num-shards=3", f"--run-shard={k}", ".")
        lits = set(re.findall(r"^\w+: \S+ :: (\S+\.mlir) \(", output, re.M))
        assert ours == lits and lits, (ours, output)
        shards.append(ours)
    # m10 (failed), sub/c, Sub2/x, zz, a (by time), then b, m2, sub/a: shard 1 takes 1st, 4th, 7th
    assert shards[0] == {"m10.mlir", "zz.mlir", "m2.mlir"}
