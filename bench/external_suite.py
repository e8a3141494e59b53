"""A stand-in for a large foreign compiler suite whose RUN lines run in an external shell.

As such repositories have it: a `lit.cfg.py` with `ShTest(execute_external=True)`, a
`lit.local.cfg` in every folder, `foo-opt` a Python console script that starts the native
binary (here the torch-mlir wheel's `torch-mlir-opt`), LLVM `FileCheck` from PATH, and most
files `--split-input-file` files of several `// -----` chunks.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner import LIT_TO_PYTEST  # beside this script

LLVM_BIN = "/usr/lib/llvm-22/bin"
LIT_CFG = """\
# -*- Python -*-
import os

import lit
import lit.formats

config.name = "EXT"
config.test_format = lit.formats.ShTest({shell})
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.local.cfg"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "..", "build", "test")
_tools = [os.path.join(os.path.dirname(__file__), "..", "build", "bin"), {llvm!r}]
config.environment["PATH"] = os.pathsep.join([*_tools, config.environment["PATH"]])
config.substitutions.append(("%opt_flags", "--mlir-print-debuginfo=false"))
config.substitutions.append(("%cse", "-cse"))
"""
# What real lit.local.cfg files do: add a feature, mark a folder unsupported, add a substitution.
LOCAL_CFGS = (
    'config.available_features.add("folder-{n}")\n',
    'if "no-such-feature" in config.available_features:\n    config.unsupported = True\n',
    'config.substitutions.insert(0, ("%folder_flags", "-allow-unregistered-dialect"))\n',
    "config.suffixes = ['.mlir']\n",
)
# A console script as pip writes it for a compiler's `*-opt`: Python that starts the native tool.
WRAPPER = """\
#!/usr/bin/env python3
import os
import sys

tool = {native!r}
os.execv(tool, [tool, *sys.argv[1:]])
"""


def chunk(i: int, wrong: bool = False) -> str:
    """A function that canonicalize + cse fold: (k + k) * x twice becomes one multiply."""
    k = 3 + i % 17
    want = "arith.divsi" if wrong else f"arith.constant {2 * k} : i32"
    return (
        f"// CHECK-LABEL: func.func @f{i}(\n"
        f"// CHECK: {want}\n"
        "// CHECK-NEXT: %[[M:.*]] = arith.muli %arg0, %{{.*}} : i32\n"
        "// CHECK-NEXT: %[[A:.*]] = arith.addi %[[M]], %[[M]] : i32\n"
        "// CHECK-NEXT: return %[[A]] : i32\n"
        f"func.func @f{i}(%x: i32) -> i32 {{\n"
        f"  %a = arith.constant {k} : i32\n"
        "  %b = arith.addi %a, %a : i32\n"
        "  %c = arith.muli %x, %b : i32\n"
        "  %d = arith.muli %x, %b : i32\n"
        "  %e = arith.addi %c, %d : i32\n"
        "  return %e : i32\n"
        "}\n"
    )


def test_file(i: int) -> str:
    """~60 % `--split-input-file` files of 3 to 8 chunks; a few failing, XFAIL, unsupported,
    and a diagnostics check through `not`."""
    split = i % 5 < 3
    lines = []
    if split:
        lines.append("// RUN: foo-opt %s --split-input-file -canonicalize %cse | FileCheck %s")
    else:
        lines.append("// RUN: foo-opt %s %opt_flags -canonicalize -cse | FileCheck %s")
    if i % 7 == 3:
        lines.append(
            "// RUN: not foo-opt %s --no-such-option 2>&1 | FileCheck %s --check-prefix=ERR"
        )
    if i % 50 == 7:
        lines.append("// XFAIL: *")
    if i % 50 == 13:
        lines.append("// REQUIRES: no-such-feature")
    wrong = i % 50 in (7, 21)
    chunks = [chunk(c, wrong=wrong and c == 0) for c in range(3 + i % 6 if split else 1)]
    body = "\n// -----\n\n".join(chunks)
    if i % 7 == 3:
        body = "// ERR: no-such-option\n" + body
    return "\n".join(lines) + "\n\n" + body


# The shell each shape of suite runs its RUN lines in (lit.formats.ShTest's arguments).
SHELLS = {
    # lit 23 runs RUN lines in an external shell only when forced; lit 17 and 18 know no such flag
    "external": "execute_external=True, "
    '**({"force_execute_external": True} if lit.__versioninfo__ >= (19,) else {})',
    "internal": "execute_external=False",
}


def make_external_suite(
    root: Path, files: int, native: str, sources: int = 40, shell: str = "external"
) -> None:
    """`files` tests in the `test/` folders of 12 components of a source tree (the suite's
    root, `root/src`, holds lit.cfg.py), beside `sources` source files per test (C++ files,
    headers, CMakeLists.txt, BUILD.bazel: lit never runs them, pytest walks past them); the
    tools in root/build/bin. `shell` "internal": lit's own shell runs the RUN lines and
    `foo-opt` is the native tool itself, as a CMake-built compiler's suite has them."""
    bin_dir = root / "build" / "bin"
    bin_dir.mkdir(parents=True)
    tool = bin_dir / "foo-opt"
    if shell == "internal":
        tool.symlink_to(native)
    else:
        tool.write_text(WRAPPER.format(native=native))
        tool.chmod(0o755)
    src = root / "src"
    src.mkdir()
    (src / "lit.cfg.py").write_text(LIT_CFG.format(llvm=LLVM_BIN, shell=SHELLS[shell]))
    (root / "pytest.ini").write_text(
        "[pytest]\ntestpaths = src\naddopts = -p no:hypothesispytest\n"
    )
    tests = []
    for n in range(12):
        component = src / f"component{n}"
        folder = component / "test" / f"group{n % 3}" if n % 2 else component / "test"
        folder.mkdir(parents=True)
        (folder / "lit.local.cfg").write_text(LOCAL_CFGS[n % len(LOCAL_CFGS)].format(n=n))
        for name in ("CMakeLists.txt", "BUILD.bazel"):
            (folder / name).write_text("# build rules of the tests\n")
        tests.append(folder)
    for i in range(files):
        (tests[i % len(tests)] / f"t{i:04d}.mlir").write_text(test_file(i))
    kinds = ("Pass.cpp", "Pass.h", "Ops.td", "CMakeLists.txt", "BUILD.bazel")
    for i in range(files * sources):
        folder = src / f"component{i % 12}" / f"lib{i % 7}" / f"sub{i % 13}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}{kinds[i % len(kinds)]}").write_text("// source\n")


def lit_verdicts(stdout: str) -> dict[str, str]:
    """File name (unique in the stand-in) -> pytest's word for lit's verdict, from lit's
    result lines."""
    found = re.finditer(r"^(\w+): EXT :: (?:\S+/)?(\S+) \(", stdout, re.MULTILINE)
    return {m[2]: LIT_TO_PYTEST[m[1]] for m in found}
