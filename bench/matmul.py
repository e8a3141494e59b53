"""Benchmark: fp32 matmuls and an MLP forward, torch eager against the plain and -blas pipelines.

Workloads: square matmuls N = 256, 512, 1024, 2048 and an MLP forward (Linear 512->512, ReLU,
Linear 512->512, ReLU, Linear 512->10 on a batch of 128). Candidates: torch eager (MKL), the
plain pipeline (`refbackend-dps`: loops), `refbackend-dps-blas` (the same with the matmuls as
CBLAS calls writing into the caller's buffer), `refbackend-blas` (RefBackend's callback ABI: a
fresh result buffer per call, copied out), `refbackend-vectorized` (MLIR alone: tiled and
vectorized by a transform script, its blocks on OpenMP threads: libomp when it loads, else one
core, as a first line says; its packing and tiles are those of the host's CPU features, e.g.
4x64 register tiles on panels of B with AVX-512, as the next line says), and for the matmuls the
BLAS library's sgemm called directly through ctypes. With --iree, IREE's default llvm-cpu
codegen too (`iree-base-compiler` and `iree-base-runtime`, which the project does not install:
e.g. `pip install --no-deps --target DIR iree-base-compiler==3.13.0 iree-base-runtime==3.13.0`
and `PYTHONPATH=DIR`), compiled for the host CPU and run on a local-task device of as many
threads, in a process of its own per thread count (IREE's runtime creates its worker threads
once per process), timed by the same protocol after the others. Every pipeline, and IREE, is
checked against torch.

Timing follows the project's protocol (execution/results/timing.py): warm-up, then rounds in
which each candidate runs one block of calls and then pauses, so spinning thread pools of one
candidate never overlap another's calls; torch, the BLAS and OpenMP get the same thread count
(1, then 2). Printed per candidate: median and best-of block means, GFLOP/s (median and best),
the share of this machine's fp32 peak, the ratio to torch (median/median and best/best), and how
many cores other processes used during its blocks (above 0.2 the row is flagged LOADED). Then
the matmuls side by side: median GFLOP/s and share of peak of torch, the library's sgemm and
refbackend-vectorized at each thread count, and the machine's load average.

Usage: python bench/matmul.py [--sizes 256,512,1024,2048] [--threads 1,2] [--rounds 7]
       [--block-seconds 0.2] [--pause 0.25] [--plain-max-gflop 0.3] [--peak-per-core 117.4]
       [--no-callback] [--no-mlp] [--mode jit|aot] [--iree]
"""

from __future__ import annotations

import argparse
import sys
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
from workloads import Workload, mlp_workload

PLAIN = "refbackend-dps"
BLAS = "refbackend-dps-blas"
CALLBACK_BLAS = "refbackend-blas"
VECTORIZED = "refbackend-vectorized"
DIRECT = "cblas_sgemm (ctypes)"
IREE = "iree llvm-cpu"


