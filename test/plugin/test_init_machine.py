"""`mlirpipe init` on a stand-in of torch-mlir's suite, whose configs read what this machine and
the installed torch_mlir answer (host_cxx, torch_mlir_python_packages_dir, features): what init
prints, what it writes, and the same verdicts from pytest and lit."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from foreign_repo import native_opt
from litrun import lit_verdicts

from pytest_mlirpipe.cli.main import run

# As torch-mlir's test/lit.cfg.py and lit.local.cfg files read them (lit.site.cfg.py.in).
LIT_CFG = """\
import os

import lit.formats

config.name = "TORCH_MLIR"
config.test_format = lit.formats.ShTest()
config.suffixes = {".mlir"}
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.torch_mlir_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py"]
config.substitutions.append(("%PYTHON", config.python_executable))
config.substitutions.append(("%host_cxx", config.host_cxx))
opt = os.path.join(config.torch_mlir_obj_root, "bin", "torch-mlir-opt")
config.substitutions.append(("%opt", opt))
if config.enable_bindings_python:
    config.environment["PYTHONPATH"] = config.torch_mlir_python_packages_dir
"""
FILES = {
    "test/lit.cfg.py": LIT_CFG,
    "test/cxx/lit.local.cfg": 'config.suffixes.add(".cpp")\n',
    "test/cxx/syntax.cpp": "// RUN: %host_cxx -fsyntax-only %s\nint main() { return 0; }\n",
    "test/python/lit.local.cfg": 'config.suffixes.add(".py")\n'
    "if not config.enable_bindings_python:\n    config.unsupported = True\n",
    # -S: no site-packages; torch_mlir comes from the PYTHONPATH the config sets.
    "test/python/bindings.py": "# RUN: %PYTHON -S %s\nimport torch_mlir._mlir_libs._mlir\n",
    "test/stablehlo/lit.local.cfg": "if not config.enable_stablehlo:\n"
    "    config.unsupported = True\n",
    "test/stablehlo/lower.mlir": "// RUN: %opt %s\nfunc.func @f() {\n  return\n}\n",
    "test/refbackend/lit.local.cfg": "if not config.torch_mlir_enable_refbackend:\n"
    "    config.unsupported = True\n",
    "test/refbackend/run.mlir": "// RUN: %opt %s\n",
    "test/broken.mlir": "// RUN: false\n",
}
VERDICTS = {
    "syntax.cpp": "PASS",
    "bindings.py": "PASS",
    "lower.mlir": "PASS",
    "run.mlir": "UNSUPPORTED",
    "broken.mlir": "FAIL",
}
OUTCOME = {"PASS": "passed", "FAIL": "failed", "UNSUPPORTED": "skipped"}
PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["test"]
mlirpipe_lit_site = [
    "torch_mlir_obj_root = build",
    "enable_bindings_python = True",
    "torch_mlir_enable_refbackend = False",
    "enable_stablehlo = True",
]
"""
AT_LOAD = "found again when the suite loads, not written"


@pytest.fixture
def repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(text)
    opt = pytester.path / "build" / "bin" / "torch-mlir-opt"
    opt.parent.mkdir(parents=True)
    opt.write_text(f'#!/bin/sh\nexec "{native_opt()}" "$@"\n')
    opt.chmod(0o755)
    monkeypatch.delenv("CXX", raising=False)
    return pytester.path


def read_at(name: str) -> int:
    """The line of LIT_CFG that first reads config.NAME."""
    return next(n for n, line in enumerate(LIT_CFG.splitlines(), 1) if f"config.{name}" in line)


