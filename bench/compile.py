"""Benchmark: time from an nn.Module to a native callable for the MLP case, cold and cached.

Cold: a fresh cache, so import, every pipeline stage and the native compile all run. Cached:
the same model again with the artifact cache filled (lowering is skipped). Prints medians over
--repeats runs and the share of each step (and of each stage) in the cold time.
Usage: python bench/compile.py [--pipeline refbackend] [--mode jit|aot] [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipeline", default="refbackend")
    ap.add_argument("--mode", choices=["jit", "aot"], default="jit")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "execution"))
    from cases import mlp

    from pytest_mlirpipe.execution.check import ModelChecker

    model, x = mlp(), torch.randn(8, 32, generator=torch.Generator().manual_seed(0))
    cold, cached = [], []
    steps: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache_dir:
            checker = ModelChecker(cache_dir=cache_dir, mode=args.mode)
            t0 = time.perf_counter()
            compiled = checker.compile(model, x, pipeline=args.pipeline)
            cold.append(time.perf_counter() - t0)
            assert not compiled.cached
            for name, s in compiled.seconds.items():
                steps[name].append(s)
            t0 = time.perf_counter()
            again = ModelChecker(cache_dir=cache_dir, mode=args.mode).compile(
                model, x, pipeline=args.pipeline
            )
            cached.append(time.perf_counter() - t0)
            assert again.cached
    cold_med = statistics.median(cold)
    print(f"MLP 8x32 -> 64 -> 10 through {args.pipeline} ({args.mode}), {args.repeats} runs")
    for label, values in (("cold", cold), ("cached", cached)):
        print(
            f"  {label + ':':<7} median {statistics.median(values) * 1e3:8.1f} ms  "
            f"(min {min(values) * 1e3:.1f}, max {max(values) * 1e3:.1f})"
        )
    print("  share of the cold time (median per step):")
    for name, values in steps.items():
        med = statistics.median(values)
        indent = "      " if name.startswith("stage ") else "    "
        print(f"{indent}{name:<38} {med * 1e3:8.1f} ms  {100 * med / cold_med:5.1f}%")
    print("  (stages are part of 'lower'; 'native' is the JIT at -O3 or object + cc link)")


if __name__ == "__main__":
    main()
