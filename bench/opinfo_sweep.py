"""Benchmark: the OpInfo sweep (`mlirpipe sweep`) on the whole catalogue, niced, timed.

Every OpInfo with float32 on CPU, its first sample, through refbackend and tosa, in two worker
processes at low priority; results go to opinfo-sweep/ (a rerun resumes). Any `mlirpipe
sweep` option may be added, e.g. --ops add,mul --limit 20 -j 1.
Usage: python bench/opinfo_sweep.py [mlirpipe sweep options]
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    from pytest_mlirpipe.cli.main import run

    os.nice(10)  # other work on the machine goes first
    argv = ["sweep", "-j", "2", *sys.argv[1:]]
    t0 = time.perf_counter()
    status = run(argv, sys.stdin, sys.stdout, sys.stderr)
    print(f"\nsweep took {time.perf_counter() - t0:.0f} s")
    sys.exit(status)


if __name__ == "__main__":
    main()
