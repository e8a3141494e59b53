"""Stand-ins for the suites teams bring: a suite configured by `lit.cfg` (no `.py`), as suites
that pin lit 18 are; a suite whose tools are Python programs, checked by the Python FileCheck;
a suite that runs its RUN lines in an external shell. On each, pytest (serial and under xdist)
gives lit's verdict on every file: PASS, FAIL, XFAIL, XPASS and UNSUPPORTED, whichever lit
(17, 18 or 23) is installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from litrun import lit_verdicts
from parity import junit_outcomes

# A Python `*-opt` (a stand-in for a compiler written in Python): reads MLIR, prints it without
# its comments, the names of its functions first; `--fail` ends with an error, as a pass can.
OPT = """\
import sys
args = sys.argv[1:]
text = open(args[0]).read() if args and args[0] != "-" else sys.stdin.read()
if "--fail" in args:
    sys.stderr.write(f"{args[0]}:1:1: error: the pass failed\\n")
    sys.exit(1)
code = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
names = [w.split("(")[0] for w in " ".join(code).split() if w.startswith("@")]
print("// functions: " + " ".join(names))
print("\\n".join(code))  # comments dropped, as an *-opt prints a module
"""

# LLVM's `not` for the external shell (lit's internal shell has its own)
NOT = """\
import subprocess, sys
sys.exit(0 if subprocess.run(sys.argv[1:]).returncode else 1)
"""

CONFIG = """\
import os
import sys

import lit
import lit.formats

config.name = "{name}"
{format}
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "build")
config.available_features.add("standin")
tools = os.path.join(os.path.dirname(__file__), "tools")
config.environment["PATH"] = os.pathsep.join([tools, os.path.dirname(sys.executable),
                                             os.environ["PATH"]])
"""
FORMATS = {
    "internal": "config.test_format = lit.formats.ShTest()",
    # lit 23 runs RUN lines in an external shell only when forced; lit 17 and 18 know no flag
    "external": 'forced = {"force_execute_external": True} if lit.__versioninfo__ >= (19,) '
    "else {}\nconfig.test_format = lit.formats.ShTest(execute_external=True, **forced)",
}

BODY = "func.func @f() {\n  return\n}\n"
SPLIT_BODY = "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return\n}\n"
FILES = {
    "pass.mlir": ("// RUN: foo-opt %s | filecheck %s\n// CHECK: functions: @f\n" + BODY, "PASS"),
    "fail.mlir": ("// RUN: foo-opt %s | filecheck %s\n// CHECK: functions: @g\n" + BODY, "FAIL"),
    "xfail.mlir": (
        "// XFAIL: *\n// RUN: foo-opt %s --fail | filecheck %s\n// CHECK: @f\n" + BODY,
        "XFAIL",
    ),
    "xpass.mlir": (
        "// XFAIL: standin\n// RUN: foo-opt %s | filecheck %s\n// CHECK: @f\n" + BODY,
        "XPASS",
    ),
    "unsupported.mlir": (
        "// REQUIRES: no-such-feature\n// RUN: foo-opt %s | filecheck %s\n// CHECK: @f\n" + BODY,
        "UNSUPPORTED",
    ),
    "not.mlir": (
        "// RUN: not foo-opt %s --fail 2>&1 | filecheck %s\n// CHECK: error: the pass failed\n"
        + BODY,
        "PASS",
    ),
    "split.mlir": (
        "// RUN: foo-opt %s | filecheck %s\n// CHECK: functions: @a @b\n// CHECK-NOT: @c\n"
        + SPLIT_BODY,
        "PASS",
    ),
    "Inputs/helper.mlir": (BODY, None),
}


def _standin(root: Path, config_name: str, shell: str) -> dict[str, str]:
    """The stand-in suite in `root`; the verdicts lit should give, by file name."""
    (root / "tools").mkdir()
    for name, program in (("foo-opt", OPT), ("not", NOT)):
        tool = root / "tools" / name
        tool.write_text(f"#!{sys.executable}\n{program}")
        tool.chmod(0o755)
    (root / config_name).write_text(CONFIG.format(name=config_name, format=FORMATS[shell]))
    expected = {}
    for name, (text, code) in FILES.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)
        if code:
            expected[name] = code
    return expected


def _pytest_verdicts(pytester: pytest.Pytester, *args: str) -> dict[str, str]:
    xml = pytester.path / "junit.xml"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--junitxml={xml}", *args)
    return {Path(k).name: v for k, v in junit_outcomes(xml).items()}


@pytest.mark.parametrize(
    ("config_name", "shell"),
    [("lit.cfg", "internal"), ("lit.cfg", "external"), ("lit.cfg.py", "external")],
    ids=["lit-cfg", "lit-cfg-external-shell", "external-shell"],
)
@pytest.mark.parametrize("runner", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_pytest_gives_lits_verdict_on_every_file_of_a_stand_in(
    pytester: pytest.Pytester, config_name: str, shell: str, runner: list[str]
) -> None:
    expected = _standin(pytester.path, config_name, shell)
    codes, output = lit_verdicts(pytester.path, ".")
    assert codes == expected, output  # the stand-in is what it says, for the installed lit
    assert _pytest_verdicts(pytester, *runner) == expected
