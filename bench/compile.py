"""Benchmark: time from an nn.Module to a native callable for the MLP case, cold and cached.

Cold: a fresh cache, so import, every pipeline stage and the native compile all run. Cached:
the same model again, by a new checker, with the artifact cache filled: the import is read
back (keyed by the module's code, parameters and inputs), the lowering is skipped and the
cached .so is loaded instead of compiled. Prints medians over --repeats runs (after one
warm-up run that pays for first imports) and where the time of each goes, step by step.
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
    runs: dict[str, list[float]] = {"cold": [], "cached": []}
    steps: dict[str, dict[str, list[float]]] = {
        "cold": defaultdict(list),
        "cached": defaultdict(list),
    }
    for i in range(args.repeats + 1):  # run 0 warms up (first imports, the C runtime)
        with tempfile.TemporaryDirectory() as cache_dir:
            for label in ("cold", "cached"):
                checker = ModelChecker(cache_dir=cache_dir, mode=args.mode)
                t0 = time.perf_counter()
                compiled = checker.compile(model, x, pipeline=args.pipeline)
                seconds = time.perf_counter() - t0
                assert compiled.cached == (label == "cached")
                checker.close()
                if i:
                    runs[label].append(seconds)
                    for name, s in compiled.seconds.items():
                        steps[label][name].append(s)
    print(f"MLP 8x32 -> 64 -> 10 through {args.pipeline} ({args.mode}), {args.repeats} runs")
    for label, values in runs.items():
        med = statistics.median(values)
        print(
            f"  {label + ':':<7} median {med * 1e3:8.1f} ms  "
            f"(min {min(values) * 1e3:.1f}, max {max(values) * 1e3:.1f}); median per step:"
        )
        for name, per_step in steps[label].items():
            step = statistics.median(per_step)
            indent = "      " if name.startswith("stage ") else "    "
            print(f"{indent}{name:<38} {step * 1e3:8.1f} ms  {100 * step / med:5.1f}%")
    print(
        "  (stages are part of 'lower'; 'native' is the JIT at -O3, or the object file plus\n"
        "   the C shim linked by cc into a .so, or a cached .so loaded; cached 'import' is\n"
        "   hashing the module's code, parameters and inputs and reading the import back)"
    )


if __name__ == "__main__":
    main()
