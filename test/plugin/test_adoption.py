"""Another compiler repo adopting the plugin: a few ini lines naming its own tool, then
`pytest test/` (and `lit test/` with a two-line lit.cfg.py) — the worked example of the README
and docs/guides/adopting.md."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from litrun import lit_verdicts

# The documented example, verbatim in spirit: the repo's `foo-opt` lives in build/bin.
PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["test"]
mlirpipe_tools = ["foo-opt"]
mlirpipe_tool_dirs = ["build/bin"]
mlirpipe_features = ["foo"]
"""
LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_here = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_here, exec_root=os.path.join(_here, "..", "build", "lit"))
"""
# A stand-in for a real *-opt tool: drops comments and renames "foo." ops to "bar.".
FOO_OPT = r"""#!/bin/sh
sed -e '/^\/\//d' -e 's/foo\./bar./g' "$1"
"""
GOOD = """\
// REQUIRES: foo
// RUN: foo-opt %s | filecheck %s
// CHECK: bar.op
// CHECK-NOT: foo.op
"foo.op"() : () -> ()
"""
BAD = """\
// RUN: foo-opt %s | filecheck %s
// CHECK: baz.op
"foo.op"() : () -> ()
"""


@pytest.fixture
def repo(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "pyproject.toml").write_text(PYPROJECT)
    tool = pytester.mkdir("build").joinpath("bin")
    tool.mkdir()
    (tool / "foo-opt").write_text(FOO_OPT)
    (tool / "foo-opt").chmod(0o755)
    test = pytester.mkdir("test")
    (test / "lit.cfg.py").write_text(LIT_CFG)
    (test / "good.mlir").write_text(GOOD)
    (test / "other.mlir").write_text(GOOD)
    (test / "bad.mlir").write_text(BAD)
    (test / "test_plain.py").write_text("def test_python_tests_live_alongside():\n    pass\n")
    return pytester


def _run(repo: pytest.Pytester, *args: str) -> pytest.RunResult:
    return repo.runpytest(*args, "-p", "no:cacheprovider")


def test_the_repos_own_tool_is_found_through_the_ini(repo: pytest.Pytester) -> None:
    result = _run(repo, "test/good.mlir", "test/other.mlir", "test/test_plain.py")
    result.assert_outcomes(passed=3)


def test_lit_with_the_two_line_config_gives_the_same_verdicts(repo: pytest.Pytester) -> None:
    codes, _ = lit_verdicts(repo.path, "test")
    assert codes == {"bad.mlir": "FAIL", "good.mlir": "PASS", "other.mlir": "PASS"}
    result = _run(repo, "-v")
    result.assert_outcomes(passed=3, failed=1)


def test_a_tool_that_is_not_installed_says_how_to_point_to_it(repo: pytest.Pytester) -> None:
    (repo.path / "build" / "bin" / "foo-opt").unlink()
    result = _run(repo, "test/good.mlir")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "test/good.mlir:2: FAIL at RUN line 2",
            "  'foo-opt': command not found",
            "  hint: 'foo-opt' is not installed or not on PATH: install it, add its directory"
            " to mlirpipe_tool_dirs, or map it in mlirpipe_tools (e.g. foo-opt=build/bin/foo-opt)",
        ]
    )


def test_k_selects_files_by_name(repo: pytest.Pytester) -> None:
    result = _run(repo, "-k", "good or plain")
    result.assert_outcomes(passed=2)


def test_x_stops_at_the_first_failing_file(repo: pytest.Pytester) -> None:
    result = _run(repo, "-x", "test/bad.mlir", "test/good.mlir")
    result.assert_outcomes(failed=1)


def test_last_failed_reruns_only_the_failing_file(repo: pytest.Pytester) -> None:
    first = repo.runpytest()
    first.assert_outcomes(passed=3, failed=1)
    again = repo.runpytest("--lf")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 1 failure*"])


def test_junitxml_records_each_file_with_its_failure(repo: pytest.Pytester) -> None:
    _run(repo, "--junitxml=report.xml")
    cases = {
        c.get("name"): c for c in ET.parse(repo.path / "report.xml").getroot().iter("testcase")
    }
    assert set(cases) == {"good.mlir", "other.mlir", "bad.mlir", "test_python_tests_live_alongside"}
    failure = cases["bad.mlir"].find("failure")
    assert failure is not None
    assert "FAIL at RUN line 1" in failure.get("message")
    assert 'error: Couldn\'t match "baz.op"' in failure.text


def test_collect_only_lists_one_item_per_file(repo: pytest.Pytester) -> None:
    result = _run(repo, "--collect-only", "-q")
    result.stdout.fnmatch_lines_random(
        [
            "test/bad.mlir::bad.mlir",
            "test/good.mlir::good.mlir",
            "test/other.mlir::other.mlir",
            "test/test_plain.py::test_python_tests_live_alongside",
        ]
    )


def test_xdist_gives_the_same_outcomes(repo: pytest.Pytester) -> None:
    result = repo.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test/bad.mlir:1: FAIL at RUN line 1*"])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            "--mlirpipe-isolation=thread",
            "*argument --mlirpipe-isolation: invalid choice: 'thread'*",
        ),
        (
            "--mlirpipe-timeout=soon",
            "*mlirpipe: the timeout must be a number of seconds >= 0 (0: none), got 'soon'"
            " (--mlirpipe-timeout / mlirpipe_timeout)*",
        ),
    ],
)
def test_bad_option_values_are_rejected_with_the_accepted_form(
    repo: pytest.Pytester, option: str, message: str
) -> None:
    result = _run(repo, option)
    assert result.ret != 0
    result.stderr.fnmatch_lines([message])


def test_a_bad_isolation_in_the_ini_is_rejected(repo: pytest.Pytester) -> None:
    (repo.path / "pyproject.toml").write_text(PYPROJECT + 'mlirpipe_isolation = "thread"\n')
    result = _run(repo)
    assert result.ret != 0
    result.stderr.fnmatch_lines(
        ["*mlirpipe: mlirpipe_isolation must be one of fork, none, subprocess, got 'thread'*"]
    )


# In an expected line: the code real lit gives the file (lit 17 FAILs a RUN line its shell
# cannot parse, lit 18 and later call the file UNRESOLVED).
LIT_CODE = "<lit's code>"
BAD_INPUTS = {
    "quote.mlir": (
        "// RUN: foo-opt %s | filecheck %s --check-prefix='X\n// X: bar.op\n",
        [
            f"test/quote.mlir: {LIT_CODE}: the test file is malformed",
            "test/quote.mlir:1: error: cannot parse RUN line 1: a quote is not closed",
            "  hint: close the quote, or escape a literal quote with a backslash",
        ],
    ),
    "subst.mlir": (
        "// RUN: foo-opt %S/%inputs | filecheck %s\n// CHECK: bar.op\n",
        [
            "test/subst.mlir: UNRESOLVED: the test file is malformed",
            "*/test/subst.mlir:1: error: unknown substitution '%inputs' in a RUN line",
            "  hint: define it in lit.cfg.py / mlirpipe_tools, with DEFINE:, or write %% for a"
            " literal %",
        ],
    ),
    "requires.mlir": (
        "// REQUIRES: foo ||\n// RUN: foo-opt %s | filecheck %s\n// CHECK: bar.op\n",
        [
            "test/requires.mlir: UNRESOLVED: the test file is malformed",
            "test/requires.mlir:1: error: malformed REQUIRES: expression 'foo ||': expected"
            " '!', '(', '{{', or identifier, found <end of expression>",
            "  hint: combine features with &&, || and ! and parentheses,"
            " e.g. REQUIRES: torch && !onnx",
        ],
    ),
    "nochecks.mlir": (
        '// RUN: foo-opt %s | filecheck %s\n"foo.op"() : () -> ()\n',
        [
            "test/nochecks.mlir:1: FAIL at RUN line 1",
            "  filecheck error: No check strings found with prefix CHECK:",
            "  hint: the check file has no CHECK: lines: add one, or pass the prefix its lines"
            " use (--check-prefix / --check-prefixes)",
        ],
    ),
    "norun.mlir": (
        "// CHECK: bar.op\n",
        ["test/norun.mlir: UNRESOLVED: the test file is malformed", "Test has no 'RUN:' line"],
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_test_files_get_a_located_message(repo: pytest.Pytester, name: str) -> None:
    text, expected = BAD_INPUTS[name]
    (repo.path / "test" / name).write_text(text)
    if any(LIT_CODE in line for line in expected):
        codes, output = lit_verdicts(repo.path, f"test/{name}")
        assert codes.get(name) in ("FAIL", "UNRESOLVED"), output
        expected = [line.replace(LIT_CODE, codes[name]) for line in expected]
    result = _run(repo, f"test/{name}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(expected)


INI_FORMS = {
    "tox.ini": "[pytest]\nmlirpipe_tools = foo-opt\nmlirpipe_tool_dirs = build/bin\n"
    "mlirpipe_features = foo\n",
    "setup.cfg": "[tool:pytest]\nmlirpipe_tools = foo-opt\nmlirpipe_tool_dirs = build/bin\n"
    "mlirpipe_features = foo\n",
    ".pytest.ini": "[pytest]\nmlirpipe_tools = foo-opt\nmlirpipe_tool_dirs = build/bin\n"
    "mlirpipe_features = foo\n",
}


@pytest.mark.parametrize("ini", sorted(INI_FORMS))
def test_settings_in_any_ini_file_pytest_reads_reach_lit_too(repo: pytest.Pytester, ini) -> None:
    (repo.path / "pyproject.toml").unlink()
    (repo.path / ini).write_text(INI_FORMS[ini])
    codes, output = lit_verdicts(repo.path, "test")
    assert codes == {"bad.mlir": "FAIL", "good.mlir": "PASS", "other.mlir": "PASS"}, output
    result = _run(repo, "test")
    result.assert_outcomes(passed=3, failed=1)
