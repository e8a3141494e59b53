"""Benchmark: whole models, torch eager against refbackend-dps-blas, refbackend-vectorized and IREE.

Models (bench/workloads.py): bench/matmul.py's MLP (Linear 512->512, ReLU, Linear 512->512,
ReLU, Linear 512->10); a ResNet basic block (conv3x3-BN-ReLU-conv3x3-BN, the identity added,
ReLU) at 64 channels 56x56; a depthwise-separable block (depthwise conv3x3-BN-ReLU, pointwise
conv1x1-BN-ReLU) from 64 to 128 channels at 56x56; a pre-norm transformer encoder layer
(sequence 128, width 256, 4 heads, feed-forward 1024). All in eval mode, each on a batch of 1
and of 8. The BatchNorms have seeded running statistics; the import does not fold them into the
convolutions' weights but decomposes each into elementwise ops after its convolution.
`--small` takes the execution case library's sizes instead (a few channels, 8x8; sequence 8,
width 16). Whole networks, named with --models only (bench/networks.py, plain torch.nn):
resnet18 and mobilenetv2 on 224x224 images (--small: 32x32), bert-layer (BERT-base's encoder
layer: width 768, 12 heads, feed-forward 3072, post-norm, erf GELU) and gpt2-block (GPT-2
small's block: width 768, 12 heads, causal attention, tanh GELU) on sequences of 128 (--small:
width 32, 4 heads, sequence 16).

Runners: torch eager; the pipelines `refbackend-dps-blas` (matmuls as CBLAS calls, the rest
loops) and `refbackend-vectorized` (MLIR alone, tiled and vectorized, its blocks on OpenMP
threads), compiled by the project's ModelChecker as `mlirpipe run` does; with --iree, IREE's
default llvm-cpu codegen for the host CPU of torch-mlir's linalg import, in a process of its own
per thread count (as in bench/matmul.py; IREE is not a dependency of the project: e.g.
`pip install --no-deps --target DIR iree-base-compiler==3.13.0 iree-base-runtime==3.13.0` and
`PYTHONPATH=DIR`; when it does not import, one line says IREE is skipped).

Every runner's outputs are checked against torch by the project's default verdict (the scaled
rule against a float64 run of the model) before it is timed; one that does not match is
reported as MISMATCH (FAILED when it does not compile or run) instead of a time. A runner
whose single call takes longer than --max-call-seconds is not timed (a note gives that call's
time): convolutions through the pipelines are loops today, seconds per call at full size.

Timing follows the project's protocol (execution/results/timing.py), as bench/matmul.py:
warm-up, then rounds in which each runner runs one block of calls and pauses; torch, the BLAS
and OpenMP get the same thread count (1, then 2). Printed per model x batch x threads x runner:
whether its outputs matched torch, median and best per-call time, median GFLOP/s, the ratio to
torch's median in the same run, the blocks, and how many cores other processes used during its
blocks (above 0.2 the row is flagged LOADED).

Usage: python bench/models.py [--models mlp,resnet-block,dwsep-block,encoder] [--batches 1,8]
       [--threads 1,2] [--rounds 5] [--block-seconds 0.2] [--pause 0.25]
       [--max-call-seconds 1.5] [--skip RUNNER,...] [--small] [--mode jit|aot] [--iree]
       python bench/models.py --quick [--small] [...]   # batch 1, 3 short rounds: < 1 min
       python bench/models.py --sweep [--quick] [--plot sweep.svg] [--threads 1,2] [...]

--sweep times torch and refbackend-vectorized on blocks at many shapes instead (the points and
how they are picked: bench/shape_sweep.py), each point checked against torch as above; it
prints every row, the median ratio to torch, the ten worst rows with a hint of where their time
goes (the linalg ops that tile-and-vectorize leaves as loops), and writes a bar chart of every
ratio as SVG (--plot). --sweep --quick takes 4 points.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timed_runs import (  # beside this script
    add_timing_options,
    import_iree,
    iree_device,
    load_average,
    print_table,
    timing_argv,
    timing_config,
    timing_fields,
    torch_call,
)
from workloads import MODELS, NETWORKS, Workload, model_workload

BLAS = "refbackend-dps-blas"
VECTORIZED = "refbackend-vectorized"
IREE = "iree llvm-cpu"
PIPELINES = (BLAS, VECTORIZED)
# What --quick changes, unless given too
QUICK = {"batches": "1", "rounds": 3, "block_seconds": 0.05, "pause": 0.05, "max_call_seconds": 0.5}
HEADER = [
    "model",
    "batch",
    "thr",
    "runner",
    "outputs",
    "median ms",
    "best ms",
    "GFLOP/s",
    "x torch",
    "blocks",
    "other cores",
]


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    if args.iree_child:
        _time_iree(args)
        return
    if args.sweep:
        _sweep(args)
        return
    iree = _iree_or_why_not() if args.iree and IREE not in args.skip else None
    import torch

    from pytest_mlirpipe import ModelChecker
    from pytest_mlirpipe.execution.native.openmp import openmp_runtime

    print(f"torch {torch.__version__}, mode {args.mode}; {VECTORIZED}: {openmp_runtime().note}")
    if isinstance(iree, str):
        print(f"IREE: skipped ({iree})")
        iree = None
    print(f"load average at the start: {load_average()}")
    print(
        f"timing: {args.rounds} rounds x 1 block of ~{args.block_seconds}s per runner, "
        f"{args.pause}s pause after each block; runners slower than {args.max_call_seconds:g} s "
        "a call are not timed"
    )
    rows: list[list[str]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-models-") as scratch:
        # the cache lets the check (in a forked child) and the timed compile share one lowering
        checker = ModelChecker(cache_dir=Path(scratch) / "cache", mode=args.mode)
        for name in args.models:
            for batch in args.batches:
                rows += _bench(name, batch, args, checker, iree is not None, scratch, notes)
        checker.close()
    print()
    print_table(HEADER, rows)
    print(
        "outputs: checked against torch by the default verdict (torch: the reference). "
        "x torch: median / torch's median in the same run; below 1 is faster. other cores: "
        "the most CPU other processes used during one of the runner's blocks."
    )
    for note in notes:
        print(f"note: {note}")
    print(f"load average at the end: {load_average()}")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    known = ", ".join(MODELS + NETWORKS)
    ap.add_argument("--models", default=",".join(MODELS), help=f"of {known}")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", default="1,2")
    add_timing_options(ap, rounds=5)
    ap.add_argument(
        "--max-call-seconds",
        type=float,
        default=1.5,
        help="time a runner only if one call takes at most this long",
    )
    ap.add_argument("--skip", default="", help=f"runners to leave out, of {_runner_names()}")
    ap.add_argument("--small", action="store_true", help="the case library's small sizes")
    ap.add_argument("--quick", action="store_true", help="batch 1, 3 short rounds")
    ap.add_argument("--mode", choices=["jit", "aot"], default="jit")
    ap.add_argument("--iree", action="store_true", help="time IREE's llvm-cpu code too")
    ap.add_argument("--sweep", action="store_true", help="blocks at many shapes (shape_sweep.py)")
    ap.add_argument("--plot", default="sweep.svg", help="where --sweep writes its chart (SVG)")
    ap.add_argument("--iree-child", help=argparse.SUPPRESS)  # MODEL:BATCH:THREADS:DIR
    args = ap.parse_args(argv)
    if args.quick:
        ap.set_defaults(**QUICK)
        args = ap.parse_args(argv)
    args.models = _names(ap, "--models", args.models, MODELS + NETWORKS)
    args.skip = _names(ap, "--skip", args.skip, (*PIPELINES, IREE), empty=True)
    args.batches = _counts(ap, "--batches", args.batches)
    args.threads = _counts(ap, "--threads", args.threads)
    return args


def _runner_names() -> str:
    return ", ".join(repr(r) for r in (*PIPELINES, IREE))


def _names(ap, flag: str, text: str, known: tuple[str, ...], empty: bool = False) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error(f"{flag}: unknown {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    if not names and not empty:
        ap.error(f"{flag} names none of {', '.join(known)}")
    return names


def _counts(ap, flag: str, text: str) -> list[int]:
    try:
        counts = [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        ap.error(f"{flag} takes comma-separated counts of at least 1, got {text!r}")
    return counts


def _bench(
    name: str, batch: int, args, checker, with_iree: bool, scratch: str, notes: list[str]
) -> list[list[str]]:
    """The rows of one model on one batch: each runner checked, then timed per thread count."""
    import torch

    from pytest_mlirpipe.execution.native.blas_library import set_blas_threads
    from pytest_mlirpipe.execution.results.timing import measure

    w = model_workload(name, batch, args.small)
    calls = {"torch": torch_call(w.model, w.inputs)}
    outputs = {"torch": "reference"}
    blas = {}
    for p in PIPELINES:
        if p in args.skip:
            continue
        outputs[p], fn, why = _checked(checker, w, p, args.max_call_seconds, min(args.threads))
        if why:
            notes.append(f"{w.name} batch {batch}, {p}: {why}")
        if fn is not None:
            calls[p] = fn.bind(*w.inputs)
            if fn.blas is not None:
                blas[fn.blas.path] = fn.blas
    if with_iree:
        outputs[IREE] = ""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    rows = []
    for threads in args.threads:
        for lib in blas.values():
            set_blas_threads(lib, threads)
        with torch.no_grad():
            timings = measure(calls, timing_config(args, threads))
        if with_iree:
            timing, checked, why = _iree_in_a_process(name, w, threads, folder, args)
            note = f"{w.name} batch {batch}, {IREE}: {why}"
            if why and note not in notes:
                notes.append(note)
            outputs[IREE] = checked
            if timing is not None:
                timings[IREE] = timing
        ref = timings["torch"]
        for runner, checked in outputs.items():
            rows.append(_row(w, batch, threads, runner, checked, timings.get(runner), ref))
        sys.stdout.write(".")
        sys.stdout.flush()
    return rows


def _row(w: Workload, batch: int, threads: int, runner: str, checked: str, t, ref) -> list[str]:
    head = [w.name, str(batch), str(threads), runner, checked]
    if t is None:
        return head + ["-"] * (len(HEADER) - len(head))
    return [
        *head,
        f"{t.median * 1e3:.3f}",
        f"{t.minimum * 1e3:.3f}",
        f"{w.flops / t.median / 1e9:.1f}",
        f"{t.median / ref.median:.2f}",
        f"{t.blocks}x{t.calls_per_block}",
        f"{t.other_cpu:.2f}" + (" LOADED" if t.loaded else ""),
    ]


def _checked(checker, w: Workload, pipeline: str, max_seconds: float, threads: int):
    """('match', the native function to time or None, why it is not timed), or
    ('MISMATCH' / 'FAILED', None, what the check found). The call that decides whether to
    time it runs on `threads` threads (BLAS and OpenMP): a BLAS library's own default of
    one thread per core stalls on a loaded machine."""
    import time

    from pytest_mlirpipe import ExecutionMismatch
    from pytest_mlirpipe.execution.native.blas_library import set_blas_threads
    from pytest_mlirpipe.execution.native.openmp import set_openmp_threads

    try:
        checker.check(w.model, *w.inputs, pipelines=[pipeline], name=w.name, time_it=False)
    except ExecutionMismatch as exc:
        (outcome,) = exc.outcomes
        what = "MISMATCH" if outcome.comparison is not None else "FAILED"
        text = outcome.error or outcome.comparison.format()
        return what, None, text.strip().splitlines()[0]
    fn = checker.compile(w.model, *w.inputs, pipeline=pipeline).function
    if fn.blas is not None:
        set_blas_threads(fn.blas, threads)
    set_openmp_threads(threads)
    call = fn.bind(*w.inputs)
    t0 = time.perf_counter()
    call()
    seconds = time.perf_counter() - t0
    if seconds > max_seconds:
        return "match", None, f"not timed: one call took {seconds:.2f} s (--max-call-seconds)"
    return "match", fn, ""


def _sweep(args) -> None:
    """--sweep: each point's block checked against torch, then torch and the vectorized
    pipeline timed on each thread count; then the summary (_sweep_summary)."""
    import torch
    from shape_sweep import point_workload, sweep_points

    from pytest_mlirpipe import ModelChecker
    from pytest_mlirpipe.execution.results.timing import measure

    points = sweep_points(args.quick)
    print(f"sweep: {len(points)} points x threads {','.join(map(str, args.threads))}")
    print(f"load average at the start: {load_average()}")
    rows: list[list[str]] = []
    ratios: list[tuple[float, list[str], Workload]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as scratch:
        checker = ModelChecker(cache_dir=Path(scratch) / "cache", mode=args.mode)
        for point in points:
            w = point_workload(point, args.small)
            checked, fn, why = _checked(
                checker, w, VECTORIZED, args.max_call_seconds, min(args.threads)
            )
            if why:
                notes.append(f"{w.name}: {why}")
            calls = {"torch": torch_call(w.model, w.inputs)}
            if fn is not None:
                calls[VECTORIZED] = fn.bind(*w.inputs)
            for threads in args.threads:
                with torch.no_grad():
                    t = measure(calls, timing_config(args, threads))
                ref = t["torch"]
                rows.append(_row(w, point.batch, threads, "torch", "reference", ref, ref))
                row = _row(w, point.batch, threads, VECTORIZED, checked, t.get(VECTORIZED), ref)
                rows.append(row)
                if VECTORIZED in t:
                    ratios.append((t[VECTORIZED].median / ref.median, row, w))
            sys.stdout.write(".")
            sys.stdout.flush()
        checker.close()
    _sweep_summary(args, rows, ratios, notes)


def _sweep_summary(args, rows, ratios, notes: list[str]) -> None:
    """Every row, the median ratio to torch, the ten worst with their hints, the chart."""
    import statistics

    from shape_sweep import loops_hint, write_svg

    print()
    print_table(HEADER, rows)
    print(
        "outputs: checked against torch by the default verdict. x torch: median / torch's "
        "median in the same run; below 1 is faster."
    )
    for note in notes:
        print(f"note: {note}")
    if not ratios:
        print("no point was timed")
        return
    median = statistics.median(r for r, _, _ in ratios)
    print(f"\nmedian x torch of {len(ratios)} timed rows: {median:.2f}")
    print("worst ten (x torch, threads, point, hint):")
    hints: dict[str, str] = {}
    for ratio, row, w in sorted(ratios, key=lambda r: -r[0])[:10]:
        if w.name not in hints:
            hints[w.name] = loops_hint(w, VECTORIZED)
        print(f"  {ratio:6.2f}  {row[2]} thr  {w.name}: {hints[w.name]}")
    write_svg(args.plot, [(f"{row[0]}, {row[2]} thr", r) for r, row, _ in ratios])
    print(f"chart: {args.plot}")
    print(f"load average at the end: {load_average()}")


def _iree_or_why_not():
    """IREE's compiler and runtime modules, or why they do not import."""
    try:
        return import_iree()
    except SystemExit as exc:
        return str(exc).removeprefix("--iree: ")


