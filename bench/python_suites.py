"""Stand-ins for suites whose time goes to Python starting and importing.

`python-tool`: a compiler written in Python. `foo-opt` is a console script of the running
interpreter whose package takes `cost` seconds of CPU to import (computing, as an MLIR
framework's import does), checked by the Python `filecheck` (a console script too); a `lit.cfg`
(no `.py`) with lit's internal shell; ~40 % `--split-input-file` files of 3 to 8 chunks, a
second RUN line on every third file, a diagnostics check through `not`, a few failing, XFAIL
and unsupported files.

`python-tests`: lit tests that are Python scripts, as torch-mlir's own suite has them
(`# RUN: %PYTHON %s | FileCheck %s`): each imports torch and torch_mlir, imports a small module
through the FX importer and prints its IR for LLVM FileCheck.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from runner import LIT_TO_PYTEST  # beside this script

LLVM_BIN = "/usr/lib/llvm-22/bin"
TOOL_CFG = """\
# -*- Python -*-
import os
import sys

import lit.formats

config.name = "PYS"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [{suffix!r}]
config.excludes = ["lib", "tools"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "..", "build", "test")
_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
config.environment["PATH"] = os.pathsep.join(
    [os.path.join(_root, "tools"), os.path.dirname(sys.executable), {llvm!r},
     config.environment["PATH"]]
)
_found = [os.path.join(_root, "lib"), os.environ.get("PYTHONPATH", "")]
config.environment["PYTHONPATH"] = os.pathsep.join(p for p in _found if p)
config.substitutions.append(("%PYTHON", sys.executable))
"""
INI = "[pytest]\ntestpaths = test\naddopts = -p no:cacheprovider -p no:hypothesispytest\n"
PACKAGE = """\
import time

_end = time.process_time() + {cost}
while time.process_time() < _end:  # what importing a framework costs
    pass
"""
MAIN = """\
import sys

import fooopt  # noqa: F401


def main():
    args = sys.argv[1:]
    bad = [a for a in args if a.startswith("--") and a not in ("--split-input-file", "--names")]
    if bad:
        print(f"foo-opt: Unknown command line argument '{bad[0]}'", file=sys.stderr)
        return 1
    text = open(args[0]).read()
    chunks = text.split("// -----") if "--split-input-file" in args else [text]
    out = []
    for chunk in chunks:
        code = [ln for ln in chunk.splitlines() if ln.strip() and not ln.lstrip().startswith("//")]
        if "--names" in args:
            names = [w.split("(")[0] for w in " ".join(code).split() if w.startswith("@")]
            out.append("// functions: " + " ".join(names))
        out.append("\\n".join(code))
    print("\\n// -----\\n".join(out))
    return 0
"""
BODY = "func.func @f{0}() {{\n  return\n}}\n"


def tool_file(i: int) -> str:
    split = i % 5 < 2
    lines = [f"// RUN: foo-opt %s{' --split-input-file' if split else ''} | filecheck %s"]
    if i % 3 == 1:
        lines.append("// RUN: foo-opt %s --names | filecheck %s --check-prefix=NAMES")
    if i % 7 == 3:
        lines.append(
            "// RUN: not foo-opt %s --no-such-option 2>&1 | filecheck %s --check-prefix=ERR"
        )
    if i % 50 == 7:
        lines.append("// XFAIL: *")
    if i % 50 == 13:
        lines.append("// REQUIRES: no-such-feature")
    wrong = i % 50 in (7, 21)
    count = 3 + i % 6 if split else 1
    chunks = [
        f"// CHECK: @{'g' if wrong and c == 0 else 'f'}{i}_{c}\n" + BODY.format(f"{i}_{c}")
        for c in range(count)
    ]
    if i % 3 == 1:
        chunks[0] = f"// NAMES: // functions: @f{i}_0\n" + chunks[0]
    if i % 7 == 3:
        chunks[0] = "// ERR: Unknown command line argument '--no-such-option'\n" + chunks[0]
    return "\n".join(lines) + "\n\n" + "\n// -----\n\n".join(chunks)


def make_python_tool_suite(root: Path, files: int, cost: float) -> None:
    package = root / "lib" / "fooopt"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE.format(cost=cost))
    (package / "main.py").write_text(MAIN)
    (root / "tools").mkdir()
    tool = root / "tools" / "foo-opt"
    tool.write_text(
        f"#!{sys.executable}\nimport sys\n\nfrom fooopt.main import main\n\nsys.exit(main())\n"
    )
    tool.chmod(0o755)
    test = root / "test"
    test.mkdir()
    (test / "lit.cfg").write_text(TOOL_CFG.format(suffix=".mlir", llvm=LLVM_BIN))
    (root / "pytest.ini").write_text(INI)
    for i in range(files):
        (test / f"t{i:04d}.mlir").write_text(tool_file(i))


SCRIPT = """\
# RUN: %PYTHON %s | FileCheck %s
{marks}
import torch
from torch_mlir import fx


class Block(torch.nn.Module):
    def forward(self, x, y):
        return torch.{op}(x, y) * {scale}


module = fx.export_and_import(Block(), torch.ones({n}, 3), torch.ones({n}, 3))
print(module)
# CHECK-LABEL: func.func @main
# CHECK: torch.aten.{wanted}
"""
OPS = ("add", "sub", "mul", "maximum", "minimum", "atan2")


def make_python_tests_suite(root: Path, files: int) -> None:
    test = root / "test"
    test.mkdir(parents=True)
    (test / "lit.cfg").write_text(TOOL_CFG.format(suffix=".py", llvm=LLVM_BIN))
    (root / "pytest.ini").write_text(INI)
    for i in range(files):
        op = OPS[i % len(OPS)]
        marks = {7: "# XFAIL: *", 9: "# REQUIRES: no-such-feature"}.get(i % 12, "")
        wanted = "no_such_op" if i % 12 in (5, 7) else op
        text = SCRIPT.format(marks=marks, op=op, scale=i + 2, n=2 + i % 4, wanted=wanted)
        (test / f"{op}_{i:03d}_test.py").write_text(text)


def lit_verdicts(stdout: str) -> dict[str, str]:
    """File name -> pytest's word for lit's verdict, from lit's result lines."""
    found = re.finditer(r"^(\w+): PYS :: (\S+) \(", stdout, re.MULTILINE)
    return {m[2]: LIT_TO_PYTEST[m[1]] for m in found}
