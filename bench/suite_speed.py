"""Wall and CPU time of a compiler repo's suite whose tools are external: lit against pytest.

Two shapes of suite. `--shape build` (the default): a suite as a real MLIR project has it, run
through this plugin's own lit config: `foo-opt` (the torch-mlir wheel's native
`torch-mlir-opt`) and LLVM `FileCheck` in a build folder (`build/bin`), many small files and a
few large `--split-input-file` files of hundreds of chunks (the long ones), some RUN lines
checked by the Python FileCheck (`filecheck`), a few failing, XFAIL and unsupported files.
`--shape external`: a foreign repository's suite (bench/external_suite.py): its own lit.cfg.py
with `ShTest(execute_external=True)`, a lit.local.cfg per folder, `foo-opt` a Python console
script that starts the native binary, LLVM FileCheck from PATH, ~60 % `--split-input-file`
files, the tests in the `test/` folders of a source tree (`--sources` files per test beside
them, which lit never runs). `--shape internal`: the same suite as a CMake-built compiler has
it: lit's internal shell, `foo-opt` the native tool itself. `--shape python-tool` and
`--shape python-tests` (bench/python_suites.py): suites whose time goes to Python starting and
importing, a Python `foo-opt` checked by the Python `filecheck`, and lit tests that are Python
scripts importing torch and torch_mlir; their runners add `--mlirpipe-preload=on` and `=check`
(a preloaded run that forked no command, ran some as processes or found a difference makes
the exit status 1).

Runs `lit -j2`, `pytest -n 2`, `pytest --mlirpipe-jobs=2` (`jobs`: two workers forked after
one collection) and serial `pytest` on it (and, for the external shape, `lit -j1`,
the collection alone: `pytest --collect-only -q` against `lit --show-tests`, and the floor of any
runner: the scripts lit wrote run two at a time by bench/commands_alone.py) side by side,
one warm-up round (which records each runner's per-file times: lit's `.lit_test_times.txt`,
pytest's cache) then --repeats rounds, the runners' order reversed every other round; prints
medians of wall and CPU time (the runner and every process it started: it moves less than wall
time when other work shares the machine), ratios, how loaded the machine was and whether every
run gave every file the same verdict (exit status 1 when not).

    python bench/suite_speed.py [--shape build] [--small 160] [--large 6] [--chunks 400]
                                [--repeats 3] [--keep DIR] [--runners lit,n2,jobs,serial]
    python bench/suite_speed.py --shape external [--files 1050] [--sources 40]
                                [--runners lit,floor,lit1,n2,jobs,serial,collect]
    python bench/suite_speed.py --shape internal [--files 1050] [--sources 40]
    python bench/suite_speed.py --shape python-tool [--files 600] [--import-cost 0.2]
                                [--runners lit,n2,preload,preload-jobs,check]
    python bench/suite_speed.py --shape python-tests [--files 24]
    python bench/suite_speed.py --quick [--shape external]   # a few files, one round
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import external_suite  # beside this script
import python_suites
from runner import lit_verdicts, pytest_verdicts

LLVM_FILECHECK = "/usr/lib/llvm-22/bin/FileCheck"
LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_here = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_here, exec_root=os.path.join(_here, "build", "lit"))
"""
INI = """\
[pytest]
testpaths = test
mlirpipe_tool_dirs = build/bin
mlirpipe_tools =
    foo-opt
    FileCheck
mlirpipe_filecheck = python
"""
# hypothesis's pytest plugin (installed with the project's test extras) imports hypothesis in
# every xdist worker (~1.4 s of CPU each): a compiler repo's CI has no need of it.
NO_HYPOTHESIS = "addopts = -p no:hypothesispytest\n"


def native_opt() -> str:
    import torch_mlir

    return str(Path(next(iter(torch_mlir.__path__))) / "_mlir_libs" / "torch-mlir-opt")


