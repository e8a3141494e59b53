"""Failure reports of `.mlir` files that another repository's lit configuration runs: the
commands' stdout as lit shows it, hints that are paths, and a reproduce line that runs when
pasted into the user's shell."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import lit.llvm
import pytest
from foreign_repo import build_foreign_repo, native_opt, shadowed_path

from pytest_mlirpipe.cli.main import run

LLVM_FILECHECK = Path("/usr/lib/llvm-22/bin/FileCheck")


@pytest.fixture
def repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The stand-in compiler repository (lit.llvm's llvm_config, lit's internal shell),
    set up by `mlirpipe init` as its docs say."""
    monkeypatch.setattr(lit.llvm, "llvm_config", None)
    monkeypatch.setenv("PATH", shadowed_path(build_foreign_repo(pytester.path)))
    status = run(["init"], io.StringIO(), io.StringIO(), io.StringIO())
    assert status == 0
    return pytester


def test_a_failing_run_line_shows_the_stdout_of_its_earlier_command_as_lit_does(repo) -> None:
    (repo.path / "test" / "printed.mlir").write_text(
        "// RUN: foo-opt %s && false\nfunc.func @printed() {\n  return\n}\n"
    )
    result = repo.runpytest("-p", "no:cacheprovider", "test/printed.mlir")
    result.assert_outcomes(failed=1)
    report = result.stdout.str()
    assert (
        "exit status: 0\nstdout:\n  module {\n    func.func @printed() {\n      return\n"
        "    }\n  }\nstderr: (empty)\ncommand: false\nexit status: 1\n"
    ) in report


def test_a_missing_tool_named_by_a_path_gets_a_hint_that_names_that_path(repo) -> None:
    (repo.path / "test" / "gone.mlir").write_text(
        "// RUN: %S/../build/bin/gone-opt %s | FileCheck %s\n// CHECK: x\n"
    )
    result = repo.runpytest("-p", "no:cacheprovider", "test/gone.mlir")
    result.assert_outcomes(failed=1)
    tool = f"{repo.path}/test/../build/bin/gone-opt"
    report = result.stdout.str()
    assert (
        f"  hint: there is no program at '{tool}': build it, or point the suite's "
        "configuration at the folder that has it (e.g. mlirpipe_tools: "
        "gone-opt=build/bin/gone-opt)"
    ) in report
    assert "build/bin//" not in report


# A suite as many compilers write it by hand: its tools folder put on the RUN lines' PATH by
# the config, a `*-opt` that is a Python wrapper around a native binary, FileCheck beside it.
PATH_SUITE_CFG = """\
import os
import lit.formats

config.name = "PATHSUITE"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
tools = os.path.join(os.path.dirname(os.path.dirname(__file__)), "tools")
config.environment["PATH"] = os.pathsep.join([tools, os.environ["PATH"]])
"""
WRAPPER = "#!{python}\nimport os, sys\nos.execv({opt!r}, [{opt!r}, *sys.argv[1:]])\n"


# lit 23 runs RUN lines in an external shell only when forced; lit 17 and 18 know no such flag
EXTERNAL = (
    "ShTest(execute_external=True, "
    '**({"force_execute_external": True} if __import__("lit").__versioninfo__ >= (19,) else {}))'
)


