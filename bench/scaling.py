"""A huge input costs in proportion to its size: a module of N functions (each a small matmul)
through mlirpipe-opt (parse, refbackend to `finalizing-bufferize`, print), and through a RUN
line under pytest (in-process tool, pipe, filecheck), at growing N.

    python bench/scaling.py [--sizes 250,1000,4000]

Prints seconds and microseconds per function for each N; a quadratic step would show as a
per-function cost that grows with N.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from pathlib import Path

FUNC = """\
func.func @f{i}(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {{
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>)
                     outs(%1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}}
"""


def module(n: int) -> str:
    return "".join(FUNC.format(i=i) for i in range(n))


def time_opt(path: Path, repeats: int) -> float:
    from pytest_mlirpipe.tools import opt

    times = []
    for _ in range(repeats):
        out, err = io.StringIO(), io.StringIO()
        t0 = time.perf_counter()
        status = opt.run(
            [str(path), "--pipeline", "refbackend", "--stop-after", "finalizing-bufferize"],
            io.StringIO(),
            out,
            err,
        )
        times.append(time.perf_counter() - t0)
        assert status == 0, err.getvalue()
    return statistics.median(times)


def time_file_test(root: Path, path: Path, repeats: int) -> float:
    from pytest_mlirpipe.filetests.runner import FileTestRunner
    from pytest_mlirpipe.options import RunConfig

    session = FileTestRunner(root / "exec", RunConfig(isolation="none"))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        verdict = session.run(path)
        times.append(time.perf_counter() - t0)
        assert verdict.code == "PASS", verdict.output[-2000:]
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="250,1000,4000", help="numbers of functions")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = Path(tempfile.mkdtemp(prefix="mlirpipe-scaling-"))
    head = ("functions", "MB", "opt s", "us/func", "RUN-line s", "us/func")
    print("{:>9} {:>6} {:>8} {:>8} {:>10} {:>8}".format(*head))
    for n in sizes:
        text = module(n)
        plain = root / f"m{n}.mlir"
        plain.write_text(text)
        test = root / f"t{n}.mlir"
        test.write_text(
            "// RUN: mlirpipe-opt %s --pipeline refbackend --stop-after finalizing-bufferize"
            " | filecheck %s\n"
            f"// CHECK: func.func @f{n - 1}(\n// CHECK-NOT: tensor.empty\n" + text
        )
        t_opt = time_opt(plain, args.repeats)
        t_run = time_file_test(root, test, args.repeats)
        print(
            f"{n:9d} {len(text) / 1e6:6.2f} {t_opt:8.2f} {t_opt / n * 1e6:8.0f}"
            f" {t_run:10.2f} {t_run / n * 1e6:8.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