def chunk(i: int, prefix: str = "CHECK", wrong: bool = False) -> str:
    """One function canonicalize + cse fold: (12 + 12) * x twice becomes one multiply."""
    k = 3 + i % 17
    want = "arith.divsi" if wrong else f"arith.constant {2 * k} : i32"
    return (
        f"// {prefix}-LABEL: func.func @f{i}(\n"
        f"// {prefix}: {want}\n"
        f"// {prefix}-NEXT: %[[M:.*]] = arith.muli %arg0, %{{{{.*}}}} : i32\n"
        f"// {prefix}-NEXT: %[[A:.*]] = arith.addi %[[M]], %[[M]] : i32\n"
        f"// {prefix}-NEXT: return %[[A]] : i32\n"
        f"func.func @f{i}(%x: i32) -> i32 {{\n"
        f"  %a = arith.constant {k} : i32\n"
        "  %b = arith.addi %a, %a : i32\n"
        "  %c = arith.muli %x, %b : i32\n"
        "  %d = arith.muli %x, %b : i32\n"
        "  %e = arith.addi %c, %d : i32\n"
        "  return %e : i32\n"
        "}\n"
    )


TORCH_CHUNK = """\
// TORCH-LABEL: func.func @t{i}(
// TORCH: linalg.generic
// TORCH-NOT: torch.aten.add.Tensor
func.func @t{i}(%arg0: !torch.vtensor<[{n},3],f32>) -> !torch.vtensor<[{n},3],f32> {{
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg0, %int1 : !torch.vtensor<[{n},3],f32>, \
!torch.vtensor<[{n},3],f32>, !torch.int -> !torch.vtensor<[{n},3],f32>
  return %0 : !torch.vtensor<[{n},3],f32>
}}
"""


def small_file(i: int) -> str:
    """1 to 3 RUN lines: LLVM FileCheck, the Python port, a torch-mlir conversion."""
    lines = ["// RUN: foo-opt %s -canonicalize -cse | FileCheck %s"]
    if i % 3 == 1:
        lines.append("// RUN: foo-opt %s -cse -canonicalize | filecheck %s --check-prefix=PY")
    if i % 4 == 2:
        lines.append(
            "// RUN: foo-opt %s -convert-torch-to-linalg | FileCheck %s -check-prefix=TORCH"
        )
    if i % 40 == 7:
        lines.append("// XFAIL: *")
    if i % 40 == 13:
        lines.append("// REQUIRES: no-such-feature")
    wrong = i % 40 in (7, 21)
    body = [chunk(i, wrong=wrong)]
    if i % 3 == 1:
        body.append(chunk(1000 + i, prefix="PY"))
    if i % 4 == 2:
        body.append(TORCH_CHUNK.format(i=i, n=2 + i % 5))
    return "\n".join(lines) + "\n\n" + "\n".join(body)


def large_file(i: int, chunks: int) -> str:
    """One `--split-input-file` RUN line over `chunks` chunks (every third file checked by the
    Python port as well)."""
    lines = ["// RUN: foo-opt --split-input-file %s -canonicalize -cse | FileCheck %s"]
    if i % 3 == 0:
        lines.append("// RUN: foo-opt --split-input-file %s -cse -canonicalize | filecheck %s")
    body = "\n// -----\n\n".join(chunk(c) for c in range(chunks))
    return "\n".join(lines) + "\n\n" + body


def make_suite(root: Path, small: int, large: int, chunks: int, with_hypothesis: bool) -> None:
    (root / "build" / "bin").mkdir(parents=True)
    os.symlink(native_opt(), root / "build" / "bin" / "foo-opt")
    os.symlink(LLVM_FILECHECK, root / "build" / "bin" / "FileCheck")
    (root / "pytest.ini").write_text(INI + ("" if with_hypothesis else NO_HYPOTHESIS))
    test = root / "test"
    test.mkdir()
    (test / "lit.cfg.py").write_text(LIT_CFG)
    for i in range(small):
        (test / f"s{i:04d}.mlir").write_text(small_file(i))
    for i in range(large):
        n = 2 * chunks * (large - i) // large  # uneven: 2x --chunks down to a few
        (test / f"big{i:02d}.mlir").write_text(large_file(i, n))