def mlirpipe(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = run(list(argv), io.StringIO(), out, out)
    return status, out.getvalue()


def host_cxx() -> str:
    found = [shutil.which(p) for p in ("c++", "g++", "clang++")]
    if not any(found):
        pytest.skip("no C++ compiler on PATH")
    return next(p for p in found if p)


def torch_mlir() -> Path:
    spec = importlib.util.find_spec("torch_mlir")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def outcomes(path: Path) -> dict[str, str]:
    cases = ET.parse(path).getroot().iter("testcase")
    return {c.get("name"): _outcome(c) for c in cases}


def _outcome(case) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


def test_init_prints_what_this_machine_and_torch_mlir_answer_and_both_runners_agree(
    repo, pytester
) -> None:
    cxx, package = host_cxx(), torch_mlir()
    so = importlib.machinery.EXTENSION_SUFFIXES[0]
    status, said = mlirpipe("init")
    assert status == 0, said
    lines = said.splitlines()
    cxx_at, bindings_at = read_at("host_cxx"), read_at("enable_bindings_python")
    packages_at = read_at("torch_mlir_python_packages_dir")
    expected = [
        f"config.host_cxx = {cxx}  (test/lit.cfg.py:{cxx_at} reads it; the first of c++, g++,"
        f" clang++ on PATH: {AT_LOAD})",
        f"config.enable_bindings_python = True  (test/lit.cfg.py:{bindings_at} reads it;"
        f" torch_mlir has its Python bindings: torch_mlir/_mlir_libs/_mlir{so})",
        f"config.torch_mlir_python_packages_dir = {package.parent}  (test/lit.cfg.py:"
        f"{packages_at} reads it; the folder that holds the installed package torch_mlir:"
        f" {AT_LOAD})",
        f"config.enable_stablehlo = True  (test/stablehlo/lit.local.cfg:1 reads it; torch_mlir"
        f" has torch_mlir/_mlir_libs/_stablehlo{so})",
        f"config.torch_mlir_enable_refbackend = False  (test/refbackend/lit.local.cfg:1 reads"
        f" it; torch_mlir ({package.parent}) has no module named refbackend)",
    ]
    for line in expected:
        assert f"mlirpipe init: {line}" in lines, said
    assert lines[-2:] == [
        "mlirpipe init: features guessed off: torch_mlir_enable_refbackend; the tests that need"
        " them do not run until you turn on those your build has: NAME = True in"
        " mlirpipe_lit_site (pyproject.toml)",
        "mlirpipe init: now run: pytest, pytest -n 2, lit test",
    ]
    assert (repo / "pyproject.toml").read_text() == PYPROJECT  # no path of this machine
    codes, output = lit_verdicts(repo, "test")
    assert codes == VERDICTS, output
    ran = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=serial.xml")
    expected_outcomes = {name: OUTCOME[code] for name, code in VERDICTS.items()}
    assert outcomes(repo / "serial.xml") == expected_outcomes, ran.stdout.str()


def test_init_again_keeps_the_values_the_user_gave_and_both_runners_use_them(
    repo, pytester
) -> None:
    cxx = host_cxx()
    mlirpipe("init")
    ini = repo / "pyproject.toml"
    corrected = PYPROJECT.replace('"enable_stablehlo = True"', '"enable_stablehlo = False"')
    corrected = corrected.replace(
        '    "torch_mlir_obj_root', '    "host_cxx = /bin/false",\n    "torch_mlir_obj_root'
    )
    ini.write_text(corrected)
    status, said = mlirpipe("init")
    assert status == 0, said
    lines = said.splitlines()
    assert (
        f"mlirpipe init: config.host_cxx = /bin/false  (test/lit.cfg.py:{read_at('host_cxx')}"
        " reads it; given in"
        f" pyproject.toml; the guess, {cxx}: the first of c++, g++, clang++ on PATH: {AT_LOAD})"
        in lines
    ), said
    so = importlib.machinery.EXTENSION_SUFFIXES[0]
    assert (
        "mlirpipe init: config.enable_stablehlo = False  (test/stablehlo/lit.local.cfg:1 reads it;"
        " given in pyproject.toml; the guess, True: torch_mlir has"
        f" torch_mlir/_mlir_libs/_stablehlo{so})" in lines
    ), said
    assert ini.read_text() == corrected
    verdicts = VERDICTS | {"syntax.cpp": "FAIL", "lower.mlir": "UNSUPPORTED"}
    codes, output = lit_verdicts(repo, "test")
    assert codes == verdicts, output
    ran = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=serial.xml")
    expected_outcomes = {name: OUTCOME[code] for name, code in verdicts.items()}
    assert outcomes(repo / "serial.xml") == expected_outcomes, ran.stdout.str()
