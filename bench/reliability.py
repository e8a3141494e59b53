"""A suite seeded with crashing, aborting, hanging and malformed files among good ones, run
under plain `pytest`, `pytest -n 2` and `lit -j2`: how many ran, how many crashes and hangs were
contained, whether every good file still passed, and what containment costs the good files.

The crashing passes are Python passes in a module of the generated suite, loaded through
$MLIRPIPE_PASS_MODULES in-process and in every subprocess a RUN line starts, so lit sees the
same crashes. The overhead is `FileTestRunner.run` over the good files with isolation=fork (a
forked child per file) versus isolation=none (in the process, unprotected), median of --runs.

    python bench/reliability.py [--good 40] [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IR = """\
func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%arg0, %cst_0 : tensor<2x2xf32>, tensor<2x2xf32>)
                     outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
"""
GOOD = (
    "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after bufferize"
    " | filecheck %s --check-prefix=BUF\n"
    "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after linalg-to-loops"
    " | filecheck %s --check-prefix=LOOPS\n"
    "// BUF: bufferization.to_tensor\n// LOOPS: scf.for\n" + IR
)
PASSES = """\
import ctypes, os, time
from pytest_mlirpipe.lowering import passes

def _pass(action):
    def factory(options):
        def run(op, pass_):
            action()
        return run
    return factory

passes.register("bench-abort", "aborts")(_pass(os.abort))
passes.register("bench-segv", "dereferences NULL")(_pass(lambda: ctypes.string_at(0)))
passes.register("bench-exit", "exits with status 3")(_pass(lambda: os._exit(3)))
passes.register("bench-hang", "never returns")(_pass(lambda: time.sleep(600)))
"""


def _bad(pass_name: str, head: str = "") -> str:
    return (
        f"{head}// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(canonicalize,{pass_name})'"
        " | filecheck %s\n// CHECK: linalg.matmul\n" + IR
    )


# name -> (category, text)
SEEDED = {
    "crash-abort-1.mlir": ("crash", _bad("bench-abort")),
    "crash-abort-2.mlir": ("crash", _bad("bench-abort")),
    "crash-segv.mlir": ("crash", _bad("bench-segv")),
    "crash-exit.mlir": ("crash", _bad("bench-exit")),
    "hang-1.mlir": ("hang", _bad("bench-hang")),
    "hang-2.mlir": ("hang", _bad("bench-hang")),
    "expected-crash.mlir": ("expected", _bad("bench-abort", "// MLIRPIPE-EXPECT: crash\n")),
    "malformed-ir.mlir": (
        "malformed",
        "// RUN: mlirpipe-opt %s --pipeline refbackend | filecheck %s\n// CHECK: x\n"
        "func.func @f( {\n",
    ),
    "malformed-run.mlir": ("malformed", "// RUN: mlirpipe-opt %s | filecheck 'x\n// CHECK: x\n"),
    "unknown-pass.mlir": ("malformed", _bad("canonicalise")),
}
TIMEOUT = 3  # pytest: tools run in-process, a good file takes well under a second
# lit starts every tool as a process (interpreter and bindings each time): a good file takes
# seconds, more on a loaded machine, so lit's limit is wider.
LIT_TIMEOUT = 20
LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_here = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_here, exec_root=os.path.join(_here, "build", "lit"))
"""


def make_suite(root: Path, good: int) -> dict[str, str]:
    (root / "lit.cfg.py").write_text(LIT_CFG)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (root / "bench_passes.py").write_text(PASSES)
    tests = root / "tests"
    tests.mkdir()
    kinds = {}
    for i in range(good):
        (tests / f"good-{i:03}.mlir").write_text(GOOD)
        kinds[f"good-{i:03}.mlir"] = "good"
    for name, (kind, text) in SEEDED.items():
        (tests / name).write_text(text)
        kinds[name] = kind
    return kinds


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    env["MLIRPIPE_PASS_MODULES"] = "bench_passes"
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


PYTEST_LINE = re.compile(r"\b(PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR)\b.*?tests/(\S+\.mlir)::")
PYTEST_LINE_V = re.compile(r"^tests/(\S+\.mlir)::\S+ (PASSED|FAILED|XFAIL|XPASS|SKIPPED|ERROR)")
LIT_LINE = re.compile(r"^(\w+): mlirpipe :: tests/(\S+) \(", re.M)
CONTAINED = re.compile(r"^mlirpipe: (.*) contained$", re.M)


def run(command: list[str], root: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=root, env=_env(root), capture_output=True, text=True, check=False
    )
    return time.perf_counter() - start, done.stdout + done.stderr