def workloads(sizes: list[int], with_mlp: bool) -> list[Workload]:
    import torch
    from torch import nn

    class MatMul(nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a @ b

    gen = torch.Generator().manual_seed(0)
    out = [
        Workload(
            f"matmul N={n}",
            MatMul(),
            [torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)],
            2.0 * n**3,
        )
        for n in sizes
    ]
    if with_mlp:
        out.append(mlp_workload(128))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512,1024,2048")
    ap.add_argument("--threads", default="1,2")
    add_timing_options(ap)
    ap.add_argument(
        "--plain-max-gflop",
        type=float,
        default=0.3,
        help="time the plain (loop) pipeline only up to this many GFLOP per call",
    )
    ap.add_argument("--peak-per-core", type=float, default=117.4, help="fp32 GFLOP/s")
    ap.add_argument("--no-callback", action="store_true", help=f"leave out {CALLBACK_BLAS}")
    ap.add_argument("--no-mlp", action="store_true")
    ap.add_argument("--mode", choices=["jit", "aot"], default="jit")
    ap.add_argument("--iree", action="store_true", help="time IREE's llvm-cpu matmuls too")
    ap.add_argument("--iree-child", help=argparse.SUPPRESS)  # N:THREADS, in a process of its own
    args = ap.parse_args()
    if args.iree_child:
        _time_iree(args)
        return
    iree = import_iree() if args.iree else None

    import numpy as np
    import torch

    from pytest_mlirpipe.execution.check import ModelChecker
    from pytest_mlirpipe.execution.native.blas_library import find_blas_library, set_blas_threads
    from pytest_mlirpipe.execution.native.openmp import openmp_runtime, set_openmp_threads
    from pytest_mlirpipe.execution.results.timing import measure
    from pytest_mlirpipe.lowering.catalog import catalog_for

    lib = find_blas_library()
    checker = ModelChecker(cache_dir=None, mode=args.mode)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    thread_counts = [int(t) for t in args.threads.split(",") if t]
    pipelines = [PLAIN, BLAS, VECTORIZED] + ([] if args.no_callback else [CALLBACK_BLAS])
    print(f"BLAS: {lib.path} (prefix {lib.prefix!r}); torch {torch.__version__}, mode {args.mode}")
    print(f"{VECTORIZED}: {openmp_runtime().note}")
    stages = {s.name: s.passes for s in catalog_for([]).get(VECTORIZED).stages}
    print(f"{VECTORIZED} on this CPU: {stages['pack-panels'][0]}")
    print(f"  and {stages['tile-and-vectorize'][0]}")
    if iree is not None:
        from importlib.metadata import version

        print(f"IREE: {iree[0].__file__} (iree-base-compiler {version('iree-base-compiler')})")
    print(f"load average at the start: {load_average()}")
    print(
        f"timing: {args.rounds} rounds x 1 block of ~{args.block_seconds}s per candidate, "
        f"{args.pause}s pause after each block; peak {args.peak_per_core} GFLOP/s per core"
    )
    rows: list[list[str]] = []
    for w in workloads(sizes, not args.no_mlp):
        with torch.no_grad():
            expected = w.model(*w.inputs).numpy()
        scale = float(np.abs(expected).max())
        calls = {"torch": torch_call(w.model, w.inputs)}
        if w.name.startswith("matmul"):  # the library alone: the floor of any -blas pipeline
            calls[DIRECT] = _direct_sgemm(lib, *w.inputs)
        for p in pipelines:
            if p == PLAIN and w.flops / 1e9 > args.plain_max_gflop:
                continue
            compiled = checker.compile(w.model, *w.inputs, pipeline=p)
            fn = compiled.function
            call = fn.bind(*w.inputs)
            call()
            got = fn.outputs()[0]
            if not np.allclose(got, expected, rtol=1e-3, atol=1e-4 * scale):
                raise SystemExit(
                    f"{w.name}: {p} differs from torch (max abs err "
                    f"{float(np.abs(got - expected).max()):.3g})"
                )
            calls[p] = call
        for threads in thread_counts:
            set_blas_threads(lib, threads)
            set_openmp_threads(threads)
            config = timing_config(args, threads)
            with torch.no_grad():
                timings = measure(calls, config)
            if iree is not None and w.name.startswith("matmul"):
                timings[IREE] = _iree_in_a_process(w.inputs[0].shape[0], threads, args)
            ref = timings["torch"]
            peak = args.peak_per_core * threads
            for name, t in timings.items():
                gf, gf_best = w.flops / t.median / 1e9, w.flops / t.minimum / 1e9
                rows.append(
                    [
                        w.name,
                        str(threads),
                        name,
                        f"{t.median * 1e3:.3f}",
                        f"{t.minimum * 1e3:.3f}",
                        f"{gf:.1f}",
                        f"{gf_best:.1f}",
                        f"{100 * gf / peak:.0f}%",
                        f"{t.median / ref.median:.2f}",
                        f"{t.minimum / ref.minimum:.2f}",
                        f"{t.blocks}x{t.calls_per_block}",
                        f"{t.other_cpu:.2f}" + (" LOADED" if t.loaded else ""),
                    ]
                )
            sys.stdout.write(".")
            sys.stdout.flush()
        for p in pipelines:  # skipped plain rows, said so
            if p not in calls:
                rows.append([w.name, "-", p, "skipped: slower than --plain-max-gflop allows"])
    print()
    header = [
        "workload",
        "thr",
        "candidate",
        "median ms",
        "best ms",
        "GFLOP/s",
        "best GF/s",
        "of peak",
        "x torch",
        "best x",
        "blocks",
        "other cores",
    ]
    print_table(header, rows)
    print(
        "x torch: median / torch median (best x: best / torch best); below 1 is faster. "
        "of peak: median GFLOP/s over peak x threads. other cores: the most CPU other processes "
        "used during one of the candidate's blocks."
    )
    print()
    _print_side_by_side(rows, thread_counts)
    print(f"load average at the end: {load_average()}")


