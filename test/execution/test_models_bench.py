"""bench/models.py in its quick mode at the case library's sizes: every runner's outputs are
checked against torch and every runner has a timed row per thread count. Timings are printed,
never asserted."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "models.py"
RUNNERS = ["torch", "refbackend-dps-blas", "refbackend-vectorized"]
HEADER = ["model", "batch", "thr", "runner", "outputs", "median ms", "best ms", "GFLOP/s"]
HEADER += ["x torch", "blocks", "other cores"]


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, check=False
    )


def _table(stdout: str) -> list[list[str]]:
    """The table's header and rows, each split on runs of two spaces or more."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model "))
    rows = [re.split(r"\s{2,}", lines[start])]
    for line in lines[start + 2 :]:
        if line.startswith("outputs:"):
            break
        if line.strip():
            rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_the_quick_bench_checks_and_times_every_runner_at_each_thread_count():
    done = _bench("--quick", "--small", "--models", "encoder", "--threads", "1,2", "--iree")
    assert done.returncode == 0, done.stdout + done.stderr
    has_iree = importlib.util.find_spec("iree") is not None
    runners = RUNNERS + (["iree llvm-cpu"] if has_iree else [])
    if not has_iree:
        assert "\nIREE: skipped (IREE's Python packages do not import (" in done.stdout
    header, *rows = _table(done.stdout)
    assert header == HEADER
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("1", threads, runner) for threads in ("1", "2") for runner in runners
    ]
    for row in rows:
        assert len(row) == 11 and row[0] == "encoder s8 d16 h2 ff32", row
        assert row[4] == ("reference" if row[3] == "torch" else "match"), row
        assert float(row[5]) > 0 and row[9].startswith("3x"), row
        assert row[8] == "1.00" or row[3] != "torch", row


def test_an_unknown_model_or_runner_is_refused_naming_the_known_ones():
    done = _bench("--models", "resnet-block,vgg")
    assert done.returncode == 2
    assert (
        "error: --models: unknown 'vgg'; known: mlp, resnet-block, dwsep-block, encoder"
        in done.stderr
    )
    done = _bench("--skip", "iree")
    assert (
        "error: --skip: unknown 'iree'; known: refbackend-dps-blas, refbackend-vectorized, "
        "iree llvm-cpu" in done.stderr
    )
    done = _bench("--batches", "0")
    assert "error: --batches takes comma-separated counts of at least 1, got '0'" in done.stderr
