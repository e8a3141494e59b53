"""Every --mlirpipe-* option of file tests on the four kinds of lit suites (configure(), lit's
internal shell, an external shell, `mlirpipe init`): it does what docs/reference/options.md's
table "Options on every kind of suite" says, or the run says in one line why it cannot."""

from __future__ import annotations

import os
import re
import subprocess

import lit.llvm
import pytest
from litrun import lit_verdicts
from suite_kinds import KINDS, build_suite
from test_pipelines_option import PIPELINE

from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

P = ("-p", "no:cacheprovider")
STEADY = (
    "// RUN: foo-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s\n"
    "// CHECK: func.func @f\nfunc.func @f() {\n  return\n}\n"
)
BROKEN = STEADY.replace("// CHECK: func.func @f", "// CHECK: func.func @g")
SHUFFLED = (
    "// RUN: printf 'a\\nb\\nc\\nd\\ne\\nf\\n' | shuffle | FileCheck %s\n"
    "// CHECK-DAG: a\n// CHECK-DAG: f\n"
)


@pytest.fixture(params=KINDS)
def kind(request, monkeypatch: pytest.MonkeyPatch) -> str:
    # lit.llvm keeps the llvm_config of the last site config that initialized it.
    monkeypatch.setattr(lit.llvm, "llvm_config", None)
    return request.param


def suite(pytester: pytest.Pytester, kind: str, ini: str = "", **files: str) -> pytest.Pytester:
    build_suite(pytester.path, kind, {f"{n}.mlir": t for n, t in files.items()}, ini)
    return pytester


def test_repeat_fails_a_file_whose_output_changes_between_runs(pytester, kind) -> None:
    s = suite(pytester, kind, shuffled=SHUFFLED, steady=STEADY)
    result = s.runpytest(*P, "--mlirpipe-repeat=3")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["test/shuffled.mlir: FAIL: output of * differs between runs (run 1 and run *"]
    )


def test_lit_s_repeat_param_does_the_same_where_lit_reaches_it(pytester, kind) -> None:
    s = suite(pytester, kind, shuffled=SHUFFLED, steady=STEADY)
    codes, output = lit_verdicts(s.path, "test", "--param", "mlirpipe_repeat=3")
    # lit alone runs a plain or external-shell suite's own ShTest: nothing of the plugin's
    shuffled = "PASS" if kind in ("plain", "external") else "FAIL"
    assert codes == {"shuffled.mlir": shuffled, "steady.mlir": "PASS"}, output


def test_timeout_stops_a_file_at_the_limit(pytester, kind) -> None:
    s = suite(pytester, kind, sleeps="// RUN: sleep 30\n", steady=STEADY)
    result = s.runpytest(*P, "--mlirpipe-timeout=2")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["test/sleeps.mlir: TIMEOUT: *"])
    assert result.duration < 20


@pytest.mark.parametrize("isolation", ["fork", "none", "subprocess"])
def test_isolation_keeps_lit_s_verdicts(pytester, kind, isolation) -> None:
    s = suite(pytester, kind, steady=STEADY, broken=BROKEN)
    codes, output = lit_verdicts(s.path, "test")
    assert codes == {"steady.mlir": "PASS", "broken.mlir": "FAIL"}, output
    result = s.runpytest(*P, f"--mlirpipe-isolation={isolation}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED test/broken.mlir::broken.mlir*"])


def test_jobs_keep_lit_s_verdicts(pytester, kind) -> None:
    s = suite(pytester, kind, steady=STEADY, broken=BROKEN, shuffled=SHUFFLED)
    codes, output = lit_verdicts(s.path, "test")
    assert codes == {"steady.mlir": "PASS", "broken.mlir": "FAIL", "shuffled.mlir": "PASS"}, output
    # a process of its own: the test process's threads would keep the pool from forking
    result = s.runpytest_subprocess(*P, "--mlirpipe-jobs=2")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "mlirpipe: RUN/CHECK files run by 2 processes forked after collection",
            "FAILED test/broken.mlir::broken.mlir*",
        ]
    )
    result.stdout.no_fnmatch_line("*one at a time*")


