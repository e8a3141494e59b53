"""What the timing benchmarks share: the protocol's options, IREE's import, the load, the table."""

from __future__ import annotations

import argparse


def add_timing_options(ap: argparse.ArgumentParser, rounds: int = 7) -> None:
    """--rounds, --block-seconds and --pause: the timing protocol of every candidate."""
    ap.add_argument("--rounds", type=int, default=rounds, help="blocks per candidate")
    ap.add_argument("--block-seconds", type=float, default=0.2)
    ap.add_argument("--pause", type=float, default=0.25, help="seconds after every block")


def timing_argv(args) -> list[str]:
    """The timing options again, for a child process."""
    return [
        "--rounds",
        str(args.rounds),
        "--block-seconds",
        str(args.block_seconds),
        "--pause",
        str(args.pause),
    ]


def timing_config(args, threads: int):
    """The run's timing protocol (--rounds, --block-seconds, --pause) on `threads` threads."""
    from pytest_mlirpipe.execution.results.timing import TimingConfig

    return TimingConfig(
        warmup=3,
        blocks=args.rounds,
        block_seconds=args.block_seconds,
        pause_seconds=args.pause,
        threads=threads,
    )


def import_iree():
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
    except ImportError as exc:
        raise SystemExit(
            f"--iree: IREE's Python packages do not import ({exc}); install them beside the "
            "project, e.g. pip install --no-deps --target DIR iree-base-compiler==3.13.0 "
            "iree-base-runtime==3.13.0, and run with PYTHONPATH=DIR"
        ) from None
    return compiler, runtime


def iree_device(runtime, threads: int):
    """A local-task device of `threads` worker threads (once per process: IREE's runtime
    creates its workers with the first device)."""
    runtime.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    return runtime.get_driver("local-task").create_default_device()


def timing_fields(timing) -> dict:
    """A Timing as plain data, for a child process to print as JSON."""
    fields = ("median", "minimum", "blocks", "calls_per_block", "other_cpu", "loaded")
    return {f: getattr(timing, f) for f in fields}


def load_average() -> str:
    import os

    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:
        return "unknown"


def torch_call(model, inputs):
    def call():
        return model(*inputs)

    return call


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """Columns padded to their widest cell, a blank line between workloads (the first
    column); a row of another length is a note, printed as it is."""
    full = [r for r in rows if len(r) == len(header)]
    widths = [max(len(r[i]) for r in [header, *full]) for i in range(len(header))]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    last = None
    for r in rows:
        if last is not None and r[0] != last:
            print()
        last = r[0]
        if len(r) != len(header):
            print("  ".join(r))
            continue
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
