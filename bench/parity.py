"""Differential run, long budget: generated RUN/CHECK suites under lit and under pytest in every
isolation mode (and -n 2); prints files tried, disagreements per mode (must be 0) and the wall
time of each runner.

    python bench/parity.py                 # 2,000 files in suites of 50
    python bench/parity.py --files 200 --suite-size 25 --modes fork,none
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "plugin"))

from hypothesis import HealthCheck, Phase, given, settings
from parity import MODES, compare_runners, generated_suite
from tabulate import tabulate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000, help="files to try in all")
    parser.add_argument("--suite-size", type=int, default=50, help="files per generated suite")
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES)}")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    suites = max(1, -(-args.files // args.suite_size))
    results = []
    seconds: dict[str, list[float]] = defaultdict(list)
    disagreements: dict[str, list[str]] = defaultdict(list)
    codes: Counter[str] = Counter()

    @settings(
        max_examples=suites,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(files=generated_suite(args.suite_size))
    def one_suite(files):
        with tempfile.TemporaryDirectory(prefix="mlirpipe-parity-") as tmp:
            result = compare_runners(Path(tmp), files, modes)
        results.append(result)
        codes.update(result.lit.values())
        for runner, s in result.seconds.items():
            seconds[runner].append(s)
        for line in result.disagreements():
            mode = line.split("pytest (")[1].split(")")[0]
            disagreements[mode].append(line)
        tried = sum(r.files for r in results)
        print(
            f"  suite {len(results)}/{suites}: {tried} files, "
            f"{sum(len(v) for v in disagreements.values())} disagreements",
            flush=True,
        )

    if args.seed:
        from hypothesis import seed

        one_suite = seed(args.seed)(one_suite)
    one_suite()
    tried = sum(r.files for r in results)
    print(
        f"\nfiles tried: {tried} in {len(results)} suites; lit verdicts: "
        + ", ".join(f"{k} {v}" for k, v in codes.most_common())
    )
    rows = []
    for runner, values in seconds.items():
        mode = runner.split(" ", 1)[1] if runner.startswith("pytest") else None
        bad = len(disagreements[mode]) if mode else "-"
        rows.append((runner, f"{sum(values):.1f}", f"{statistics.median(values):.2f}", bad))
    print(tabulate(rows, headers=("runner", "total s", "median s/suite", "disagreements")))
    for lines in disagreements.values():
        for line in lines[:20]:
            print(f"  {line}")
    return 1 if any(disagreements.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
