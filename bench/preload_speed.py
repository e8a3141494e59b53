"""Wall time of a suite whose `*-opt` is a Python program: lit against pytest, preload off and on.

The suite (200 files by default) stands in for a compiler written in Python: `foo-opt` is a
console script of this interpreter whose package takes --import-cost seconds to import
(sleeping, or with --busy computing), each file runs it twice, each output checked by the
Python `filecheck` (a console script too); a few files fail, expect to fail or are unsupported.
Runs `lit -j2`, `pytest -n 2` and `pytest -n 2 --mlirpipe-preload=on` (and with --check,
`--mlirpipe-preload=check`), one warm-up round then --repeats rounds in alternating order;
prints the median wall time of each, its ratio to lit's, and whether every run gave every file
lit's verdict (exit status 1 when not).

    python bench/preload_speed.py [--files 200] [--import-cost 0.2] [--busy] [--repeats 3]
                                  [--check] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from runner import lit_verdicts, pytest_verdicts, run  # beside this script

CONFIG = """\
import os
import sys

import lit.formats

config.name = "mlirpipe"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "build")
root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join(
    [os.path.join(root, "tools"), os.path.dirname(sys.executable), os.environ["PATH"]]
)
found = [os.path.join(root, "lib"), os.environ.get("PYTHONPATH", "")]
config.environment["PYTHONPATH"] = os.pathsep.join(p for p in found if p)
"""
INI = "[pytest]\naddopts = -p no:cacheprovider -p no:hypothesispytest\n"
PACKAGE = """\
import time

if {busy}:
    end = time.process_time() + {cost}
    while time.process_time() < end:
        pass
else:
    time.sleep({cost})
"""
MAIN = """\
import sys

import fooopt  # noqa: F401


def main():
    text = open(sys.argv[1]).read()
    code = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    names = [w.split("(")[0] for w in " ".join(code).split() if w.startswith("@")]
    if "--names" in sys.argv:
        print("// functions: " + " ".join(names))
    print("\\n".join(code))
    return 0
"""
BODY = "func.func @f{0}() {{\n  return\n}}\n"


def make_suite(root: Path, files: int, cost: float, busy: bool) -> None:
    (root / "lib" / "fooopt").mkdir(parents=True)
    (root / "lib" / "fooopt" / "__init__.py").write_text(PACKAGE.format(busy=busy, cost=cost))
    (root / "lib" / "fooopt" / "main.py").write_text(MAIN)
    (root / "tools").mkdir()
    tool = root / "tools" / "foo-opt"
    tool.write_text(f"#!{sys.executable}\nimport sys\nfrom fooopt.main import main\n")
    tool.write_text(tool.read_text() + "sys.exit(main())\n")
    tool.chmod(0o755)
    (root / "lit.cfg.py").write_text(CONFIG)
    (root / "pytest.ini").write_text(INI)
    for i in range(files):
        lines = ["// RUN: foo-opt %s --names | filecheck %s", "// RUN: foo-opt %s | filecheck %s"]
        if i % 50 == 7:
            lines.append("// XFAIL: *")
        if i % 50 == 13:
            lines.append("// REQUIRES: no-such-feature")
        wanted = f"@g{i}" if i % 50 in (7, 21) else f"@f{i}"
        lines.append(f"// CHECK: {wanted}")
        (root / f"t{i:04d}.mlir").write_text("\n".join(lines) + "\n" + BODY.format(i))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--import-cost", type=float, default=0.2, help="seconds (default 0.2)")
    ap.add_argument("--busy", action="store_true", help="the import computes instead of sleeping")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="also time --mlirpipe-preload=check")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mlirpipe-preload-"))
    root.mkdir(parents=True, exist_ok=True)
    make_suite(root, args.files, args.import_cost, args.busy)
    py = sys.executable
    pytest = [py, "-m", "pytest", "-q", "-n", "2"]
    runs = {
        "lit -j2": ([py, "-c", "from lit.main import main; main()", "-j2", "-v", "."], None),
        "pytest -n 2": ([*pytest, "--junitxml=off.xml", "."], "off.xml"),
        "preload on": ([*pytest, "--mlirpipe-preload=on", "--junitxml=on.xml", "."], "on.xml"),
    }
    if args.check:
        check = [*pytest, "--mlirpipe-preload=check", "--junitxml=check.xml", "."]
        runs["preload check"] = (check, "check.xml")
    times: dict[str, list[float]] = {name: [] for name in runs}
    same = True
    for round_ in range(args.repeats + 1):
        order = list(runs) if round_ % 2 == 0 else list(reversed(runs))
        verdicts = {}
        for name in order:
            cmd, xml = runs[name]
            seconds, done = run(cmd, root)
            verdicts[name] = (
                lit_verdicts(done.stdout) if xml is None else pytest_verdicts(root / xml)
            )
            if round_:  # the first round warms the file system's caches
                times[name].append(seconds)
            print(f"round {round_}: {name:14s} {seconds:7.1f} s", flush=True)
        reference = verdicts["lit -j2"]
        same = same and len(reference) == args.files
        same = same and all(v == reference for v in verdicts.values())
    print()
    print(f"{args.files} files, foo-opt's import {args.import_cost} s")
    print(f"every run gave every file lit's verdict: {'yes' if same else 'NO'}")
    lit = statistics.median(times["lit -j2"])
    print(f"{'runner':16s} {'median wall s':>14s} {'/ lit -j2':>10s}")
    for name, rows in times.items():
        wall = statistics.median(rows)
        print(f"{name:16s} {wall:14.1f} {wall / lit:9.2f}x")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
