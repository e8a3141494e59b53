"""The core install (no extra): lit suites' file tests run, collecting or running a foreign
suite loads neither torch nor the MLIR bindings, and what needs an extra says which, in one line.

Each test hides the extras' modules itself (`sys.modules[name] = None` makes importing them
fail as if they were not installed), so it holds in the full install too; CI also runs it in
venvs with the core alone."""

from __future__ import annotations

import subprocess
import sys

import pytest
from litrun import lit_verdicts

from pytest_mlirpipe.errors import MissingExtra, missing_extra

HIDE = (
    "import sys\nfor _m in ('torch_mlir', 'numpy', 'torch', 'onnx'):\n    sys.modules[_m] = None\n"
)

PLAIN_CFG = """\
import os
import sys
import lit.formats
config.name = "PLAIN"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "build")
# the Python FileCheck's console script, beside this Python
config.environment["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
"""
BODY = "func.func @f() {\n  return\n}\n"
PASSES = "// RUN: grep -v CHECK %s | filecheck %s\n// CHECK: func.func @f\n" + BODY
FAILS = "// RUN: grep -v CHECK %s | filecheck %s\n// CHECK: func.func @g\n" + BODY
LOADED = """
import json, sys

def pytest_sessionfinish(session):
    heavy = sorted(m for m in ("torch", "torch_mlir", "numpy", "onnx") if sys.modules.get(m))
    with open("loaded.json", "w") as f:
        json.dump(heavy, f)
"""


def test_a_missing_extra_is_one_line_naming_the_extra_to_install() -> None:
    error = ModuleNotFoundError("No module named 'torch_mlir'", name="torch_mlir.ir")
    missing = missing_extra(error)
    assert isinstance(missing, MissingExtra)
    assert missing.format() == (
        "error: this needs the MLIR Python bindings (torch-mlir), not installed here "
        "(no module 'torch_mlir'): pip install 'pytest-mlirpipe[mlir]'"
    )
    assert missing_extra(ModuleNotFoundError("No module named 'yaml'", name="yaml")) is None


@pytest.mark.parametrize(
    ("argv", "prog", "extra"),
    [
        (
            ["pytest_mlirpipe.tools.opt", "f.mlir", "--pipeline", "refbackend"],
            "mlirpipe-opt",
            "mlir",
        ),
        (
            ["pytest_mlirpipe.cli.main", "stages", "f.mlir", "--pipeline", "refbackend"],
            "mlirpipe stages",
            "mlir",
        ),
        (["pytest_mlirpipe.cli.main", "passes"], "mlirpipe passes", "mlir"),
        (
            ["pytest_mlirpipe.cli.main", "run", "m.py::M", "--inputs", "2xf32"],
            "mlirpipe run",
            "mlir",
        ),
        (
            ["pytest_mlirpipe.tools.ir_assert", "exactly", "1", "func.func", "-i", "f.mlir"],
            "mlirpipe-assert",
            "mlir",
        ),
    ],
    ids=["opt", "stages", "passes", "run", "assert"],
)
def test_a_command_that_needs_an_extra_says_which_in_one_line(tmp_path, argv, prog, extra) -> None:
    (tmp_path / "f.mlir").write_text("func.func @f() {\n  return\n}\n")
    module, *args = argv
    code = f"{HIDE}import runpy\nsys.argv = {[prog, *args]!r}\n"
    code += f"runpy.run_module({module!r}, run_name='__main__')\n"
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 1, ran.stderr
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr
    assert lines[0].startswith(f"{prog}: error: this needs "), ran.stderr
    assert lines[0].endswith(
        f"not installed here (no module '{lines[0].split(chr(39))[1]}'): "
        f"pip install 'pytest-mlirpipe[{extra}]'"
    ), ran.stderr


