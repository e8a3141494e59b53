"""--mlirpipe-preload / mlirpipe_preload: Python commands of RUN lines forked from the test
process give lit's verdicts; `check` runs them both ways and finds no difference in what a
fresh interpreter shows, and catches a tool whose import read the environment of another
command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from litrun import lit_verdicts
from parity import junit_outcomes

CONFIG = """\
import os
import sys

import lit.formats

config.name = "preload"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "build")
config.available_features.add("standin")
root = os.path.dirname(os.path.dirname(__file__))
config.environment["PATH"] = os.pathsep.join(
    [os.path.join(root, "tools"), os.path.dirname(sys.executable), os.environ["PATH"]]
)
found = [os.path.join(root, "lib"), os.environ.get("PYTHONPATH", "")]
config.environment["PYTHONPATH"] = os.pathsep.join(p for p in found if p)
config.substitutions.append(("%PYTHON", sys.executable))
"""

# A Python `*-opt` whose package takes 0.2 s to import (a stand-in for an MLIR framework in
# Python) and reads an environment variable as it is imported.
PACKAGE = """\
import os
import tempfile
import time

time.sleep(0.2)
FLAVOR = os.environ.get("FOO_FLAVOR", "plain")
TEMP_AT_IMPORT = tempfile.gettempdir()
"""
MAIN = """\
import os
import signal
import sys

import fooopt


def main():
    args = sys.argv[1:]
    text = open(args[0]).read() if args and args[0] != "-" else sys.stdin.read()
    if "--segv" in args:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "--exit" in args:
        return int(args[args.index("--exit") + 1])
    if "--flavor" in args:
        print("flavor", fooopt.FLAVOR)
    if "--temp" in args:
        print("temporary folder at import", fooopt.TEMP_AT_IMPORT)
    if "--fail" in args:
        sys.stderr.write(f"{args[0]}:1:1: error: the pass failed\\n")
        return 1
    code = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    names = [w.split("(")[0] for w in " ".join(code).split() if w.startswith("@")]
    print("// functions: " + " ".join(names))
    print("\\n".join(code))
    return 0
"""
CONSOLE_SCRIPT = "import sys\nfrom fooopt.main import main\nsys.exit(main())\n"

# What a fresh interpreter shows a program: run fresh and forked, it must print the same.
FACTS = """\
import atexit, os, signal, sys, tempfile, warnings, weakref
print("argv", sys.argv)
print("tempdir", tempfile.gettempdir())
print("path0", sys.path[0])
print("main", __name__, globals().get("__file__"), __spec__ and __spec__.name)
print("cwd", os.getcwd())
print("stdin", repr(sys.stdin.read()))
for s in (sys.stdin, sys.stdout, sys.stderr):
    print("stream", s.name, s.mode, s.encoding, s.errors, s.line_buffering, s.write_through)
