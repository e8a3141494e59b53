"""lit's own controls ($LIT_FILTER, $LIT_XFAIL, $LIT_OPTS, ...) act under pytest as under lit:
each test sets them for both runners and compares the verdicts of the files each one ran."""

from __future__ import annotations

import re
from pathlib import Path

import lit.cl_arguments
import pytest
from litrun import lit_verdicts
from parity import junit_outcomes

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
if lit_config.params.get("mode") == "fast":
    config.available_features.add("fast-mode")
"""
PASS = "// RUN: echo ok | filecheck %s\n// CHECK: ok\n"
FAIL = "// RUN: echo ok | filecheck %s\n// CHECK: no\n"
FILES = {
    "a-pass.mlir": PASS,
    "b-fail.mlir": FAIL,
    "dce-pass.mlir": PASS,
    "sub/dce-fail.mlir": FAIL,
    "sub/c-pass.mlir": PASS,
    "xf.mlir": "// XFAIL: *\n" + FAIL,
    "unsup.mlir": "// UNSUPPORTED: true\n" + PASS,
    "param.mlir": "// REQUIRES: fast-mode\n" + PASS,
}
LIT_VARIABLES = (
    "LIT_OPTS",
    "LIT_FILTER",
    "LIT_FILTER_OUT",
    "LIT_XFAIL",
    "LIT_XFAIL_NOT",
    "LIT_UNSUPPORTED",
    "LIT_UNSUPPORTED_NOT",
    "LIT_NUM_SHARDS",
    "LIT_RUN_SHARD",
)
SLOW = "// RUN: sleep 4\n"
WORKERS = pytest.mark.parametrize(
    "workers", [(), ("-n", "2"), ("--mlirpipe-jobs=2",)], ids=["serial", "xdist", "jobs"]
)
# lit 17 and 18 have no --unsupported / --unsupported-not (nor their variables).
HAS_UNSUPPORTED = "LIT_UNSUPPORTED" in Path(lit.cl_arguments.__file__).read_text(encoding="utf-8")


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    for name, text in FILES.items():
        path = pytester.path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    return pytester


def _set(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name in LIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def _pytest(suite: pytest.Pytester, *args: str) -> tuple[dict[str, str], pytest.RunResult]:
    """Each file's lit code under pytest (the junit property the plugin records)."""
    xml = suite.path / "build" / "junit.xml"
    # --mlirpipe-jobs forks: a process of its own, which has no other threads
    run = suite.runpytest_subprocess if "--mlirpipe-jobs=2" in args else suite.runpytest
    result = run("-p", "no:cacheprovider", f"--junitxml={xml}", *args)
    return junit_outcomes(xml), result


def _lit(suite: pytest.Pytester, *args: str) -> tuple[dict[str, str], str]:
    """Each file's code under lit, for the files it ran (not those it skipped or excluded)."""
    codes, output = lit_verdicts(suite.path, *args, ".")
    return {n: c for n, c in codes.items() if c not in ("SKIPPED", "EXCLUDED")}, output


def _same(suite: pytest.Pytester, *pytest_args: str, lit_args: tuple[str, ...] = ()):
    ours, result = _pytest(suite, *pytest_args)
    lits, output = _lit(suite, *lit_args)
    assert ours == lits and lits, (ours, output, result.stdout.str()[-3000:])
    return ours, result


@WORKERS
@pytest.mark.parametrize(
    ("env", "changed"),
    [
        ({"LIT_XFAIL": "b-fail.mlir;sub/c-pass.mlir"}, {"b-fail.mlir": "XFAIL"}),
        ({"LIT_XFAIL_NOT": "xf.mlir"}, {"xf.mlir": "FAIL"}),
        ({"LIT_OPTS": "--xfail='mlirpipe :: b-fail.mlir;a-pass.mlir'"}, {"a-pass.mlir": "XPASS"}),
        ({"LIT_OPTS": "--xfail-not xf.mlir"}, {"xf.mlir": "FAIL"}),
        # $LIT_OPTS' list replaces the variable's, as lit reads them
        ({"LIT_XFAIL": "b-fail.mlir", "LIT_OPTS": "--xfail a-pass.mlir"}, {"b-fail.mlir": "FAIL"}),
        ({"LIT_OPTS": "-D mode=fast"}, {"param.mlir": "PASS"}),
        ({"LIT_OPTS": "--param=mode=fast"}, {"param.mlir": "PASS"}),
    ],
    ids=["xfail", "xfail-not", "opts-xfail", "opts-xfail-not", "opts-over-env", "-D", "--param"],
)
def test_lits_lists_and_params_judge_each_file_as_lit_does(
    suite, monkeypatch, env, changed, workers
):
    _set(monkeypatch, env)
    ours, _ = _same(suite, *workers)
    for name, code in changed.items():
        assert ours[name] == code


