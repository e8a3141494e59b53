"""Which RUN-line commands a preloaded fork may run, and when a fork stands for a fresh
interpreter (filetests/preload_plan.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_mlirpipe.filetests.preload_plan import (
    Launch,
    interpreter_traits,
    is_this_python,
    launch_of,
    stands_for,
    startup_environment,
)

PY = sys.executable


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([PY, "tool.py", "a"], Launch("script", "tool.py", ("tool.py", "a"))),
        ([PY, "-m", "pkg.mod", "a"], Launch("module", "pkg.mod", ("-m", "a"))),
        ([PY, "-mpkg", "a"], Launch("module", "pkg", ("-m", "a"))),
        ([PY, "-c", "print(1)", "a"], Launch("code", "print(1)", ("-c", "a"))),
        ([PY, "-cpass"], Launch("code", "pass", ("-c",))),
    ],
)
def test_this_python_running_a_script_a_module_or_code_is_a_launch(args, expected) -> None:
    assert launch_of(args, PY, "/") == expected


@pytest.mark.parametrize(
    "args", [[PY], [PY, "-u", "tool.py"], [PY, "-"], [PY, "-I", "-c", "pass"], [PY, "-m"]]
)
def test_other_ways_to_start_the_interpreter_run_as_processes(args) -> None:
    assert launch_of(args, PY, "/") is None


def test_a_console_script_of_this_python_is_a_script_named_by_its_path(tmp_path: Path) -> None:
    tool = tmp_path / "foo-opt"
    tool.write_text(f"#!{PY}\nprint(1)\n")
    assert launch_of(["foo-opt", "x"], str(tool), "/") == Launch(
        "script", str(tool), (str(tool), "x")
    )


@pytest.mark.parametrize(
    "first_line", ["#!/usr/bin/env python3", f"#!{PY} -u", "#!/bin/sh", "no shebang"]
)
def test_a_script_of_another_interpreter_or_with_options_runs_as_a_process(
    tmp_path: Path, first_line: str
) -> None:
    tool = tmp_path / "tool"
    tool.write_text(first_line + "\nprint(1)\n")
    assert launch_of(["tool"], str(tool), "/") is None


def test_the_base_python_a_venv_links_to_is_another_interpreter() -> None:
    base = os.path.realpath(PY)
    assert is_this_python(PY)
    assert not is_this_python("python3")  # a name, not a path
    if base != PY and os.path.dirname(base) != os.path.dirname(PY):
        assert not is_this_python(base)


def test_sys_path0_is_the_script_folder_the_working_folder_or_empty(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "tool.py").write_text("")
    (tmp_path / "link.py").symlink_to(tmp_path / "real" / "tool.py")
    cwd = str(tmp_path)
    assert Launch("script", "link.py", ()).path0(cwd) == str(tmp_path / "real")
    assert Launch("module", "m", ()).path0(cwd) == cwd
    assert Launch("code", "pass", ()).path0(cwd) == ""


def test_the_startup_environment_is_what_decides_imports() -> None:
    env = {"PYTHONPATH": "a", "LD_PRELOAD": "b", "LC_ALL": "C", "LANG": "C", "HOME": "/", "X": "1"}
    assert startup_environment(env) == {
        k: env[k] for k in ("PYTHONPATH", "LD_PRELOAD", "LC_ALL", "LANG")
    }
    assert "X" in startup_environment(env, named=("X",))


def test_a_fork_stands_for_an_interpreter_that_differs_in_what_it_is_given_back() -> None:
    here = {**interpreter_traits(), "environment": {"PYTHONPATH": "a", "LANG": "C.UTF-8"}}
    fresh = {**interpreter_traits(), "environment": {"PYTHONUNBUFFERED": "1"}}
    assert stands_for(here, fresh)


@pytest.mark.parametrize(
    "env", [{"LD_PRELOAD": "x.so"}, {"PYTHONHASHSEED": "0"}, {"PYTHONHOME": "/x"}, {"X": "1"}]
)
def test_a_fork_does_not_stand_for_an_interpreter_started_otherwise(env) -> None:
    here = {**interpreter_traits(), "environment": {}}
    fresh = {**interpreter_traits(), "environment": env}
    assert not stands_for(here, fresh, named=("X",))


def test_a_fork_does_not_stand_for_an_interpreter_with_other_flags() -> None:
    traits = interpreter_traits()
    here = {**traits, "environment": {}}
    optimized = {**traits, "flags": {**traits["flags"], "optimize": 1}, "environment": {}}
    assert not stands_for(here, optimized)