@pytest.mark.skipif(find_llvm_filecheck() is None, reason="needs LLVM's FileCheck")
def test_filecheck_chooses_the_engine_of_the_suite_s_filecheck(pytester, kind) -> None:
    s = suite(pytester, kind, broken=BROKEN)
    llvm = s.runpytest(*P, "--mlirpipe-filecheck=llvm")
    llvm.assert_outcomes(failed=1)
    llvm.stdout.fnmatch_lines(["*error: CHECK: expected string not found in input*"])
    port = s.runpytest(*P, "--mlirpipe-filecheck=python")
    port.assert_outcomes(failed=1)
    port.stdout.fnmatch_lines(['*Couldn\'t match "func.func @g"*'])


def test_pipelines_reach_the_run_lines(pytester, kind) -> None:
    run = "// RUN: mlirpipe-opt %s --pipeline tidy-only | FileCheck %s\n"
    s = suite(pytester, kind, tidy=run + STEADY.split("\n", 1)[1])
    (s.path / "pipes").mkdir()
    (s.path / "pipes" / "tidy-only.toml").write_text(PIPELINE)
    s.runpytest(*P).assert_outcomes(failed=1)  # not found without the folder
    s.runpytest(*P, "--mlirpipe-pipelines=pipes").assert_outcomes(passed=1)


def test_order_lexical_or_smart_puts_last_run_s_failure_first(pytester, kind) -> None:
    s = suite(pytester, kind, a=STEADY, z=BROKEN)
    s.runpytest().assert_outcomes(passed=1, failed=1)  # pytest's cache keeps the failure
    lexical = s.runpytest("-v", "--mlirpipe-order=lexical")
    lexical.stdout.fnmatch_lines(["test/a.mlir::a.mlir PASSED*", "test/z.mlir::z.mlir FAILED*"])
    smart = s.runpytest("-v", "--mlirpipe-order=smart")
    smart.stdout.fnmatch_lines(["test/z.mlir::z.mlir FAILED*", "test/a.mlir::a.mlir PASSED*"])


def test_shard_runs_lit_s_shard(pytester, kind) -> None:
    s = suite(pytester, kind, a=STEADY, b=STEADY, c=STEADY)
    # pytest first: lit records its times after the run, and shards in their order
    result = s.runpytest(*P, "-v", "--mlirpipe-shard=2/2")
    codes, output = lit_verdicts(s.path, "test", "--num-shards=2", "--run-shard=2")
    ran = {n for n in ("a.mlir", "b.mlir", "c.mlir") if f"{n}::{n} PASSED" in result.stdout.str()}
    assert ran == set(codes) and len(ran) == 1, output


def test_lint_finds_check_lines_filecheck_would_ignore(pytester, kind) -> None:
    s = suite(pytester, kind, typo=STEADY + "// CHEK: func.func\n")
    s.runpytest(*P, "--mlirpipe-lint=off").assert_outcomes(passed=1)
    result = s.runpytest(*P, "--mlirpipe-lint=error")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test/typo.mlir:6: *CHEK*"])


def test_expectations_make_a_listed_failure_a_strict_xfail(pytester, kind) -> None:
    s = suite(pytester, kind, a=STEADY, z=BROKEN)
    listed = '[[xfail]]\ntest = "test/{}.mlir::{}.mlir"\nreason = "FAIL"\n'
    (s.path / "expected.toml").write_text(listed.format("z", "z") + listed.format("a", "a"))
    result = s.runpytest(*P, "--mlirpipe-expectations=expected.toml")
    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines(["*listed as failing in expected.toml:4, now passes*"])


def test_suffixes_say_that_a_lit_suite_s_config_chooses_its_files(pytester, kind) -> None:
    s = suite(pytester, kind, a=STEADY)
    (s.path / "test" / "b.td").write_text(STEADY)
    result = s.runpytest_subprocess(*P, "--mlirpipe-suffixes=.mlir,.td")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*: OptionNotApplied: mlirpipe: --mlirpipe-suffixes does not choose the files of"
            " the lit suite test/: its config.suffixes do, as lit's; the flag chooses files"
            " outside lit suites (a suite whose lit.cfg.py calls configure() takes the ini key"
            " mlirpipe_suffixes)"
        ]
    )
    assert result.stdout.str().count("--mlirpipe-suffixes does not choose") == 1