@pytest.mark.skipif(not HAS_UNSUPPORTED, reason="this lit has no LIT_UNSUPPORTED")
@pytest.mark.parametrize(
    ("env", "changed"),
    [
        ({"LIT_UNSUPPORTED": "a-pass.mlir"}, {"a-pass.mlir": "UNSUPPORTED"}),
        ({"LIT_UNSUPPORTED_NOT": "unsup.mlir"}, {"unsup.mlir": "PASS"}),
        ({"LIT_OPTS": "--unsupported=b-fail.mlir"}, {"b-fail.mlir": "UNSUPPORTED"}),
    ],
    ids=["unsupported", "unsupported-not", "opts-unsupported"],
)
def test_lits_unsupported_lists_judge_each_file_as_lit_does(suite, monkeypatch, env, changed):
    _set(monkeypatch, env)
    ours, _ = _same(suite)
    for name, code in changed.items():
        assert ours[name] == code


@WORKERS
@pytest.mark.parametrize(
    ("env", "kept"),
    [
        ({"LIT_FILTER": "dce"}, 2),
        ({"LIT_FILTER_OUT": "dce|xf"}, 5),
        ({"LIT_OPTS": "--filter=DCE --filter-out=fail"}, 1),  # lit's are case-insensitive
        ({"LIT_FILTER": "mlirpipe :: sub/"}, 2),  # on lit's full name
        # lit filters, then shards what is left
        ({"LIT_FILTER": "pass", "LIT_OPTS": "--num-shards 2 --run-shard 2"}, 1),
    ],
    ids=["filter", "filter-out", "opts", "full-name", "then-shard"],
)
def test_lits_filters_deselect_the_files_lit_leaves_out(suite, monkeypatch, env, kept, workers):
    _set(monkeypatch, env)
    ours, result = _same(suite, *workers)
    assert len(ours) == kept
    if "-n" in workers:  # xdist's controller does not count the workers' deselected items
        result.stdout.fnmatch_lines([f"2 workers [[]{kept} item*[]]"])
    else:
        result.stdout.fnmatch_lines([f"* {len(FILES) - kept} deselected*"])


@WORKERS
def test_lits_filter_keeps_python_tests(suite, monkeypatch, workers):
    suite.makepyfile(test_plain="def test_one():\n    pass\n")
    _set(monkeypatch, {"LIT_FILTER": "dce"})
    result = suite.runpytest("-p", "no:cacheprovider", *workers)
    result.assert_outcomes(passed=2, failed=1)


def test_lits_max_failures_stops_the_run_where_lit_stops(suite, monkeypatch):
    _set(monkeypatch, {"LIT_OPTS": "--max-failures 1"})
    ours, result = _same(suite, lit_args=("-j1",))
    assert list(ours.values()).count("FAIL") == 1
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_lits_max_failures_stops_workers_too(suite, monkeypatch):
    _set(monkeypatch, {"LIT_OPTS": "--max-failures 1"})
    ours, result = _pytest(suite, "-n", "2")
    assert 1 <= list(ours.values()).count("FAIL") < 3 and len(ours) < len(FILES), ours
    result.stdout.fnmatch_lines(["*stopping after 1 failures*"])


def test_pytests_maxfail_wins_over_lits_max_failures(suite, monkeypatch):
    _set(monkeypatch, {"LIT_OPTS": "--max-failures 1"})
    ours, result = _pytest(suite, "--maxfail=2")
    assert list(ours.values()).count("FAIL") == 2, ours
    result.stdout.fnmatch_lines(["*stopping after 2 failures*"])


@WORKERS
def test_lits_timeout_limits_each_file_as_lit_does(suite, monkeypatch, workers):
    (suite.path / "slow.mlir").write_text(SLOW)
    _set(monkeypatch, {"LIT_OPTS": "--timeout 1"})
    ours, result = _same(suite, *workers)
    assert ours["slow.mlir"] == "TIMEOUT"
    result.stdout.fnmatch_lines(["*no verdict after 1 s (LIT_OPTS --timeout)*"])


def test_the_runs_own_timeout_wins_over_lits(suite, monkeypatch):
    (suite.path / "slow.mlir").write_text(SLOW)
    _set(monkeypatch, {"LIT_OPTS": "--timeout 1"})
    ours, _ = _pytest(suite, "slow.mlir", "--mlirpipe-timeout=30")
    assert ours == {"slow.mlir": "PASS"}


def test_a_file_on_lits_xfail_list_says_so(suite, monkeypatch):
    _set(monkeypatch, {"LIT_XFAIL": "b-fail.mlir;a-pass.mlir"})
    result = suite.runpytest("-p", "no:cacheprovider", "-rx", "a-pass.mlir", "b-fail.mlir")
    result.assert_outcomes(failed=1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "a-pass.mlir: XPASS: the file passed but lit's xfail list (LIT_XFAIL) expects a "
            "failure",
            "XFAIL b-fail.mlir::b-fail.mlir - XFAIL: failed as lit's xfail list (LIT_XFAIL) "
            "expects",
        ]
    )


@WORKERS
def test_lit_options_that_do_not_apply_are_named_once(suite, monkeypatch, workers):
    _set(monkeypatch, {"LIT_OPTS": "-j 2 -v --filter dce --shuffle --order=lexical -sv"})
    result = suite.runpytest("-p", "no:cacheprovider", *workers)
    notice = (
        "mlirpipe: LIT_OPTS: -j, -v, --shuffle, --order, -sv do not apply under pytest (ignored)"
    )
    assert result.stdout.str().count(notice) == 1, result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)