def _iree_in_a_process(name: str, w: Workload, threads: int, folder: Path, args):
    """(IREE's timing or None, whether its outputs matched torch, why not) on `threads`
    threads, from a process of its own; the module is compiled by the first and kept."""
    import json
    import subprocess
    import types

    batch = w.inputs[0].shape[0]
    argv = [sys.executable, __file__, "--iree-child", f"{name}:{batch}:{threads}:{folder}"]
    argv += timing_argv(args) + (["--small"] if args.small else [])
    ran = subprocess.run(argv, capture_output=True, text=True, check=False)
    if ran.returncode != 0:
        last = (ran.stderr.strip() or ran.stdout.strip() or "no output").splitlines()[-1]
        return None, "FAILED", f"exit {ran.returncode}: {last}"
    checked, why = _compare_with_torch(w, folder / "result.npy")
    if checked != "match":
        return None, checked, why
    return types.SimpleNamespace(**json.loads(ran.stdout.strip().splitlines()[-1])), checked, ""


def _compare_with_torch(w: Workload, path: Path) -> tuple[str, str]:
    """IREE's output judged as the pipelines' are: the scaled rule against float64."""
    import numpy as np
    import torch

    from pytest_mlirpipe.execution.results.compare import NO_TOLERANCES, compare
    from pytest_mlirpipe.execution.results.reference import float64_results

    with torch.no_grad():
        expected = [w.model(*w.inputs).numpy()]
    exact = float64_results(w.model, w.inputs, expected)
    got = [np.load(path)]
    comparison = compare(got, expected, ["result 0"], NO_TOLERANCES, exact.results, exact.why_not)
    if comparison.ok:
        return "match", ""
    return "MISMATCH", comparison.format().strip().splitlines()[0]