SIDE_BY_SIDE = ("torch", DIRECT, VECTORIZED, IREE)


def _print_side_by_side(rows: list[list[str]], thread_counts: list[int]) -> None:
    """The matmuls: GFLOP/s (share of peak) of torch, sgemm and the MLIR-only pipeline."""
    cell = {(r[0], r[1], r[2]): f"{r[5]} ({r[7]})" for r in rows if len(r) > 7}
    shown = [c for c in SIDE_BY_SIDE if any(k[2] == c for k in cell)]
    header = ["workload"] + [f"{c} {t}thr" for t in thread_counts for c in shown]
    table = [
        [w] + [cell.get((w, str(t), c), "-") for t in thread_counts for c in shown]
        for w in dict.fromkeys(r[0] for r in rows if r[0].startswith("matmul"))
    ]
    print("median GFLOP/s (share of peak x threads):")
    print_table(header, table)


def _direct_sgemm(lib, a, b):
    """`<prefix>cblas_sgemm` called through ctypes into a preallocated output."""
    import ctypes

    import numpy as np

    sgemm = getattr(ctypes.CDLL(str(lib.path)), lib.symbol("cblas_sgemm"))
    sgemm.restype = None
    a, b = a.numpy(), b.numpy()
    m, k = a.shape
    n = b.shape[1]
    c = np.empty((m, n), np.float32)
    i, f, p = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
    args = (i(101), i(111), i(111), i(m), i(n), i(k), f(1.0), p(a.ctypes.data), i(k))
    args += (p(b.ctypes.data), i(n), f(0.0), p(c.ctypes.data), i(n))

    def call():
        sgemm(*args)

    call.keep = (a, b, c)  # type: ignore[attr-defined]
    return call


def _iree_in_a_process(n: int, threads: int, args):
    """IREE's timing of the N x N matmul on `threads` threads, from a process of its own."""
    import json
    import subprocess
    import types

    argv = [
        sys.executable,
        __file__,
        "--iree-child",
        f"{n}:{threads}",
        *timing_argv(args),
    ]
    ran = subprocess.run(argv, capture_output=True, text=True, check=False)
    if ran.returncode != 0:
        raise SystemExit(f"IREE at N={n} on {threads} threads failed:\n{ran.stdout}{ran.stderr}")
    return types.SimpleNamespace(**json.loads(ran.stdout.strip().splitlines()[-1]))


def _time_iree(args) -> None:
    """--iree-child N:THREADS: compile the matmul with IREE (llvm-cpu for the host CPU, default
    flags), run it on a local-task device of THREADS threads, check it against torch, time it
    and print the timing as JSON."""
    import json

    import numpy as np
    import torch

    from pytest_mlirpipe.execution.results.timing import measure

    compiler, runtime = import_iree()
    n, threads = (int(x) for x in args.iree_child.split(":"))
    w = workloads([n], False)[0]
    a, b = (x.numpy() for x in w.inputs)
    t = f"tensor<{n}x{n}xf32>"
    source = f"""func.func @mm(%a: {t}, %b: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %c = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %r = linalg.matmul ins(%a, %b : {t}, {t}) outs(%c : {t}) -> {t}
  return %r : {t}
}}"""
    vmfb = compiler.compile_str(
        source, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"]
    )
    device = iree_device(runtime, threads)
    context = runtime.SystemContext(config=runtime.Config(device=device))
    context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb))
    fn = context.modules.module["mm"]
    on_device = [runtime.asdevicearray(device, x) for x in (a, b)]

    def call():
        return fn(*on_device).to_host()

    with torch.no_grad():
        expected = w.model(*w.inputs).numpy()
    if not np.allclose(call(), expected, rtol=1e-3, atol=1e-4 * float(np.abs(expected).max())):
        raise SystemExit(f"{w.name}: IREE differs from torch")
    timing = measure({IREE: call}, timing_config(args, threads))[IREE]
    print(json.dumps(timing_fields(timing)))


if __name__ == "__main__":
    Path(__file__)  # keep the module importable for --help without torch
    main()