@WORKERS
def test_filters_that_leave_no_test_say_so_as_lit_stops_there(suite, monkeypatch, workers):
    _set(monkeypatch, {"LIT_FILTER": "nomatchatall"})
    result = suite.runpytest("-p", "no:cacheprovider", *workers)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    notice = (
        "mlirpipe: no test is left after lit's filters (LIT_FILTER='nomatchatall'); lit stops "
        "there with 'filter did not match any tests' (status 2)"
    )
    assert result.stdout.str().count(notice) == 1, result.stdout.str()
    _, output = lit_verdicts(suite.path, ".")
    assert "filter did not match any tests" in output


@pytest.mark.parametrize(
    ("opts", "flag"),
    [
        ("--order=lexical --num-shards 2 --run-shard 1 -v", []),
        ("--order=lexical -v", ["--mlirpipe-shard=1/2"]),
    ],
    ids=["lit-shard", "flag-shard"],
)
def test_lits_order_is_not_named_as_ignored_when_it_orders_a_shard(suite, monkeypatch, opts, flag):
    _set(monkeypatch, {"LIT_OPTS": opts})
    result = suite.runpytest("-p", "no:cacheprovider", *flag)
    result.stdout.fnmatch_lines(["mlirpipe: LIT_OPTS: -v does not apply under pytest (ignored)"])
    random = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-shard=1/2")
    assert "--order" not in random.stdout.str()  # no LIT_OPTS order: nothing named
    _set(monkeypatch, {"LIT_OPTS": "--order=random"})
    random = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-shard=1/2")
    random.stdout.fnmatch_lines(["*--order does not apply under pytest (ignored)"])


@WORKERS
def test_an_empty_shard_of_what_lits_filters_kept_is_not_blamed_on_the_filters(
    suite, monkeypatch, workers
):
    _set(monkeypatch, {"LIT_FILTER": "a-pass"})  # one file: the second shard of two is empty
    result = suite.runpytest("-p", "no:cacheprovider", "--mlirpipe-shard=2/2", *workers)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "no test is left after lit's filters" not in result.stdout.str()
    result = suite.runpytest("-p", "no:cacheprovider", "-k", "nothing", *workers)
    assert "no test is left after lit's filters" not in result.stdout.str()


def test_one_option_that_does_not_apply_is_named_in_the_singular(suite, monkeypatch):
    _set(monkeypatch, {"LIT_OPTS": "--time-tests"})
    result = suite.runpytest("-p", "no:cacheprovider", "-q", "a-pass.mlir")
    result.stdout.fnmatch_lines(
        ["mlirpipe: LIT_OPTS: --time-tests does not apply under pytest (ignored)"]
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"LIT_OPTS": "--timeout x"},
            "LIT_OPTS='--timeout x': argument --timeout: requires non-negative integer, "
            "but found 'x'",
        ),
        (
            {"LIT_OPTS": "--max-failures=0"},
            "LIT_OPTS='--max-failures=0': argument --max-failures: requires positive integer, "
            "but found '0'",
        ),
        (
            {"LIT_OPTS": "-v", "LIT_FILTER": "("},
            "LIT_OPTS='-v' LIT_FILTER='(': argument --filter: invalid regular expression: '(', *",
        ),
        ({"LIT_OPTS": "--bogus"}, "LIT_OPTS='--bogus': unrecognized arguments: --bogus"),
    ],
    ids=["timeout", "max-failures", "filter", "unknown"],
)
def test_a_value_lit_rejects_is_one_usage_error(suite, monkeypatch, env, message):
    _set(monkeypatch, env)
    result = suite.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: mlirpipe: {message} (lit stops on it too: fix or unset it)"]
    )
    assert len([line for line in result.stderr.lines if line.strip()]) == 1, result.stderr.lines
    _, output = lit_verdicts(suite.path, ".")
    reason = message.split(": ", 1)[1].rstrip("*")
    assert reason in output


@pytest.mark.parametrize("option", ["-h", "--version"])
def test_lit_opts_asking_for_lits_help_is_a_usage_error(suite, monkeypatch, option):
    _set(monkeypatch, {"LIT_OPTS": option})
    result = suite.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"ERROR: mlirpipe: LIT_OPTS='{option}': asks for lit's help or version, not a run "
            "(lit stops on it too: fix or unset it)"
        ]
    )


def test_an_unclosed_quote_in_lit_opts_is_a_usage_error(suite, monkeypatch):
    _set(monkeypatch, {"LIT_OPTS": "--xfail 'a.mlir"})
    result = suite.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            'ERROR: mlirpipe: LIT_OPTS="--xfail \'a.mlir": No closing quotation '
            "(lit stops on it too: fix or unset it)"
        ]
    )


def test_no_lit_variable_leaves_every_file_selected(suite, monkeypatch):
    _set(monkeypatch, {})
    result = suite.runpytest("-p", "no:cacheprovider", "--co", "-q")
    assert len(re.findall(r"^\S+\.mlir::", result.stdout.str(), re.M)) == len(FILES)
