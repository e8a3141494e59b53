"""Benchmark: what the CHECK-line lint costs, on a generated stand-in of a large suite.

Writes N correct files (test/checks/lint_standin.py: several prefixes, DEFINE'd and suite
substitutions, --split-input-file chunks) into a lit suite in a temporary folder, then times
the lint of every file in this process as each test's start does (best and median of the
repeats, per file), `pytest --collect-only -q` there with `--mlirpipe-lint=off` and `=warn`,
alternating (collection lints nothing: the two should match), and `mlirpipe lint-checks` on the
same files. Usage: python bench/lint_cost.py [--files 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "checks"))

from lint_standin import write_standin  # noqa: E402


def _timed(argv: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # lint-checks: 1 when it finds anything
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    return took


def _lint_all(suite: Path) -> float:
    """Seconds to lint every test file of the suite, as MlirItem.runtest does (the lit
    configs loaded once beforehand, as a run has them by then)."""
    from pytest_mlirpipe.filetests.lint import lint_file
    from pytest_mlirpipe.filetests.runner import FileTestRunner

    runner = FileTestRunner(suite / "build")
    files = sorted(suite.rglob("*.mlir"))
    tests = [runner.make_test(path) for path in files]
    start = time.perf_counter()
    for test, path in zip(tests, files, strict=True):
        lint_file(test, path)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mlirpipe-lint-bench-") as folder:
        suite = Path(folder)
        write_standin(suite, args.files)
        (suite / "pytest.ini").write_text("[pytest]\n")
        collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        times: dict[str, list[float]] = {"off": [], "warn": []}
        for _ in range(args.repeats):
            for mode in times:
                times[mode].append(_timed([*collect, f"--mlirpipe-lint={mode}"], suite))
        cli = [sys.executable, "-m", "pytest_mlirpipe.cli.main", "lint-checks", "."]
        alone = min(_timed(cli, suite) for _ in range(args.repeats))
        in_process = [_lint_all(suite) for _ in range(args.repeats)]
    per_file = [1000 * t / args.files for t in in_process]
    print(
        f"lint as each test starts: best {min(per_file):.2f} ms, median "
        f"{statistics.median(per_file):.2f} ms per file ({args.files} files, in this process)"
    )
    for mode, found in times.items():
        print(
            f"collect --mlirpipe-lint={mode}: best {min(found):.2f} s, "
            f"median {statistics.median(found):.2f} s ({args.files} files)"
        )
    extra = min(times["warn"]) - min(times["off"])
    print(f"collection with the lint on: {extra:+.2f} s against off (it lints nothing)")
    print(f"mlirpipe lint-checks on the same files: best {alone:.2f} s")


if __name__ == "__main__":
    main()
