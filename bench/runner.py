"""Wall time of one RUN/CHECK suite under `lit -j2`, `pytest -n 2` and plain `pytest`.

Generates N stage-test files (the seed 2x2 matmul through refbackend, one RUN line per stage
checked: `mlirpipe-opt --stop-after S | filecheck --check-prefix=S`), a few of them failing,
expected to fail or unsupported on purpose, runs the three commands on the same folder, checks
that every file gets the same verdict from each, and prints times and ratios.

    python bench/runner.py [--files 200] [--keep DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
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
# stage -> (check prefix, what must be there after it, what must be gone)
STAGES = {
    "bufferize": ("BUF", "bufferization.to_tensor", "tensor.empty"),
    "finalizing-bufferize": ("FIN", "memref.alloc", "bufferization.to_tensor"),
    "linalg-to-loops": ("LOOPS", "scf.for", "linalg.matmul"),
    "convert-to-llvm": ("LLVM", "llvm.func", "scf.for"),
}
LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_here = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_here, exec_root=os.path.join(_here, "build", "lit"))
"""


def make_suite(root: Path, n: int) -> None:
    (root / "lit.cfg.py").write_text(LIT_CFG)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    for i in range(n):
        lines = []
        if i % 50 == 7:
            lines.append("// XFAIL: *")
        if i % 50 == 13:
            lines.append("// REQUIRES: no-such-feature")
        stages = list(STAGES)[i % 2 :]  # half the files check 4 stages, half 3
        for stage in stages:
            prefix = STAGES[stage][0]
            lines.append(
                f"// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after {stage}"
                f" | filecheck %s --check-prefix={prefix}"
            )
        for stage in stages:
            prefix, present, gone = STAGES[stage]
            if i % 50 in (7, 21) and stage == stages[-1]:
                present = "linalg.this_op_does_not_exist"  # a failing (or xfailing) file
            lines.append(f"// {prefix}: {present}")
            lines.append(f"// {prefix}-NOT: {gone}")
        (root / f"t{i:04d}.mlir").write_text("\n".join(lines) + "\n" + IR)


def run(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done


LIT_TO_PYTEST = {
    "PASS": "passed",
    "FAIL": "failed",
    "XPASS": "failed",
    "UNRESOLVED": "failed",
    "TIMEOUT": "failed",
    "XFAIL": "xfailed",
    "UNSUPPORTED": "skipped",
}


def lit_verdicts(stdout: str) -> dict[str, str]:
    return {
        m.group(2): LIT_TO_PYTEST[m.group(1)]
        for m in re.finditer(r"^(\w+): mlirpipe :: (\S+\.mlir) \(", stdout, re.MULTILINE)
    }


def pytest_verdicts(xml: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif skipped is not None:
            outcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            outcome = "passed"
        out[case.get("name")] = outcome
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200, help="number of test files (default 200)")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mlirpipe-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    make_suite(root, args.files)
    py = sys.executable
    runs = {
        "lit -j2": [py, "-c", "from lit.main import main; main()", "-j2", "-v", "."],
        "pytest -n 2": [py, "-m", "pytest", "-q", "-n", "2", "--junitxml=n2.xml", "."],
        "pytest": [py, "-m", "pytest", "-q", "--junitxml=plain.xml", "."],
    }
    times: dict[str, float] = {}
    verdicts: dict[str, dict[str, str]] = {}
    for name, cmd in runs.items():
        seconds, done = run(cmd, root)
        times[name] = seconds
        if name.startswith("lit"):
            verdicts[name] = lit_verdicts(done.stdout)
        else:
            verdicts[name] = pytest_verdicts(root / ("n2.xml" if "-n" in cmd else "plain.xml"))
        print(f"{name:12s} {seconds:8.1f} s  ({len(verdicts[name])} verdicts)", flush=True)
    reference = verdicts["lit -j2"]
    same = all(v == reference for v in verdicts.values())
    counts: dict[str, int] = {}
    for outcome in reference.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    run_lines = sum(
        1 for p in root.glob("*.mlir") for ln in p.read_text().splitlines() if "RUN:" in ln
    )
    print()
    print(f"{args.files} files, {run_lines} RUN lines; lit's verdicts: {counts}")
    print(f"identical verdicts from all three runs: {'yes' if same else 'NO'}")
    if not same:
        for name, v in verdicts.items():
            diff = {k: (reference.get(k), v.get(k)) for k in set(reference) | set(v)}
            diff = {k: d for k, d in diff.items() if d[0] != d[1]}
            if diff:
                print(f"  {name} differs on {len(diff)} files, e.g. {sorted(diff.items())[:3]}")
    print()
    print(f"{'runner':12s} {'wall s':>8s} {'lit -j2 / runner':>18s}")
    for name, seconds in times.items():
        print(f"{name:12s} {seconds:8.1f} {times['lit -j2'] / seconds:17.1f}x")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