def test_the_commands_of_file_tests_run_without_any_extra(tmp_path) -> None:
    (tmp_path / "t.mlir").write_text("// RUN: true\n// CHECK-NXT: x\n")
    code = f"{HIDE}import runpy\nsys.argv = ['mlirpipe', 'lint-checks', 't.mlir']\n"
    code += "runpy.run_module('pytest_mlirpipe.cli.main', run_name='__main__')\n"
    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 1, ran.stderr  # a finding, not a missing module
    assert "CHECK-NXT" in ran.stdout and "error" not in ran.stderr, ran.stdout + ran.stderr


@pytest.fixture
def plain_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "lit.cfg.py").write_text(PLAIN_CFG)
    (pytester.path / "passes.mlir").write_text(PASSES)
    (pytester.path / "fails.mlir").write_text(FAILS)
    (pytester.path / "conftest.py").write_text(LOADED)
    return pytester


@pytest.mark.parametrize(
    "run", [["--collect-only"], [], ["-n", "2"]], ids=["collect", "run", "xdist"]
)
def test_a_foreign_suite_loads_neither_torch_nor_the_mlir_bindings(plain_suite, run) -> None:
    import json

    result = plain_suite.runpytest_subprocess("-p", "no:cacheprovider", *run)
    if run == ["--collect-only"]:
        result.stdout.fnmatch_lines(["*2 tests collected*"])
    else:
        result.assert_outcomes(passed=1, failed=1)
        assert lit_verdicts(plain_suite.path, ".")[0] == {
            "passes.mlir": "PASS",
            "fails.mlir": "FAIL",
        }
    assert json.loads((plain_suite.path / "loaded.json").read_text()) == []


@pytest.mark.parametrize("isolation", ["fork", "none"])
def test_a_run_line_that_needs_an_extra_fails_its_file_with_that_line(
    pytester: pytest.Pytester, isolation: str
) -> None:
    (pytester.path / "conftest.py").write_text(HIDE)
    (pytester.path / "opt.mlir").write_text(
        "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s\n"
        "// CHECK: func.func @f\nfunc.func @f() {\n  return\n}\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--mlirpipe-isolation={isolation}"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "opt.mlir:1: FAIL at RUN line 1",
            "  mlirpipe-opt: error: this needs the MLIR Python bindings (torch-mlir), not installed"
            " here (no module 'torch_mlir'): pip install 'pytest-mlirpipe[mlir]'",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_an_execution_check_that_needs_an_extra_is_skipped_saying_which(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("numpy", reason="the test's model takes a numpy input")
    (pytester.path / "conftest.py").write_text(HIDE.replace("'numpy', ", ""))
    (pytester.path / "test_model.py").write_text(
        "import numpy as np\n\n"
        "def test_model(mlirpipe):\n"
        "    text = 'func.func @forward(%a: tensor<2xf32>) -> tensor<2xf32> {\\n"
        "  return %a : tensor<2xf32>\\n}\\n'\n"
        "    mlirpipe.check(text, np.ones(2, np.float32), reference=lambda a: a)\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_model.py:5: error: this needs *, not installed here "
            "(no module '*'): pip install 'pytest-mlirpipe[[]*[]]'"
        ]
    )


@pytest.mark.parametrize("isolation", ["fork", "none"])
def test_a_pipeline_run_line_and_a_pipelines_folder_need_no_extra_to_be_reported(
    pytester: pytest.Pytester, isolation: str
) -> None:
    """With a pipelines folder (its files are checked once a run has file tests) and a failing
    `mlirpipe-opt --pipeline` RUN line (whose stage report needs the bindings), the core
    install still reports the file in its lines: no INTERNALERROR, no traceback."""
    (pytester.path / "conftest.py").write_text(HIDE)
    (pytester.path / "pipes").mkdir()
    (pytester.path / "staged.mlir").write_text(
        "// RUN: mlirpipe-opt %s --pipeline refbackend | FileCheck %s\n// CHECK: llvm.\n" + BODY
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--mlirpipe-isolation={isolation}", "--mlirpipe-pipelines=pipes"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["  mlirpipe-opt: error: this needs the MLIR Python bindings (torch-mlir), not installed"
         " here (no module 'torch_mlir'): pip install 'pytest-mlirpipe[mlir]'"]
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    assert "report failed" not in output, output
