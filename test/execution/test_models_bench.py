"""bench/models.py in its quick mode at the case library's sizes: every runner's outputs are
checked against torch and every runner has a timed row per thread count. Timings are printed,
never asserted."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cases import HAS_OPENBLAS, NO_OPENBLAS

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
        "error: --models: unknown 'vgg'; known: mlp, resnet-block, dwsep-block, encoder, "
        "resnet18, mobilenetv2, bert-layer, gpt2-block" in done.stderr
    )
    done = _bench("--skip", "iree")
    assert (
        "error: --skip: unknown 'iree'; known: refbackend-dps-blas, refbackend-vectorized, "
        "iree llvm-cpu" in done.stderr
    )
    done = _bench("--models", ",")
    assert (
        "error: --models names none of mlp, resnet-block, dwsep-block, encoder, resnet18, "
        "mobilenetv2, bert-layer, gpt2-block" in done.stderr
    )
    done = _bench("--batches", "0")
    assert "error: --batches takes comma-separated counts of at least 1, got '0'" in done.stderr


def test_a_whole_network_is_named_with_models_and_checked_and_timed_like_a_block():
    done = _bench(
        "--quick",
        "--small",
        "--models",
        "bert-layer",
        "--threads",
        "1",
        "--skip",
        "refbackend-dps-blas",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _table(done.stdout)[1:]
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("bert-layer s16 d32 h4", "torch", "reference"),
        ("bert-layer s16 d32 h4", "refbackend-vectorized", "match"),
    ]
    assert float(rows[1][5]) > 0 and float(rows[1][7]) > 0, rows


WRONG_PASSES = """
from pytest_mlirpipe.lowering import passes
from pytest_mlirpipe.mlir_env import ir


@passes.register("test-double-constants", "test only: doubles every nonzero float constant")
def double_constants(options):
    def run(op, pass_):
        found = []

        def visit(inner):
            value = inner.attributes["value"] if inner.name == "arith.constant" else None
            if isinstance(value, ir.FloatAttr) and value.value != 0:
                found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        for constant in found:
            value = constant.attributes["value"]
            with constant.location:
                constant.attributes["value"] = ir.FloatAttr.get(value.type, value.value * 2)

    return run
"""


def test_a_runner_whose_outputs_differ_from_torch_shows_mismatch_instead_of_a_time(
    tmp_path: Path, monkeypatch
):
    # refbackend-dps-blas shadowed by refbackend with every float constant doubled
    (tmp_path / "wrong_passes.py").write_text(WRONG_PASSES)
    (tmp_path / "refbackend-dps-blas.toml").write_text(
        '[pipeline]\nname = "refbackend-dps-blas"\nextends = "refbackend"\n\n'
        '[[stage]]\nname = "wrong"\nafter = "generalize-tensor-pad"\n'
        'reason = "test: a miscompile"\npasses = ["test-double-constants"]\n'
    )
    monkeypatch.setenv("MLIRPIPE_PIPELINES_PATH", str(tmp_path))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "wrong_passes")
    path = [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    done = _bench("--quick", "--small", "--models", "encoder", "--threads", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r[3]: r for r in _table(done.stdout)[1:]}
    assert rows["refbackend-dps-blas"][4:] == ["MISMATCH"] + ["-"] * 6
    assert rows["refbackend-vectorized"][4] == "match"
    assert (
        "\nnote: encoder s8 d16 h2 ff32 batch 1, refbackend-dps-blas: result 0 ('" in done.stdout
    ), done.stdout


@pytest.mark.skipif(not HAS_OPENBLAS, reason=NO_OPENBLAS)
def test_the_call_that_decides_whether_to_time_a_runner_runs_on_the_benchs_threads(
    tmp_path: Path, monkeypatch
):
    # the BLAS library's own default (a thread per core) stalls that call on a loaded machine
    monkeypatch.syspath_prepend(str(BENCH.parent))
    from models import _checked
    from workloads import model_workload

    from pytest_mlirpipe import ModelChecker
    from pytest_mlirpipe.execution.native.blas_library import find_blas_library, set_blas_threads

    lib = find_blas_library()
    set_blas_threads(lib, 2)
    threads = getattr(ctypes.CDLL(str(lib.path)), lib.symbol("openblas_get_num_threads"))
    checker = ModelChecker(cache_dir=tmp_path / "cache", work_dir=tmp_path)
    w = model_workload("mlp", 1, small=True)
    checked, fn, why = _checked(checker, w, "refbackend-dps-blas", 60.0, 1)
    assert (checked, why, fn.blas.path) == ("match", "", lib.path)
    assert threads() == 1


SMALL_SWEEP = [
    "dw3x3/1+b c4 8x8 b8",
    "dw3x3/1+b c4 8x8 b1",
    "conv3x3/1+b c4 8x8 b1",
    "ffn w16 s8 b1",
]


def test_the_quick_sweep_checks_each_point_and_prints_the_worst_with_hints_and_a_chart(
    tmp_path: Path,
):
    import xml.etree.ElementTree as ET

    chart = tmp_path / "sweep.svg"
    done = _bench("--sweep", "--quick", "--small", "--threads", "1", "--plot", str(chart))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("sweep: 4 points x threads 1\n"), done.stdout
    header, *rows = _table(done.stdout)
    assert header == HEADER
    assert [(r[0], r[3], r[4]) for r in rows] == [
        (point, runner, checked)
        for point in SMALL_SWEEP
        for runner, checked in (("torch", "reference"), ("refbackend-vectorized", "match"))
    ]
    assert re.search(r"\nmedian x torch of 4 timed rows: \d+\.\d\d\n", done.stdout)
    worst = done.stdout.split("worst ten (x torch, threads, point, hint):\n")[1].splitlines()
    assert len([w for w in worst if w.startswith("  ")]) == 4
    assert any(re.match(r" +\d+\.\d\d  1 thr  ffn w16 s8 b1: ", w) for w in worst), worst
    assert f"\nchart: {chart}\n" in done.stdout
    bars = ET.parse(chart).getroot().findall("{http://www.w3.org/2000/svg}rect")
    assert len(bars) == 4