sigs = (signal.SIGINT, signal.SIGPIPE, signal.SIGTERM, signal.SIGUSR1, signal.SIGXFSZ)
print("signals", [str(signal.getsignal(s)) for s in sigs])
print("fds", sorted(os.listdir("/proc/self/fd")))
print("env", sorted(os.environ))
print("warnings", warnings.filters)
print("hooks", [type(h).__name__ for h in sys.meta_path], sys.excepthook is sys.__excepthook__)
print("bytecode", sys.dont_write_bytecode)
print("imported", "pytest" in sys.modules, "lit" in sys.modules)
warnings.warn("a warning of the program's own")
sys.stderr.write("to stderr\\n")
kept = type("Kept", (), {})()  # alive at exit: its finalizer runs then, after atexit's
weakref.finalize(kept, print, "finalized at exit")
atexit.register(lambda: print("atexit ran"))
print("left in the buffer", end="")
sys.exit(int(os.environ.get("FACTS_EXIT", "0")))
"""

BODY = "func.func @f() {\n  return\n}\n"
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
        "// REQUIRES: no-such-feature\n// RUN: foo-opt %s | filecheck %s\n" + BODY,
        "UNSUPPORTED",
    ),
    "not-merged.mlir": (
        "// RUN: not foo-opt %s --fail 2>&1 | filecheck %s\n// CHECK: error: the pass failed\n"
        + BODY,
        "PASS",
    ),
    "stdin-file.mlir": (
        "// RUN: foo-opt - < %s | filecheck %s\n// CHECK: functions: @f\n" + BODY,
        "PASS",
    ),
    "stdin-pipe.mlir": (
        "// RUN: foo-opt %s | foo-opt - | foo-opt - | filecheck %s\n// CHECK: functions: @f\n"
        + BODY,
        "PASS",
    ),
    # lit's own temporary folder, as the package found it when a command imported it
    "temp-at-import.mlir": (
        "// RUN: foo-opt %s --temp | filecheck %s\n// CHECK: at import {{.*}}/lit-tmp-\n" + BODY,
        "PASS",
    ),
    "exit-status.mlir": ("// RUN: foo-opt %s --exit 3\n" + BODY, "FAIL"),
    "exit-status-not.mlir": ("// RUN: not foo-opt %s --exit 3\n" + BODY, "PASS"),
    "segv.mlir": ("// RUN: foo-opt %s --segv\n" + BODY, "FAIL"),
    "segv-not.mlir": ("// RUN: not foo-opt %s --segv\n" + BODY, "FAIL"),
    "facts.mlir": (
        "// RUN: facts < %s > %t.console 2> %t.console-err\n"
        "// RUN: %PYTHON %S/../tools/facts 2>&1 | filecheck %s\n"
        "// RUN: foo-opt %s | %PYTHON -m factsmod x y | filecheck %s\n"
        "// RUN: env FACTS_EXIT=5 not %PYTHON -c 'import factsmod' a 2>&1 | filecheck %s\n"
        "// RUN: not %PYTHON -c 'raise ValueError(1)' 2>&1 | filecheck %s --check-prefix=RAISE\n"
        "// CHECK: atexit ran\n// CHECK-NEXT: finalized at exit\n// RAISE: ValueError: 1\n",
        "PASS",
    ),
}


def _suite(root: Path) -> dict[str, str]:
    """The stand-in in `root` (lit suite in `suite/`); the verdicts lit should give."""
    (root / "lib" / "fooopt").mkdir(parents=True)
    (root / "lib" / "fooopt" / "__init__.py").write_text(PACKAGE)
    (root / "lib" / "fooopt" / "main.py").write_text(MAIN)
    (root / "lib" / "factsmod.py").write_text(FACTS)
    (root / "tools").mkdir()
    for name, program in (("foo-opt", CONSOLE_SCRIPT), ("facts", FACTS)):
        tool = root / "tools" / name
        tool.write_text(f"#!{sys.executable}\n{program}")
        tool.chmod(0o755)
    (root / "suite").mkdir()
    (root / "suite" / "lit.cfg.py").write_text(CONFIG)
    for name, (text, _) in FILES.items():
        (root / "suite" / name).write_text(text)
    return {name: code for name, (_, code) in FILES.items()}


def _pytest(pytester: pytest.Pytester, *args: str) -> tuple[dict[str, str], str]:
    """({file name: pytest's outcome}, the run's output)."""
    xml = pytester.path / "junit.xml"
    ran = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mlirpipe-order=lexical", f"--junitxml={xml}", *args
    )
    outcomes = {Path(k).name: v for k, v in junit_outcomes(xml).items()}
    return outcomes, ran.stdout.str() + ran.stderr.str()


@pytest.mark.parametrize(
    "args",
    [["--mlirpipe-preload=on"], ["--mlirpipe-preload=check"], ["--mlirpipe-preload=on", "-n2"]],
    ids=["on", "check", "on-xdist"],
)
def test_a_python_tool_suite_gets_lits_verdicts_with_preload(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    expected = _suite(pytester.path)
    codes, output = lit_verdicts(pytester.path, "suite")
    assert codes == expected, output
    outcomes, output = _pytest(pytester, *args, "suite")
    assert outcomes == expected, output
    assert "did not do what its fresh run did" not in output
    # every Python command of the RUN lines lit runs (workers' counts summed): foo-opt 14
    # times, filecheck 8 times outside facts.mlir, whose five lines run 10 of them
    forked = 32
    if "--mlirpipe-preload=check" in args:
        line = f"mlirpipe: --mlirpipe-preload=check: {forked} Python commands run fresh and "
        assert line + "forked, 0 differed\n" in output, output
    else:
        assert f"mlirpipe: --mlirpipe-preload: {forked} Python commands forked\n" in output


def test_check_mode_finds_no_difference_in_what_a_fresh_interpreter_shows(
    pytester: pytest.Pytester,
) -> None:
    # each Python command of facts.mlir runs fresh and forked; what they print must agree
    _suite(pytester.path)
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=check", "suite/facts.mlir")
    assert outcomes == {"facts.mlir": "PASS"}, output


FLAVORED = "// RUN: env FOO_FLAVOR={0} foo-opt %s --flavor | filecheck %s\n// CHECK: flavor {0}\n"


def _flavored(root: Path) -> None:
    """Two files whose tool reads FOO_FLAVOR as it is imported, each with its own value."""
    _suite(root)
    (root / "suite" / "a-first.mlir").write_text(FLAVORED.format("a") + BODY)
    (root / "suite" / "b-second.mlir").write_text(FLAVORED.format("b") + BODY)


def test_check_mode_fails_a_file_whose_tool_read_another_commands_environment_at_import(
    pytester: pytest.Pytester,
) -> None:
    _flavored(pytester.path)
    files = ("suite/a-first.mlir", "suite/b-second.mlir")
    both_pass = {"a-first.mlir": "PASS", "b-second.mlir": "PASS"}
    assert lit_verdicts(pytester.path, *files)[0] == both_pass
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=check", *files)
    assert outcomes == {"a-first.mlir": "PASS", "b-second.mlir": "FAIL"}, output
    assert (
        "b-second.mlir: FAIL: a preloaded command did not do what its fresh run did "
        "(--mlirpipe-preload=check): " in output
    ), output
    assert "-flavor b\n+flavor a" in output, output
    # foo-opt and filecheck in each file; b's foo-opt differed
    summary = "mlirpipe: --mlirpipe-preload=check: 4 Python commands run fresh and forked, "
    assert summary + "1 differed\n" in output, output


def test_a_variable_named_in_mlirpipe_preload_env_keeps_its_commands_fresh(
    pytester: pytest.Pytester,
) -> None:
    _flavored(pytester.path)
    pytester.makeini("[pytest]\nmlirpipe_preload_env = FOO_FLAVOR\n")
    files = ("suite/a-first.mlir", "suite/b-second.mlir")
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=check", *files)
    assert outcomes == {"a-first.mlir": "PASS", "b-second.mlir": "PASS"}, output
    assert (  # each file's foo-opt runs fresh; its filecheck, whose environment agrees, both ways
        "mlirpipe: --mlirpipe-preload=check: 2 Python commands run fresh and forked, 0 differed;"
        " 2 ran as processes (their environment differs from the test process's where an"
        " interpreter or the imports read it)\n"
    ) in output, output


def test_a_module_a_command_imported_is_there_for_the_next_commands(
    pytester: pytest.Pytester,
) -> None:
    # with preload on, the second file's tool finds its package imported (and the first
    # file's FOO_FLAVOR in it): the hazard check mode exists for
    _flavored(pytester.path)
    files = ("suite/a-first.mlir", "suite/b-second.mlir")
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=on", *files)
    assert outcomes == {"a-first.mlir": "PASS", "b-second.mlir": "FAIL"}, output
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=off", *files)
    assert outcomes == {"a-first.mlir": "PASS", "b-second.mlir": "PASS"}, output


def test_an_unknown_preload_mode_is_refused_with_the_accepted_ones(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nmlirpipe_preload = fast\n")
    ran = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert "mlirpipe: mlirpipe_preload must be one of off, on, check, got 'fast'" in (
        ran.stdout.str() + ran.stderr.str()
    )
    ran = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mlirpipe-preload=fast")
    assert "argument --mlirpipe-preload: invalid choice: 'fast'" in ran.stderr.str()


def test_a_difference_fails_only_the_file_whose_command_showed_it(
    pytester: pytest.Pytester,
) -> None:
    # after the file with a difference, a file whose folder lit does not run keeps its verdict
    _flavored(pytester.path)
    (pytester.path / "suite" / "later").mkdir()
    (pytester.path / "suite" / "later" / "lit.local.cfg").write_text("config.unsupported = True\n")
    (pytester.path / "suite" / "later" / "c-later.mlir").write_text(FLAVORED.format("c") + BODY)
    files = ("suite/a-first.mlir", "suite/b-second.mlir", "suite/later/c-later.mlir")
    assert lit_verdicts(pytester.path, *files)[0]["c-later.mlir"] == "UNSUPPORTED"
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=check", *files)
    assert outcomes["b-second.mlir"] == "FAIL", output
    assert outcomes["c-later.mlir"] == "UNSUPPORTED", output


# A lit test as torch-mlir's own suite has them: a Python script that imports torch and
# torch_mlir, imports a module through the FX importer and prints its IR for FileCheck.
TORCH_SCRIPT = """\
# RUN: %PYTHON %s | filecheck %s
import torch
from torch_mlir import fx


class Block(torch.nn.Module):
    def forward(self, x):
        return torch.{op}(x) * 2


print(fx.export_and_import(Block(), torch.ones(2, 3)))
# CHECK-LABEL: func.func @main
# CHECK: torch.aten.{wanted}
"""


def test_check_mode_finds_no_difference_in_python_lit_tests_importing_torch(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("torch_mlir")
    _suite(pytester.path)
    scripts = pytester.path / "suite" / "python"
    scripts.mkdir()
    (scripts / "lit.local.cfg").write_text("config.suffixes = ['.py']\n")
    for name, op, wanted in (("tanh_test.py", "tanh", "tanh"), ("neg_test.py", "neg", "sin")):
        (scripts / name).write_text(TORCH_SCRIPT.format(op=op, wanted=wanted))
    expected = {"tanh_test.py": "PASS", "neg_test.py": "FAIL"}
    codes, output = lit_verdicts(pytester.path, "suite/python")
    assert codes == expected, output
    outcomes, output = _pytest(pytester, "--mlirpipe-preload=check", "suite/python")
    assert outcomes == expected, output
    line = "mlirpipe: --mlirpipe-preload=check: 4 Python commands run fresh and forked, 0 differed"
    assert line + "\n" in output, output


SLEEPER = "// RUN: %PYTHON -c \"import time; open('%t.started', 'w').close(); time.sleep(60)\"\n"


def test_ctrl_c_ends_the_run_and_its_preloaded_command(pytester: pytest.Pytester) -> None:
    """A preloaded command has a process group of its own, which the terminal's Ctrl-C does
    not reach: the run still stops at once, and leaves no command running."""
    import os
    import signal
    import subprocess
    import time

    _suite(pytester.path)
    (pytester.path / "suite" / "sleeper.mlir").write_text(SLEEPER)
    started = pytester.path / "suite" / "build" / "Output" / "sleeper.mlir.tmp.started"
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--mlirpipe-preload=on", "suite/sleeper.mlir"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a terminal's foreground group: pytest and what it starts
    )
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), run.communicate(timeout=60)[0]
    os.killpg(run.pid, signal.SIGINT)
    output, _ = run.communicate(timeout=20)
    assert run.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output, output
    left = subprocess.run(["pgrep", "-f", str(started)], capture_output=True, text=True)
    assert left.stdout == "", left.stdout