def test_update_checks_rewrites_the_failing_check_lines(pytester, kind) -> None:
    s = suite(pytester, kind, broken=BROKEN)
    result = s.runpytest(*P, "--mlirpipe-update-checks")
    if kind == "external":
        result.stdout.fnmatch_lines(
            [
                "mlirpipe-update-checks: *test/broken.mlir: not updated: its suite runs RUN lines"
                " in an external shell (lit's ShTest(execute_external=True)), where the update"
                " cannot see what FileCheck reads; update its CHECK lines by hand"
            ]
        )
        assert (s.path / "test" / "broken.mlir").read_text() == BROKEN
        return
    result.stdout.fnmatch_lines(
        ["mlirpipe-update-checks: *test/broken.mlir: updated the CHECK lines of RUN line(s) 1"]
    )
    assert "func.func @g" not in (s.path / "test" / "broken.mlir").read_text()
    s.runpytest(*P).assert_outcomes(passed=1)


def test_lit_on_an_init_adopted_suite_says_which_params_do_nothing_there(
    pytester, monkeypatch
) -> None:
    monkeypatch.setattr(lit.llvm, "llvm_config", None)
    s = suite(pytester, "init", steady=STEADY)
    codes, output = lit_verdicts(s.path, "test", "--param", "mlirpipe_filecheck=python")
    assert codes == {"steady.mlir": "PASS"}, output
    assert (
        "note: --param mlirpipe_filecheck does nothing in this suite: only a suite whose "
        "lit.cfg.py calls pytest_mlirpipe.configure() applies it; pytest's "
        "--mlirpipe-filecheck applies it to this suite too"
    ) in output
    assert output.count("does nothing in this suite") == 1
    codes, output = lit_verdicts(s.path, "test", "--param", "mlirpipe_repeat=often")
    assert codes == {"steady.mlir": "UNRESOLVED"}, output
    assert "--param mlirpipe_repeat takes a whole number of runs >= 1, got 'often'" in output


def test_the_reproduce_line_pasted_runs_where_lit_ran_the_file(pytester, kind) -> None:
    s = suite(pytester, kind, where="// RUN: sh -c 'echo \"ran in $PWD\"; exit 1'\n")
    codes, output = lit_verdicts(s.path, "-a", "test")
    assert codes == {"where.mlir": "FAIL"}, output
    result = s.runpytest(*P, "test")
    result.assert_outcomes(failed=1)
    report = result.stdout.str()
    repro = report.split("reproduce with:\n", 1)[1].splitlines()[0].strip()
    pasted = subprocess.run(["bash", "-c", repro], capture_output=True, text=True, check=False)
    printed = pasted.stdout.strip()
    # what the RUN line printed under lit (its own exec root) and under pytest (the run's)
    assert printed.startswith("ran in ") and printed in report, (repro, printed)
    lit_folder = re.search(r"ran in (/\S+)", output)  # what it printed, not the command
    assert lit_folder is not None, output
    if kind in ("plain", "external", "init"):  # the suite's own exec root: lit's folder
        assert os.path.realpath(printed[7:]) == os.path.realpath(lit_folder.group(1))


def test_shard_runs_lit_s_shard_by_lit_s_recorded_times(pytester, kind) -> None:
    files = {name: STEADY for name in ("a", "b", "c", "d", "e")}
    s = suite(pytester, kind, **files)
    lit_verdicts(s.path, "test")  # lit records each file's time in its exec root
    times = [p for p in s.path.rglob(".lit_test_times.txt")]
    assert len(times) == 1, times
    recorded = "0.1 a.mlir\n-0.2 b.mlir\n0.3 c.mlir\n0.4 d.mlir\n0.05 e.mlir\n"
    times[0].write_text(recorded)  # b failed, then d, c, a, e by time: shard 1/2 is b, c, e
    result = s.runpytest(*P, "-v", "--mlirpipe-shard=1/2")
    codes, output = lit_verdicts(s.path, "test", "--num-shards=2", "--run-shard=1")
    ran = {n for n in files if f"{n}.mlir::{n}.mlir PASSED" in result.stdout.str()}
    assert {f"{n}.mlir" for n in ran} == set(codes) == {"b.mlir", "c.mlir", "e.mlir"}, output
