"""A `--mlirpipe-*` value given after a space that pytest took for a path to test when it chose
its rootdir (pytest issue #8846): the run stops before it writes anything, and says to give
the value with '='; a value pytest's choice does not depend on runs as given."""

from __future__ import annotations

from pathlib import Path

import pytest

GOOD = "// RUN: %python -c \"print('ok')\" | filecheck %s\n// CHECK: ok\n"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """proj/ (its pytest.ini, a passing file, a sub-folder) beside reports/ (a report of an
    earlier run and an expectations file), the run started in proj/."""
    proj = pytester.mkdir("proj")
    (proj / "pytest.ini").write_text("[pytest]\nmlirpipe_isolation = subprocess\n")
    (proj / "good.mlir").write_text(GOOD)
    (proj / "sub").mkdir()
    reports = pytester.mkdir("reports")
    (reports / "run.json").write_text("{}")
    (reports / "expected.toml").write_text("")
    monkeypatch.chdir(proj)
    return proj


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--mlirpipe-expectations", "../reports/expected.toml"),
        ("--mlirpipe-json", "../reports/run.json"),
    ],
)
def test_a_value_outside_the_project_after_a_space_stops_the_run_with_the_fix(
    pytester, project, flag, value
):
    result = pytester.runpytest("-p", "no:cacheprovider", flag, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[:2] == [
        f"ERROR: mlirpipe: {flag} {value}: pytest took this path for a path to test when it "
        f"chose its rootdir ({pytester.path}) and config file (none), before it knew this "
        "plugin's options (pytest issue #8846)",
        f"  hint: give the value with '=': {flag}={value}",
    ]
    assert not (pytester.path / "build").exists() and not (project / "build").exists()


def test_the_same_value_with_an_equals_sign_runs_under_the_projects_config(pytester, project):
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-expectations=../reports/expected.toml"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"rootdir: {project}", "configfile: pytest.ini"])


def test_a_value_that_moves_no_config_file_runs_after_a_space(pytester, project, monkeypatch):
    (project / "expected.toml").write_text("")
    monkeypatch.chdir(project / "sub")  # the folder pytest starts from moves up to proj/
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-expectations", "../expected.toml", str(project)
    )
    result.assert_outcomes(passed=1)
    assert result.stdout.str().count(f"rootdir: {project}") == 1


def test_a_value_that_switches_the_config_file_of_the_paths_given_is_a_misread(
    pytester, monkeypatch
):
    """pytest looks for its config from the paths given (the invocation folder only without
    any): sub/ has its own pytest.ini, which a report in the folder above would replace."""
    (pytester.path / "pytest.ini").write_text("[pytest]\n")
    (pytester.path / "sub").mkdir()
    (pytester.path / "sub" / "pytest.ini").write_text("[pytest]\nmlirpipe_isolation = subprocess\n")
    (pytester.path / "sub" / "good.mlir").write_text(GOOD)
    (pytester.path / "out.json").write_text("{}")
    monkeypatch.chdir(pytester.path)
    result = pytester.runpytest("-p", "no:cacheprovider", "sub", "--mlirpipe-json", "out.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[1] == "  hint: give the value with '=': --mlirpipe-json=out.json"
    assert "config file (" + str(pytester.path / "pytest.ini") + ")" in result.stderr.lines[0]
    result = pytester.runpytest("-p", "no:cacheprovider", "sub", "--mlirpipe-json=out.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"rootdir: {pytester.path / 'sub'}", "configfile: pytest.ini"])


def test_a_packaging_file_between_the_folders_is_not_a_config_file(pytester, monkeypatch):
    """A pyproject.toml without [tool.pytest...] is passed by, by pytest as here."""
    (pytester.path / "pytest.ini").write_text("[pytest]\nmlirpipe_isolation = subprocess\n")
    proj = pytester.mkdir("proj")
    (proj / "pyproject.toml").write_text('[project]\nname = "proj"\n')
    (proj / "good.mlir").write_text(GOOD)
    (pytester.mkdir("reports") / "run.json").write_text("{}")
    monkeypatch.chdir(proj)
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlirpipe-json", "../reports/run.json")
    result.assert_outcomes(passed=1)


def test_help_and_a_value_too_long_for_a_path_are_not_misreads(pytester, project):
    result = pytester.runpytest("--help", "--mlirpipe-json", "../reports/run.json")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--mlirpipe-json=PATH*"])
    result = pytester.runpytest("-p", "no:cacheprovider", "--mlirpipe-suffixes", "." + "m" * 300)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes()  # no .mmm... file: nothing is collected