def outcomes(kind: str, output: str) -> dict[str, str]:
    if kind == "lit":
        return {m.group(2): m.group(1) for m in LIT_LINE.finditer(output)}
    out = {}
    for line in output.splitlines():
        m = PYTEST_LINE_V.match(line)
        if m:
            out[m.group(1)] = m.group(2)
            continue
        m = PYTEST_LINE.search(line)
        if m:
            out[m.group(2)] = m.group(1)
    return out


GOOD_CODES = {"PASS", "PASSED"}
FAILED = {"FAIL", "FAILED", "UNRESOLVED", "TIMEOUT"}


def summarize(name: str, seconds: float, got: dict[str, str], kinds: dict, output: str) -> bool:
    good = [n for n, k in kinds.items() if k == "good"]
    good_ok = sum(got.get(n) in GOOD_CODES for n in good)
    crashes = sum(got.get(n) in FAILED for n, k in kinds.items() if k == "crash")
    hangs = sum(got.get(n) in FAILED for n, k in kinds.items() if k == "hang")
    expected = sum(got.get(n) in ("XFAIL",) for n, k in kinds.items() if k == "expected")
    malformed = sum(got.get(n) in FAILED for n, k in kinds.items() if k == "malformed")
    n_crash = sum(k == "crash" for k in kinds.values())
    n_hang = sum(k == "hang" for k in kinds.values())
    n_bad = sum(k == "malformed" for k in kinds.values())
    line = CONTAINED.search(output)
    print(
        f"{name:<14} {seconds:6.1f} s  ran {len(got):3}/{len(kinds)}  "
        f"crashes failed alone {crashes}/{n_crash}  hangs stopped {hangs}/{n_hang}  "
        f"expected crash XFAIL {expected}/1  malformed failed {malformed}/{n_bad}  "
        f"good passed {good_ok}/{len(good)}"
        + (f"  [summary: {line.group(1)} contained]" if line else "")
    )
    return good_ok == len(good) and len(got) == len(kinds)


def overhead(root: Path, runs: int) -> None:
    """Median time of FileTestRunner.run over the good files, forked child per file vs none."""
    sys.path.insert(0, str(root))
    os.environ.update({k: v for k, v in _env(root).items() if k == "MLIRPIPE_PASS_MODULES"})
    from pytest_mlirpipe.filetests.runner import FileTestRunner
    from pytest_mlirpipe.options import RunConfig

    files = sorted((root / "tests").glob("good-*.mlir"))
    times: dict[str, list[float]] = {"fork": [], "none": []}
    sessions = {
        m: FileTestRunner(root / "build" / f"overhead-{m}", RunConfig(isolation=m)) for m in times
    }
    for s in sessions.values():  # warm: bindings, catalog, suite config
        assert s.run(files[0]).code == "PASS"
    for _ in range(runs):
        for m, s in sessions.items():
            start = time.perf_counter()
            codes = [s.run(f).code for f in files]
            times[m].append(time.perf_counter() - start)
            assert set(codes) == {"PASS"}, codes
    fork, none = statistics.median(times["fork"]), statistics.median(times["none"])
    n = len(files)
    print(
        f"containment overhead on {n} good files (median of {runs}): "
        f"fork {fork:.2f} s ({1000 * fork / n:.1f} ms/file), "
        f"none {none:.2f} s ({1000 * none / n:.1f} ms/file): "
        f"+{1000 * (fork - none) / n:.1f} ms/file, x{fork / none:.2f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--good", type=int, default=40)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="generate the suite here and keep it")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="mlirpipe-reliability-"))
    if args.keep:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
    kinds = make_suite(root, args.good)
    py = sys.executable
    commands = {
        "pytest": [py, "-m", "pytest", "tests", "-v", f"--mlirpipe-timeout={TIMEOUT}"],
        "pytest -n 2": [
            py,
            "-m",
            "pytest",
            "tests",
            "-v",
            "-n",
            "2",
            f"--mlirpipe-timeout={TIMEOUT}",
        ],
        "lit -j2": [
            py,
            "-c",
            "from lit.main import main; main()",
            "-v",
            "-j2",
            f"--timeout={LIT_TIMEOUT}",
            "tests",
        ],
    }
    print(
        f"suite: {len(kinds)} files ({args.good} good, "
        + ", ".join(
            f"{sum(k == c for k in kinds.values())} {c}"
            for c in ("crash", "hang", "expected", "malformed")
        )
        + f"); time limit {TIMEOUT} s (lit: {LIT_TIMEOUT} s)"
    )
    ok = True
    for name, command in commands.items():
        seconds, output = run(command, root)
        ok &= summarize(name, seconds, outcomes(name.split()[0], output), kinds, output)
    overhead(root, args.runs)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
