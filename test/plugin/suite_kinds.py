"""Stand-ins for the four kinds of lit suites users run the options on, from the same files:
a configure() suite, a plain lit suite (internal shell), an external-shell suite and a suite
`mlirpipe init` adopted (lit.llvm's llvm_config, FileCheck named by path)."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from pytest_mlirpipe.cli.main import run
from pytest_mlirpipe.tools.filecheck import find_llvm_filecheck

KINDS = ("configure", "plain", "external", "init")

CONFIGURE_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "Output"))
"""
# lit's ShTest without configure(): the project's tools are programs on the suite's PATH.
SHTEST_CFG = """\
import os
import lit.formats
config.name = "PLAIN"
config.test_format = lit.formats.ShTest({format_args})
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
_build = os.path.join(os.path.dirname(__file__), "..", "build")
_dirs = [os.path.join(_build, "bin"), os.path.join(_build, "llvm", "bin")]
config.environment["PATH"] = os.pathsep.join([*_dirs, os.environ["PATH"]])
"""
# lit 23 runs RUN lines in an external shell only when forced; lit 17 and 18 know no such flag
EXTERNAL_ARGS = (
    "execute_external=True, "
    '**({"force_execute_external": True} if __import__("lit").__versioninfo__ >= (19,) else {})'
)
# As torch-mlir's: the values a build's lit.site.cfg.py gives, lit.llvm's substitutions.
INIT_CFG = """\
import os
import lit.formats
from lit.llvm import llvm_config
config.name = "FOO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.foo_obj_root, "test")
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.foo_tools_dir, append_path=True)
"""
# A tool whose output order changes from run to run.
SHUFFLE = "import random, sys\nlines = sys.stdin.read().splitlines()\nrandom.shuffle(lines)\n"
SHUFFLE += "print('\\n'.join(lines))\n"
PORT = '#!/bin/sh\nexec {python} -m filecheck "$@"\n'
PROGRAMS = {
    "not": '#!/bin/sh\n"$@" && exit 1\nexit 0\n',
    "count": '#!/bin/sh\ntest "$(wc -l)" -eq "$1"\n',
}


def build_suite(root: Path, kind: str, files: dict[str, str], ini: str = "") -> Path:
    """The suite `kind` under root/test with `files` (name -> text), its tools in root/build
    (bin/: shuffle, foo-opt and mlirpipe-opt; llvm/bin/: FileCheck, LLVM's when installed, not,
    count) and the pytest ini at root holding the `ini` lines; returns the suite's folder."""
    root = root.resolve()
    test = root / "test"
    test.mkdir()
    for name, text in files.items():
        (test / name).write_text(text)
    bin_dir, llvm = root / "build" / "bin", root / "build" / "llvm" / "bin"
    _program(bin_dir / "shuffle", f"#!{sys.executable}\n{SHUFFLE}")
    opt = f'#!/bin/sh\nexec {sys.executable} -m pytest_mlirpipe.tools.opt "$@"\n'
    _program(bin_dir / "foo-opt", opt)
    _program(bin_dir / "mlirpipe-opt", opt)
    filecheck = find_llvm_filecheck()
    if filecheck:
        llvm.mkdir(parents=True)
        (llvm / "FileCheck").symlink_to(filecheck)
    else:
        _program(llvm / "FileCheck", PORT.format(python=sys.executable))
    for name, text in PROGRAMS.items():
        _program(llvm / name, text)
    lines = ini
    if kind == "configure":
        (test / "lit.cfg.py").write_text(CONFIGURE_CFG)
        tools = "".join(f"\n    {name}={bin_dir / name}" for name in ("shuffle", "foo-opt"))
        lines += f"\nmlirpipe_tools ={tools}\n"
    elif kind in ("plain", "external"):
        args = EXTERNAL_ARGS if kind == "external" else ""
        (test / "lit.cfg.py").write_text(SHTEST_CFG.format(format_args=args))
    else:
        (test / "lit.cfg.py").write_text(INIT_CFG)
        _init(root)
        # keys of the test after init's (it writes pyproject.toml, which pytest reads first)
        _add_ini_lines(root / "pyproject.toml", ini)
        return test
    (root / "pytest.ini").write_text(f"[pytest]\n{lines}\n")
    return test


def _init(root: Path) -> None:
    saved = os.getcwd()
    os.chdir(root)
    try:
        out = io.StringIO()
        status = run(["init"], io.StringIO(), out, out)
    finally:
        os.chdir(saved)
    assert status == 0, out.getvalue()


def _add_ini_lines(pyproject: Path, ini: str) -> None:
    """`NAME = VALUE` ini lines as TOML keys of [tool.pytest.ini_options]."""
    keys = []
    for line in ini.strip().splitlines():
        name, _, value = line.partition("=")
        keys.append(f"{name.strip()} = {value.strip()!r}")
    text = pyproject.read_text()
    table = "[tool.pytest.ini_options]\n"
    pyproject.write_text(text.replace(table, table + "".join(k + "\n" for k in keys)))


def _program(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