@pytest.mark.skipif(not LLVM_FILECHECK.exists(), reason="LLVM's FileCheck is not installed")
@pytest.mark.parametrize("shell", ["internal", "external"])
def test_the_reproduce_line_names_the_suite_s_own_tools_so_it_runs_when_pasted(
    pytester: pytest.Pytester, shell: str
) -> None:
    (pytester.path / "test").mkdir()
    cfg = PATH_SUITE_CFG.replace("ShTest()", EXTERNAL) if shell == "external" else PATH_SUITE_CFG
    (pytester.path / "test" / "lit.cfg.py").write_text(cfg)
    (pytester.path / "test" / "broken.mlir").write_text(
        "// RUN: ext-opt %s | FileCheck %s\n// CHECK: arith.muli\nfunc.func @f() {\n  return\n}\n"
    )
    tools = pytester.path / "tools"
    tools.mkdir()
    opt = str(native_opt())
    (tools / "ext-opt").write_text(WRAPPER.format(python=sys.executable, opt=opt))
    (tools / "ext-opt").chmod(0o755)
    (tools / "FileCheck").symlink_to(LLVM_FILECHECK)
    user_path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "FileCheck").exists()
    )
    pytester._monkeypatch.setenv("PATH", user_path)

    result = pytester.runpytest("-p", "no:cacheprovider", "test")
    result.assert_outcomes(failed=1)
    report = result.stdout.str()
    # the same head as lit's internal shell gives: the RUN line, then the CHECK line
    assert (
        f"test/broken.mlir:1: FAIL at RUN line 1\n  ext-opt {pytester.path}/test/broken.mlir "
        f"| FileCheck {pytester.path}/test/broken.mlir\n"
    ) in report
    assert "  2 | // CHECK: arith.muli" in report or (
        f"  {pytester.path}/test/broken.mlir:2 | // CHECK: arith.muli" in report
    )
    repro = report.split("reproduce with:\n", 1)[1].splitlines()[0].strip()
    assert f"{tools}/ext-opt {pytester.path}/test/broken.mlir | " in repro
    pasted = subprocess.run(
        ["bash", "-c", repro],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": user_path},
        check=False,
    )
    assert pasted.returncode == 1, pasted.stderr  # FileCheck's no-match, not 127
    assert "test/broken.mlir:2:" in pasted.stderr and "arith.muli" in pasted.stderr


@pytest.mark.parametrize("shell", ["internal", "external"])
def test_the_reproduce_line_runs_in_lits_folder_with_the_suites_variables(
    pytester: pytest.Pytester, shell: str
) -> None:
    """Pasted, it prints what the RUN line printed under the suite: lit runs RUN lines in the
    test's folder of the exec root, with the variables the config set."""
    (pytester.path / "test" / "sub").mkdir(parents=True)
    cfg = PATH_SUITE_CFG.replace("ShTest()", EXTERNAL) if shell == "external" else PATH_SUITE_CFG
    cfg += (
        'config.test_exec_root = os.path.join(os.path.dirname(__file__), "..", "build")\n'
        'config.environment["SUITE_GREETING"] = "hello from the suite"\n'
    )
    (pytester.path / "test" / "lit.cfg.py").write_text(cfg)
    (pytester.path / "test" / "sub" / "where.mlir").write_text(
        "// RUN: sh -c 'echo \"$SUITE_GREETING in $PWD\"; exit 1'\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "test")
    result.assert_outcomes(failed=1)
    report = result.stdout.str()
    folder = os.path.realpath(pytester.path / "build" / "sub")
    repro = report.split("reproduce with:\n", 1)[1].splitlines()[0].strip()
    assert repro.startswith(f"(cd {pytester.path}/test/../build/sub && ") or repro.startswith(
        f"(cd {folder} && "
    ), repro
    assert "export SUITE_GREETING='hello from the suite' && " in repro and repro.endswith(")")
    pasted = subprocess.run(["bash", "-c", repro], capture_output=True, text=True, check=False)
    assert pasted.returncode == 1
    printed = pasted.stdout.strip()
    assert printed.startswith("hello from the suite in ") and printed in report
    assert os.path.realpath(printed.split(" in ", 1)[1]) == folder


def test_a_file_failed_by_its_suites_own_format_shows_the_formats_message(
    pytester: pytest.Pytester,
) -> None:
    """A ShTest subclass that fails a file whose RUN lines passed: lit's message, not a RUN
    line blamed."""
    (pytester.path / "test").mkdir()
    cfg = PATH_SUITE_CFG.replace(
        "config.test_format = lit.formats.ShTest()",
        "import lit.Test\n\n"
        "class Strict(lit.formats.ShTest):\n"
        "    def execute(self, test, lit_config):\n"
        "        result = super().execute(test, lit_config)\n"
        "        if result.code == lit.Test.PASS:\n"
        '            return lit.Test.Result(lit.Test.FAIL, "the suite\'s own rule failed it")\n'
        "        return result\n\n"
        "config.test_format = Strict()",
    )
    (pytester.path / "test" / "lit.cfg.py").write_text(cfg)
    (pytester.path / "test" / "ruled.mlir").write_text("// RUN: true\n// RUN: echo fine\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "test")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "test/ruled.mlir: FAIL: every RUN line passed; the suite's test format failed the "
            "file:",
            "the suite's own rule failed it",
        ]
    )
    assert "FAIL at RUN line" not in result.stdout.str()


