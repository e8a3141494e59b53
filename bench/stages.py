"""Benchmark: one uninterrupted pass-manager run vs the stage-by-stage run with snapshots.

Lowers an MLP imported from torch (linalg-on-tensors) through `refbackend`, in one process,
alternating blocks of each candidate, and prints medians, spread and the ratio.
Usage: python bench/stages.py [--repeats N] [--hidden H]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings


def mlp_module(hidden: int) -> str:
    import torch
    from torch_mlir import fx

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(hidden, 10),
    ).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = fx.export_and_import(
            model, torch.randn(8, 256), output_type="linalg-on-tensors", func_name="forward"
        )
    return str(module)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="blocks per candidate (default 7)")
    ap.add_argument("--hidden", type=int, default=512, help="MLP hidden width (default 512)")
    args = ap.parse_args()

    from pytest_mlirpipe.lowering.catalog import catalog_for
    from pytest_mlirpipe.lowering.stages import run_stages
    from pytest_mlirpipe.mlir_env import new_context, parse_module, passmanager

    text = mlp_module(args.hidden)
    pipeline = catalog_for([]).get("refbackend")

    def plain() -> None:
        ctx = new_context()
        module = parse_module(text, "mlp", ctx)
        with ctx:
            passmanager.PassManager.parse(pipeline.pipeline_text).run(module.operation)

    def staged() -> None:
        run_stages(text, pipeline, source_name="mlp", capture=True)

    def staged_printed() -> None:
        run = run_stages(text, pipeline, source_name="mlp", capture=True)
        for snap in run.snapshots:
            assert snap.ir

    def staged_nocapture() -> None:
        run_stages(text, pipeline, source_name="mlp", capture=False)

    candidates = {
        "one pass-manager run": plain,
        "stages + snapshots": staged,
        "stages, no snapshots": staged_nocapture,
        "stages, every IR printed": staged_printed,
    }
    for fn in candidates.values():  # warm-up: registrations, caches
        fn()
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(args.repeats):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            time.sleep(0.05)

    base = statistics.median(times["one pass-manager run"])
    print(
        f"refbackend on an MLP (256 -> {args.hidden} -> {args.hidden} -> 10), "
        f"{len(text) / 1e6:.1f} MB of input IR, {args.repeats} runs each"
    )
    print(f"{'candidate':<24} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'ratio':>6}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(
            f"{name:<24} {med * 1e3:>10.1f} {min(ts) * 1e3:>8.1f} {max(ts) * 1e3:>8.1f} "
            f"{med / base:>6.2f}"
        )
    ratio = statistics.median(times["stages + snapshots"]) / base
    print(
        f"goal: stages + snapshots <= 1.30x one run -> {'met' if ratio <= 1.3 else 'NOT met'} "
        f"({ratio:.2f}x)"
    )


if __name__ == "__main__":
    main()
