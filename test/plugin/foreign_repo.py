"""A stand-in for another compiler repository's lit suite, as its CMake build leaves it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# As torch-mlir's test/lit.cfg.py: it reads what the build's generated lit.site.cfg.py sets
# (foo_obj_root, foo_tools_dir, llvm_tools_dir, python_executable, enable_bindings_python) and
# uses lit.llvm's llvm_config, which that site config initializes.
LIT_CFG = """\
# -*- Python -*-
# Configuration file for the 'lit' test runner; the build generates lit.site.cfg.py.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FOO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = {".mlir"}
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.foo_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.foo_tools_dir, config.llvm_tools_dir]
tools = ["foo-opt", ToolSubst("%PYTHON", config.python_executable, unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.enable_bindings_python:
    llvm_config.with_environment(
        "PYTHONPATH", [os.path.join(config.foo_obj_root, "python_packages")], append_path=True
    )
"""
LOCAL_CFGS = {
    "python": 'config.suffixes.add(".py")\nif not config.enable_bindings_python:\n'
    "    config.unsupported = True\n",
    "bar": "if not config.enable_bar:\n    config.unsupported = True\n",
    "c": 'config.suffixes.add(".c")\n',
    "legacy": "# No longer maintained.\nconfig.unsupported = True\n",
}
TESTS = {
    "canonicalize.mlir": "// RUN: foo-opt %s --canonicalize | FileCheck %s\n"
    "// CHECK-LABEL: func.func @f\n// CHECK-NEXT: return %arg0\n"
    "func.func @f(%a: i32) -> i32 {\n  %c0 = arith.constant 0 : i32\n"
    "  %r = arith.addi %a, %c0 : i32\n  return %r : i32\n}\n",
    "errors.mlir": "// RUN: not foo-opt %s --no-such-option 2>&1 | FileCheck %s\n"
    "// CHECK: no-such-option\nfunc.func @f() {\n  return\n}\n",
    "broken.mlir": "// RUN: foo-opt %s | FileCheck %s\n// CHECK: arith.muli\n"
    "func.func @f() {\n  return\n}\n",
    "Inputs/helper.mlir": "func.func @helper() {\n  return\n}\n",
    "bar/bar.mlir": "// RUN: foo-opt %s | FileCheck %s\n// CHECK: @bar\n"
    "func.func @bar() {\n  return\n}\n",
    "c/kernel.c": '// RUN: grep "^int " %s | count 1\nint kernel(int x) { return x; }\n',
    "legacy/old.mlir": "// RUN: foo-opt %s --legacy-pass | FileCheck %s\n// CHECK: old\n",
    "python/import_test.py": "# RUN: %PYTHON %s | FileCheck %s\n"
    "import foo  # only on the PYTHONPATH lit.cfg.py sets: pytest cannot import this file\n\n"
    '# CHECK: foo 1.0\nprint("foo", foo.__version__)\n',
    "python/version_test.py": "# RUN: %PYTHON %s | FileCheck %s\nimport sys\n\n"
    "# CHECK: python 3\nprint('python', sys.version_info[0])\n",
}
# lit's verdict on each file of the stand-in, once its site values are given.
VERDICTS = {
    "canonicalize.mlir": "PASS",
    "errors.mlir": "PASS",
    "broken.mlir": "FAIL",
    "bar.mlir": "PASS",
    "kernel.c": "PASS",
    "old.mlir": "UNSUPPORTED",
    "import_test.py": "PASS",
    "version_test.py": "PASS",
}
# Same-named Python wrappers first on PATH: the repo's own native tools must win.
SHADOW = '#!{python}\nimport sys\nsys.exit("{name}: a Python wrapper, not the native tool")\n'
LLVM_BIN = Path("/usr/lib/llvm-22/bin")
# When LLVM's tools are not installed: stand-ins with their behaviour for these tests.
FALLBACKS = {
    "FileCheck": '#!/bin/sh\nexec {python} -m filecheck "$@"\n',
    "not": '#!/bin/sh\n"$@" && exit 1\nexit 0\n',
    "count": '#!/bin/sh\ntest "$(wc -l)" -eq "$1"\n',
}


def native_opt() -> Path:
    """The native `torch-mlir-opt` in the torch-mlir wheel (not the venv's Python wrapper)."""
    import torch_mlir

    return Path(next(iter(torch_mlir.__path__))) / "_mlir_libs" / "torch-mlir-opt"


def build_foreign_repo(root: Path) -> Path:
    """Write the stand-in under `root`: test/ (lit.cfg.py, lit.local.cfg files, tests),
    build/ (bin/foo-opt, llvm/bin/FileCheck|not|count, python_packages/foo) and shadow/ (the
    Python wrappers, for PATH); returns the shadow folder."""
    test = root / "test"
    test.mkdir()
    (test / "lit.cfg.py").write_text(LIT_CFG)
    for folder, text in LOCAL_CFGS.items():
        (test / folder).mkdir()
        (test / folder / "lit.local.cfg").write_text(text)
    for name, text in TESTS.items():
        (test / name).parent.mkdir(exist_ok=True)
        (test / name).write_text(text)
    _executable(root / "build" / "bin" / "foo-opt", f'#!/bin/sh\nexec "{native_opt()}" "$@"\n')
    for tool, fallback in FALLBACKS.items():
        target = root / "build" / "llvm" / "bin" / tool
        if (LLVM_BIN / tool).exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(LLVM_BIN / tool)
        else:
            _executable(target, fallback.format(python=sys.executable))
    package = root / "build" / "python_packages" / "foo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "1.0"\n')
    for name in ("foo-opt", "FileCheck"):
        _executable(root / "shadow" / name, SHADOW.format(python=sys.executable, name=name))
    return root / "shadow"


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def shadowed_path(shadow: Path) -> str:
    """PATH with the Python wrappers first."""
    return os.pathsep.join([str(shadow), os.environ.get("PATH", "")])
