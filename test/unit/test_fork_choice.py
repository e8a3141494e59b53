"""With fork isolation, only files that run native code in-process, or have a time limit, pay
for a forked child; the others run unforked with the same verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mlirpipe import contain
from pytest_mlirpipe.filetests.inprocess import runs_native_code
from pytest_mlirpipe.filetests.runner import FileTestRunner
from pytest_mlirpipe.options import RunConfig

IR = "func.func @f() {\n  return\n}\n"
# The Python FileCheck (in-process, pure Python) after an external program.
NO_NATIVE = "// RUN: cat %s | filecheck %s\n// CHECK: func.func @f\n"
NATIVE = (
    "// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(cse)' | filecheck %s\n"
    "// CHECK: func.func @f\n"
)


@pytest.fixture
def forks(monkeypatch) -> list[int]:
    """Counts the forked children the runner starts."""
    started: list[int] = []
    real = contain.run_contained

    def counted(fn, timeout=None):
        started.append(1)
        return real(fn, timeout=timeout)

    monkeypatch.setattr(contain, "run_contained", counted)
    return started


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text + IR)
    return path


def test_a_file_of_external_tools_and_the_python_filecheck_is_not_forked(tmp_path, forks):
    runner = FileTestRunner(tmp_path / "out", RunConfig(isolation="fork"))
    passing = runner.run(_file(tmp_path, "ok.mlir", NO_NATIVE))
    failing = runner.run(_file(tmp_path, "bad.mlir", NO_NATIVE.replace("@f", "@{{[g]}}", 1)))

    assert (passing.code, failing.code) == ("PASS", "FAIL")
    assert passing.in_process == 1 and passing.subprocesses == 1
    assert "bad.mlir:2:" in failing.output  # the CHECK line that failed, from either engine
    assert forks == []


def test_a_file_that_runs_mlirpipe_opt_is_forked(tmp_path, forks):
    verdict = FileTestRunner(tmp_path / "out", RunConfig(isolation="fork")).run(
        _file(tmp_path, "opt.mlir", NATIVE)
    )
    assert verdict.code == "PASS"
    assert forks == [1]


@pytest.mark.parametrize(
    ("config", "extra"),
    [
        (RunConfig(isolation="fork", timeout=30), ""),
        (RunConfig(isolation="fork"), "// MLIRPIPE-TIMEOUT: 30\n"),
    ],
    ids=["run-limit", "file-limit"],
)
def test_a_file_with_a_time_limit_is_forked_whatever_it_runs(tmp_path, forks, config, extra):
    verdict = FileTestRunner(tmp_path / "out", config).run(
        _file(tmp_path, "limit.mlir", extra + NO_NATIVE)
    )
    assert verdict.code == "PASS"
    assert forks == [1]


@pytest.mark.parametrize(
    ("line", "native"),
    [
        ("/usr/bin/python -mpytest_mlirpipe.tools.opt x.mlir | FileCheck x.mlir", True),
        ("not /usr/bin/python -mpytest_mlirpipe.tools.opt x.mlir", True),
        ("foo-opt x.mlir | /usr/bin/python -mpytest_mlirpipe.tools.filecheck x.mlir", False),
        ("foo-opt %{readfile:args.txt}", True),  # expanded only as the line runs
    ],
)
def test_native_code_is_told_from_the_substituted_script(line, native):
    assert runs_native_code(["echo '# RUN: at line 1'", line]) is native


# A foreign suite of lit's internal shell; `extra` adds to its config.
SUITE_CFG = """\
import lit.formats
config.name = "FOREIGN"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = config.test_exec_root = __import__("os").path.dirname(__file__)
{extra}
"""
OPT = "/usr/bin/python -mpytest_mlirpipe.tools.opt"


def _suite(tmp_path: Path, extra: str = "") -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "lit.cfg.py").write_text(SUITE_CFG.format(extra=extra))
    return suite


@pytest.fixture
def substituted(monkeypatch) -> list[str]:
    """The files whose scripts were substituted to tell whether they run native code."""
    import pytest_mlirpipe.filetests.script as script

    asked: list[str] = []
    real = script.substituted_script

    def counted(test, features=None):
        asked.append(test.getSourcePath().rsplit("/", 1)[-1])
        return real(test, features)

    monkeypatch.setattr(script, "substituted_script", counted)
    return asked


def test_a_file_naming_no_such_tool_in_a_config_that_brings_none_is_not_substituted(
    tmp_path, substituted
):
    path = _file(_suite(tmp_path), "plain.mlir", NO_NATIVE)
    runner = FileTestRunner(tmp_path / "out", RunConfig(isolation="fork"))
    assert runner._runs_native_code(path) is False
    assert substituted == []


@pytest.mark.parametrize(
    ("extra", "text"),
    [
        (f"config.substitutions.append(('%opt', {OPT!r}))", "// RUN: %opt %s | filecheck %s\n"),
        ("", "// RUN: cat %s | filecheck %s\n// RUN: %{readfile:%s.args}\n"),
        ("", f"// DEFINE: %{{opt}} = {OPT}\n// RUN: %{{opt}} %s | filecheck %s\n"),
    ],
    ids=["config-substitution", "readfile", "define-line"],
)
def test_a_tool_a_substitution_or_the_file_may_bring_in_is_looked_for_in_the_script(
    tmp_path, substituted, extra, text
):
    path = _file(_suite(tmp_path, extra), "opt.mlir", text + "// CHECK: func.func @f\n")
    runner = FileTestRunner(tmp_path / "out", RunConfig(isolation="fork"))
    assert runner._runs_native_code(path) is True
    assert substituted == ["opt.mlir"]