def _time_iree(args) -> None:
    """--iree-child MODEL:BATCH:THREADS:DIR: compile the model's linalg import with IREE
    (llvm-cpu for the host CPU, default flags) into DIR once, run it on a local-task device of
    THREADS threads, keep its output in DIR for the parent to check, time it, print JSON."""
    import json

    import numpy as np
    import torch

    from pytest_mlirpipe.execution.frontends import import_torch
    from pytest_mlirpipe.execution.results.timing import measure

    compiler, runtime = import_iree()
    name, batch, threads, where = args.iree_child.split(":", 3)
    w = model_workload(name, int(batch), args.small)
    folder = Path(where)
    vmfb = folder / "module.vmfb"
    if not vmfb.exists():
        text = import_torch(w.model, w.inputs, "linalg")
        flags = ["--iree-llvmcpu-target-cpu=host"]
        vmfb.write_bytes(compiler.compile_str(text, target_backends=["llvm-cpu"], extra_args=flags))
    device = iree_device(runtime, int(threads))
    context = runtime.SystemContext(config=runtime.Config(device=device))
    context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb.read_bytes()))
    fn = context.modules.module["forward"]
    on_device = [runtime.asdevicearray(device, x.numpy()) for x in w.inputs]

    def call():
        return fn(*on_device).to_host()

    np.save(folder / "result.npy", call())
    with torch.no_grad():
        timing = measure({IREE: call}, timing_config(args, int(threads)))[IREE]
    print(json.dumps(timing_fields(timing)))


if __name__ == "__main__":
    main()