def _busy_jiffies() -> int:
    """CPU time (clock ticks) every process of the machine spent, from /proc/stat."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    idle = int(fields[3]) + int(fields[4])
    return sum(int(f) for f in fields[:8]) - idle


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """(wall seconds, cores other processes used meanwhile, CPU seconds the run and its
    processes used, stdout) of one run. The CPU seconds move less than the wall time when
    other work shares the machine."""
    tick = os.sysconf("SC_CLK_TCK")
    own_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy_before = _busy_jiffies()
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    busy = (_busy_jiffies() - busy_before) / tick
    own_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (own_after.ru_utime - own_before.ru_utime) + (own_after.ru_stime - own_before.ru_stime)
    return wall, max(0.0, busy - own) / wall, own, done.stdout


def runners(root: Path, shape: str) -> dict[str, tuple[list[str], Path | None]]:
    """Name -> (command, its junit file or None for lit's output)."""
    py = sys.executable
    lit = [py, "-c", "from lit.main import main; main()"]
    folder = "src" if shape in ("external", "internal") else "test"
    pytest_n2 = [py, "-m", "pytest", "-q", "-n", "2"]
    return {
        "lit -j2": ([*lit, "-j2", folder], None),
        "lit -j1": ([*lit, "-j1", folder], None),
        "pytest -n 2": (
            [*pytest_n2, "--junitxml=n2.xml"],
            root / "n2.xml",
        ),
        "pytest": ([py, "-m", "pytest", "-q", "--junitxml=serial.xml"], root / "serial.xml"),
        "jobs 2": (
            [py, "-m", "pytest", "-q", "--mlirpipe-jobs=2", "--junitxml=jobs.xml"],
            root / "jobs.xml",
        ),
        "preload -n 2": (
            [*pytest_n2, "--mlirpipe-preload=on", "--junitxml=preload.xml"],
            root / "preload.xml",
        ),
        "preload": (
            [py, "-m", "pytest", "-q", "--mlirpipe-preload=on", "--junitxml=preload1.xml"],
            root / "preload1.xml",
        ),
        "preload jobs 2": (
            [
                py,
                "-m",
                "pytest",
                "-q",
                "--mlirpipe-jobs=2",
                "--mlirpipe-preload=on",
                "--junitxml=preload_jobs.xml",
            ],
            root / "preload_jobs.xml",
        ),
        "repeat -n 2": (
            [*pytest_n2, "--mlirpipe-repeat=2", "--junitxml=repeat.xml"],
            root / "repeat.xml",
        ),
        "check -n 2": (
            [*pytest_n2, "--mlirpipe-preload=check", "--junitxml=check.xml"],
            root / "check.xml",
        ),
        "commands -P2": (
            [
                py,
                str(Path(__file__).with_name("commands_alone.py")),
                str(root / "build" / "test"),
                "--path",
                os.pathsep.join([str(root / "build" / "bin"), external_suite.LLVM_BIN]),
            ],
            None,
        ),
        "lit collect": ([*lit, "--show-tests", folder], None),
        "pytest collect": ([py, "-m", "pytest", "--collect-only", "-q"], None),
    }


LIT_VERDICTS = {
    "build": lit_verdicts,
    "external": external_suite.lit_verdicts,
    "internal": external_suite.lit_verdicts,
    "python-tool": python_suites.lit_verdicts,
    "python-tests": python_suites.lit_verdicts,
}
# Which runner a verdict-less row is compared with, for the ratio column.
BASELINES = {
    "pytest -n 2": "lit -j2",
    "pytest": "lit -j1",
    "preload": "lit -j1",
    "repeat -n 2": "pytest -n 2",
    "pytest collect": "lit collect",
    "commands -P2": "lit -j2",
}


def run_round(root: Path, shape: str, chosen: list[str], results: dict) -> None:
    table = runners(root, shape)
    for name in chosen:  # in the order given: every other round reverses it
        cmd, xml = table[name]
        wall, load, cpu, stdout = timed(cmd, root)
        if name.endswith("collect") or name.startswith("commands"):
            verdicts = None
        elif xml is not None:
            verdicts = pytest_verdicts(xml)
        else:  # the stand-ins' lit suites have names of their own
            verdicts = LIT_VERDICTS[shape](stdout)
        results.setdefault(name, []).append((wall, load, cpu, verdicts))
        print(f"  {name:14s} {wall:7.2f} s  cpu {cpu:6.2f} s  other load {load:4.2f} cores")
        if "--mlirpipe-preload=on" in cmd or "--mlirpipe-preload=check" in cmd:
            _check_preloaded(name, stdout)


# Runs whose preloading did nothing, or not all: a check that checked nothing is no check.
PRELOAD_PROBLEMS: list[str] = []


def _check_preloaded(name: str, stdout: str) -> None:
    """Print the run's preload line; note it when no command was forked or some ran as
    processes (their environment differed, or an import resolved elsewhere)."""
    found = re.search(r"^mlirpipe: --mlirpipe-preload.*$", stdout, re.MULTILINE)
    line = found[0] if found else "(no line from --mlirpipe-preload)"
    print(f"    {line}")
    forked = re.search(r": ([\d,]+) Python commands", line)
    differed = "=check" in line and " 0 differed" not in line
    if not forked or forked[1] == "0" or "ran as processes" in line or differed:
        PRELOAD_PROBLEMS.append(f"{name}: {line}")


def report(results: dict, files: int) -> bool:
    """Print the verdict comparison and the table of medians; whether every run agreed."""
    same = _same_verdicts(results, files)
    print(
        f"\n{'runner':14s} {'median s':>9s} {'runs':>24s} {'load':>6s} {'ratio':>8s}"
        f" {'cpu s':>7s} {'ratio':>7s}  compared with"
    )
    for name, rows in results.items():
        median, cpu = _median(rows, 0), _median(rows, 2)
        base = BASELINES.get(name, "lit -j2")
        base = base if base in results else "lit -j2"
        ratio = cpu_ratio = ""
        if base in results and base != name:
            ratio = f"{median / _median(results[base], 0):7.2f}x"
            cpu_ratio = f"{cpu / _median(results[base], 2):6.2f}x"
        shown = " ".join(f"{row[0]:.1f}" for row in rows)
        load = _median(rows, 1)
        against = base if ratio else ""
        print(
            f"{name:14s} {median:9.2f} {shown:>24s} {load:6.2f} {ratio:>8s} {cpu:7.2f}"
            f" {cpu_ratio:>7s}  {against}"
        )
    return same


def _median(rows: list[tuple], index: int) -> float:
    return statistics.median(row[index] for row in rows)


def _same_verdicts(results: dict, files: int) -> bool:
    """Print the verdict counts and whether every run gave every file lit's verdict."""
    runs = [row[3] for rows in results.values() for row in rows if row[3] is not None]
    if not runs:
        return True
    reference = results["lit -j2"][0][3] if "lit -j2" in results else runs[0]
    same = len(reference) == files and all(v == reference for v in runs)
    counts: dict[str, int] = {}
    for outcome in reference.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"\n{files} files; verdicts: {counts}")
    print(f"identical verdicts in every run: {'yes' if same else 'NO'}")
    if not same:
        for run in runs:
            diff = sorted(k for k in set(reference) | set(run) if reference.get(k) != run.get(k))
            if diff:
                print(f"  differs on {len(diff)} files, e.g. {diff[:3]}")
    return same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=SHAPES, default="build")
    ap.add_argument("--small", type=int, default=160, help="build: small files (default 160)")
    ap.add_argument("--large", type=int, default=6, help="build: --split-input-file files")
    ap.add_argument("--chunks", type=int, default=400, help="build: mean chunks per large file")
    ap.add_argument(
        "--files",
        type=int,
        help="external, internal: test files (default 1050); python-tool: 600; python-tests: 24",
    )
    ap.add_argument("--sources", type=int, default=40, help="external, internal: sources a test")
    ap.add_argument(
        "--import-cost",
        type=float,
        default=0.2,
        help="python-tool: CPU seconds foo-opt's package takes to import (default 0.2)",
    )
    ap.add_argument("--repeats", type=int, default=3, help="timed rounds after the warm-up")
    ap.add_argument(
        "--runners",
        help="of lit, floor (external only: the commands alone, after lit), lit1, n2, "
        "serial, collect, preload (pytest -n 2 --mlirpipe-preload=on), preload1 (serial, "
        "preloaded), check (pytest -n 2 --mlirpipe-preload=check), repeat (pytest -n 2 "
        "--mlirpipe-repeat=2, compared with pytest -n 2); default: "
        + "; ".join(f"{shape}: {names}" for shape, names in DEFAULT_RUNNERS.items()),
    )
    ap.add_argument("--quick", action="store_true", help="a few files, no warm-up, one round")
    ap.add_argument("--with-hypothesis", action="store_true", help="keep its pytest plugin")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = ap.parse_args()
    if args.files is None:
        args.files = {"python-tool": 600, "python-tests": 24}.get(args.shape, 1050)
    if args.quick:
        args.small, args.large, args.chunks, args.sources = 6, 1, 4, 3
        args.files = min(args.files, 12)
        args.repeats = 1
    names = {
        "lit": ["lit -j2"],
        "lit1": ["lit -j1"],
        "floor": ["commands -P2"],
        "n2": ["pytest -n 2"],
        "serial": ["pytest"],
        "jobs": ["jobs 2"],
        "collect": ["lit collect", "pytest collect"],
        "preload": ["preload -n 2"],
        "preload1": ["preload"],
        "preload-jobs": ["preload jobs 2"],
        "check": ["check -n 2"],
        "repeat": ["repeat -n 2"],
    }
    asked = [r for r in (args.runners or DEFAULT_RUNNERS[args.shape]).split(",") if r]
    unknown = [r for r in asked if r not in names]
    if unknown:
        ap.error(f"--runners: unknown {', '.join(unknown)} (of {', '.join(names)})")
    if "floor" in asked and args.shape != "external":
        ap.error("--runners: floor runs the scripts of an external shell (--shape external)")
    chosen = [n for r in asked for n in names[r]]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mlirpipe-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        files = make(root, args)
        if not args.quick:
            print("warm-up round (records each runner's per-file times):")
            run_round(root, args.shape, chosen, {})
        results: dict = {}
        for n in range(args.repeats):
            print(f"round {n + 1}:")
            run_round(root, args.shape, chosen if n % 2 == 0 else chosen[::-1], results)
        same = report(results, files) if results else True
        for problem in PRELOAD_PROBLEMS:
            print(f"preloading did not do all it should: {problem}")
        same = same and not PRELOAD_PROBLEMS
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if same else 1)