def test_a_config_that_fails_for_its_own_reason_is_not_blamed_on_a_missing_site_config(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "test").mkdir()
    # a format argument no lit knows (lit 23 also refuses an unforced external shell so)
    cfg = PATH_SUITE_CFG.replace("ShTest()", "ShTest(sharding=True)")
    (pytester.path / "test" / "lit.cfg.py").write_text(cfg)
    (pytester.path / "test" / "a.mlir").write_text("// RUN: true\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "test")
    result.stdout.fnmatch_lines(
        [
            "test/lit.cfg.py:5: lit could not load this suite's config: TypeError: "
            "*unexpected keyword argument 'sharding'*",
            "  hint: fix the config there",
        ]
    )
    assert "lit.site.cfg.py" not in result.stdout.str()


def _path_suite(pytester: pytest.Pytester, cfg: str, with_filecheck: bool) -> str:
    """The PATH suite with an external shell; the user's PATH without any FileCheck."""
    (pytester.path / "test").mkdir()
    (pytester.path / "test" / "lit.cfg.py").write_text(cfg)
    (pytester.path / "test" / "broken.mlir").write_text(
        "// RUN: ext-opt %s | FileCheck %s\n// CHECK: arith.muli\nfunc.func @f() {\n  return\n}\n"
    )
    (pytester.path / "test" / "ok.mlir").write_text(
        "// RUN: ext-opt %s | FileCheck %s\n// CHECK: @ok\nfunc.func @ok() {\n  return\n}\n"
    )
    tools = pytester.path / "tools"
    tools.mkdir()
    opt = str(native_opt())
    (tools / "ext-opt").write_text(WRAPPER.format(python=sys.executable, opt=opt))
    (tools / "ext-opt").chmod(0o755)
    if with_filecheck:
        (tools / "FileCheck").symlink_to(LLVM_FILECHECK)
    return os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "FileCheck").exists()
    )


@pytest.mark.skipif(not LLVM_FILECHECK.exists(), reason="LLVM's FileCheck is not installed")
def test_an_external_shell_runs_the_filecheck_engine_asked_for(pytester: pytest.Pytester) -> None:
    user_path = _path_suite(pytester, PATH_SUITE_CFG.replace("ShTest()", EXTERNAL), True)
    pytester._monkeypatch.setenv("PATH", user_path)
    llvm = pytester.runpytest("-p", "no:cacheprovider", "test")
    port = pytester.runpytest("-p", "no:cacheprovider", "test", "--mlirpipe-filecheck=python")
    llvm.assert_outcomes(passed=1, failed=1)
    port.assert_outcomes(passed=1, failed=1)
    assert "broken.mlir:2:11: error: CHECK: expected string not found" in llvm.stdout.str()
    assert 'broken.mlir:2: error: Couldn\'t match "arith.muli".' in port.stdout.str()


@pytest.mark.skipif(not LLVM_FILECHECK.exists(), reason="LLVM's FileCheck is not installed")
def test_an_external_shell_without_filecheck_on_its_path_gets_the_documented_fallback(
    pytester: pytest.Pytester,
) -> None:
    user_path = _path_suite(pytester, PATH_SUITE_CFG.replace("ShTest()", EXTERNAL), False)
    pytester._monkeypatch.setenv("PATH", user_path)
    result = pytester.runpytest("-p", "no:cacheprovider", "test")
    result.assert_outcomes(passed=1, failed=1)
    assert "FileCheck: command not found" not in result.stdout.str()
    assert "broken.mlir:2:11: error: CHECK: expected string not found" in result.stdout.str()
