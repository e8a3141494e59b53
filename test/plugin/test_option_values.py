"""A `--mlirpipe-*` value given after a space that pytest took for a path to test when it chose
its rootdir (pytest issue #8846): the run stops before it writes anything, and says to give
the value with '='; a value pytest's choice does not depend on runs as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mlirpipe.rootdir_guard import misread_values

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


def test_a_config_file_between_the_two_folders_is_a_misread(tmp_path):
    (tmp_path / "repo" / "test").mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text("")
    (tmp_path / "out.json").write_text("{}")
    args = ["--mlirpipe-json", str(tmp_path / "out.json"), "-q"]
    # pytest found no config from tmp_path: the one in repo/ was passed by
    assert misread_values(args, ["--mlirpipe-json"], [], tmp_path / "repo" / "test", None) == [
        ("--mlirpipe-json", str(tmp_path / "out.json"))
    ]
    # a config found above both folders, none between: pytest's choice is the same
    (tmp_path / "repo" / "pyproject.toml").unlink()
    found = tmp_path / "pytest.ini"
    assert misread_values(args, ["--mlirpipe-json"], [], tmp_path / "repo" / "test", found) == []
    # a value that does not exist, or a flag of another plugin, is not a path pytest took
    gone = ["--mlirpipe-json", str(tmp_path / "none.json")]
    assert misread_values(gone, ["--mlirpipe-json"], [], tmp_path / "repo", None) == []
    other = ["--other", str(tmp_path / "out.json")]
    assert misread_values(other, ["--mlirpipe-json"], [], tmp_path / "repo", None) == []