SHAPES = ("build", "external", "internal", "python-tool", "python-tests")
DEFAULT_RUNNERS = {
    "build": "lit,n2,jobs,serial",
    "external": "lit,floor,lit1,n2,jobs,serial,collect",
    "internal": "lit,lit1,n2,jobs,serial,collect",
    "python-tool": "lit,n2,preload,preload-jobs,check",
    "python-tests": "lit,n2,preload,preload-jobs,check",
}


def make(root: Path, args: argparse.Namespace) -> int:
    """Generate the suite of `args.shape` into `root`; the number of its test files."""
    if args.shape in ("external", "internal"):
        external_suite.make_external_suite(
            root, args.files, native_opt(), args.sources, shell=args.shape
        )
        print(f"suite in {root}: {args.files} test files among {args.files * args.sources} sources")
        return args.files
    if args.shape == "python-tool":
        python_suites.make_python_tool_suite(root, args.files, args.import_cost)
        print(f"suite in {root}: {args.files} files, foo-opt's import {args.import_cost} s of CPU")
        return args.files
    if args.shape == "python-tests":
        python_suites.make_python_tests_suite(root, args.files)
        print(f"suite in {root}: {args.files} Python lit tests importing torch and torch_mlir")
        return args.files
    make_suite(root, args.small, args.large, args.chunks, args.with_hypothesis)
    print(f"suite in {root}: {args.small} small files, {args.large} large ones")
    return args.small + args.large


if __name__ == "__main__":
    main()
