"""`mlirpipe sweep` over a few of torch's OpInfos: verdicts, a contained crash, resuming."""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import types
import warnings
from pathlib import Path

import pytest
import torch

from pytest_mlirpipe.cli.main import run
from pytest_mlirpipe.errors import Problem
from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.native.signature import BoundaryError
from pytest_mlirpipe.execution.sweep import opinfo
from pytest_mlirpipe.execution.sweep import run as sweep
from pytest_mlirpipe.execution.sweep.verdicts import VERDICTS, Verdict

pytest.importorskip("expecttest", reason="torch's OpInfo catalogue needs expecttest")


def mlirpipe(*argv: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run([str(a) for a in argv], io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sweep_checks_each_op_writes_the_matrix_and_a_rerun_resumes(tmp_path):
    out = tmp_path / "sweep"
    argv = ("sweep", "--ops", "add,mul,cumsum", "--pipeline", "refbackend", "--out", out)
    status, text, err = mlirpipe(*argv)
    assert (status, err) == (0, "")
    assert "[1/3] add float32: refbackend PASS\n" in text
    assert "[2/3] mul float32: refbackend PASS\n" in text
    results = lines(out / "results.jsonl")
    assert [(r["op"], r["pipeline"]) for r in results] == [
        ("add", "refbackend"),
        ("mul", "refbackend"),
        ("cumsum", "refbackend"),
    ]
    assert {r["verdict"] for r in results} <= set(VERDICTS)
    matrix = json.loads((out / "matrix.json").read_text())
    assert matrix["ops"]["add"]["refbackend"]["verdict"] == "PASS"
    assert "<code>cumsum</code>" in (out / "matrix.html").read_text()
    assert "| refbackend |" in text and "|   total |" in text
    assert not (out / "work").exists()

    status, again, _ = mlirpipe(*argv)  # everything is done: nothing runs, the same summary
    assert status == 0
    assert "[1/" not in again
    assert lines(out / "results.jsonl") == results
    assert again.split("\n\n")[-2].strip() == text.split("\n\n")[-2].strip()


def test_a_crash_is_one_contained_entry_and_the_sweep_goes_on(tmp_path, monkeypatch):
    checked = sweep.check_entry

    def crash_on_mul(checker, module, inputs, pipeline):
        if module.op is torch.mul:
            os.kill(os.getpid(), signal.SIGSEGV)
        return checked(checker, module, inputs, pipeline)

    monkeypatch.setattr(sweep, "check_entry", crash_on_mul)
    units = opinfo.select_units(["mul", "add"], ["float32"], 1, None)
    settings = sweep.SweepSettings(("tosa",), work_dir=str(tmp_path / "work"))
    assert sweep.run_sweep(units, settings, tmp_path / "r.jsonl") == 2
    by_op = {r["op"]: r for r in lines(tmp_path / "r.jsonl")}
    assert by_op["add"]["verdict"] == "PASS"
    assert (by_op["mul"]["verdict"], by_op["mul"]["stage"]) == ("CRASH", "import")
    assert by_op["mul"]["detail"] == ("killed by SIGSEGV (a segmentation fault), while importing")


class _FailsInEager(torch.nn.Module):
    def forward(self, x):
        raise ValueError("no eager for you")


class _CannotExport(torch.nn.Module):
    """Control flow on a value: neither export mode traces it."""

    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


class _Random(torch.nn.Module):
    def forward(self, x):
        return torch.rand_like(x)


class _Empty(torch.nn.Module):
    def forward(self, x):
        return torch.empty_like(x)


class _EmptyThenFilled(torch.nn.Module):
    def forward(self, x):
        return torch.empty_like(x).fill_(2.0)


@pytest.mark.parametrize(
    ("model", "verdict"),
    [
        (_FailsInEager(), Verdict("TORCH", "ValueError: no eager for you", "eager")),
        (
            _Random(),
            Verdict(
                "TORCH",
                "random: too few draws to judge the values (aten.rand_like drew 3 samples)",
                "compare",
            ),
        ),
        (
            _Empty(),
            Verdict(
                "TORCH",
                "undefined: torch eager returns uninitialized memory (aten.empty_like.default)",
                "eager",
            ),
        ),
        (_EmptyThenFilled(), Verdict("PASS", max_abs=0.0)),
    ],
)
def test_what_torch_cannot_do_is_kept_apart_from_harness_and_pass(model, verdict):
    checker = ModelChecker(cache_dir=None, isolation="none")
    try:
        assert sweep.check_entry(checker, model, [torch.ones(3)], "refbackend") == verdict
    finally:
        checker.close()


def test_a_model_torch_export_refuses_is_torchs(tmp_path):
    checker = ModelChecker(cache_dir=None, isolation="none", work_dir=tmp_path)
    v = sweep.check_entry(checker, _CannotExport(), [torch.ones(3)], "refbackend")
    assert (v.verdict, v.stage) == ("TORCH", "export")


def test_sweep_runs_in_worker_processes(tmp_path):
    out = tmp_path / "sweep"
    status, _, err = mlirpipe(
        "sweep", "--ops", "add", "--pipeline", "tosa", "-j", "2", "--out", out
    )
    assert (status, err) == (0, "")
    assert [r["verdict"] for r in lines(out / "results.jsonl")] == ["PASS"]


def test_a_worker_that_dies_outside_an_entry_stops_the_sweep_with_a_resume_hint(tmp_path):
    units = opinfo.select_units(["add"], ["float32"], 1, None)
    settings = sweep.SweepSettings(("no-such-pipeline",))
    with pytest.raises(sweep.MlirpipeError) as info:
        sweep.run_sweep(units, settings, tmp_path / "r.jsonl", jobs=2)
    assert info.value.format() == (
        "error: a sweep worker process died (not in a contained entry)\n"
        "  hint: the results so far are kept: run the same command again to resume"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--ops", "ad,cumsun"],
            "mlirpipe sweep: error: no OpInfo named 'ad'\n  hint: did you mean 'add' or ",
        ),
        (
            ["--dtypes", "float33"],
            "mlirpipe sweep: error: unknown dtype 'float33'\n  hint: a torch",
        ),
        (["--jobs", "0"], "mlirpipe sweep: error: --jobs must be at least 1 (got 0)\n"),
        (
            ["--pipeline", "nope"],
            "mlirpipe sweep: error: --pipeline: unknown pipeline 'nope'\n"
            "  hint: known pipelines: onnx-linalg, ",
        ),
        (
            ["--redo", "HARNESS,FAIL"],
            "mlirpipe sweep: error: --redo takes verdicts, not 'FAIL'\n"
            "  hint: one or more of PASS, MISMATCH, NOT-LOWERED, CRASH, TORCH, HARNESS,"
            " comma-separated\n",
        ),
    ],
)
def test_bad_sweep_arguments_are_refused_before_anything_runs(tmp_path, argv, message):
    status, _, err = mlirpipe("sweep", "--out", tmp_path / "o", "--ops", "add", *argv)
    assert status == 2
    assert err.startswith(message)
    assert not (tmp_path / "o").exists()


def test_an_out_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "o").write_text("not a folder")
    status, _, err = mlirpipe("sweep", "--out", tmp_path / "o", "--ops", "add")
    assert (status, err) == (
        2,
        f"mlirpipe sweep: error: --out {tmp_path / 'o'} is a file; the sweep writes a folder of "
        "results there\n  hint: name a folder (new, or one a sweep wrote, to resume it)\n",
    )


CATALOGUE = "torch.testing._internal.common_methods_invocations"


def _catalogue_needing(name: str) -> types.ModuleType:
    """A stand-in for torch's catalogue module whose op_db import fails for want of `name`."""
    module = types.ModuleType(CATALOGUE)

    def missing(attribute: str):
        raise ModuleNotFoundError(f"No module named '{name}'", name=name)

    module.__getattr__ = missing  # the lazy import inside the catalogue fails
    return module


def test_without_expecttest_the_catalogue_says_to_install_expecttest(monkeypatch):
    monkeypatch.setitem(sys.modules, CATALOGUE, _catalogue_needing("expecttest"))
    with pytest.raises(sweep.MlirpipeError) as info:
        opinfo.op_db()
    assert info.value.format() == (
        "error: torch's OpInfo catalogue cannot be imported: No module named 'expecttest'\n"
        "  hint: it needs the 'expecttest' package: pip install expecttest "
        "(or pip install -e '.[all]')"
    )


def test_without_torch_the_catalogue_says_to_install_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, CATALOGUE, raising=False)
    with pytest.raises(sweep.MlirpipeError) as info:
        opinfo.op_db()
    assert info.value.format() == (
        "error: torch's OpInfo catalogue cannot be imported: import of torch halted; None in "
        "sys.modules\n  hint: it needs torch: pip install torch (or pip install -e '.[all]')"
    )


def test_mlirpipe_sweep_without_torch_says_to_install_torch(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, CATALOGUE, raising=False)
    status, out, err = mlirpipe("sweep", "--ops", "add", "--out", tmp_path / "o")
    assert (status, out) == (1, "")
    assert err.startswith("error: torch's OpInfo catalogue cannot be imported: ")
    assert err.endswith(
        "\n  hint: it needs torch: pip install torch (or pip install -e '.[all]')\n"
    )


def test_a_torch_without_the_catalogue_module_says_what_the_catalogue_needs(monkeypatch):
    monkeypatch.setitem(sys.modules, CATALOGUE, None)
    with pytest.raises(sweep.MlirpipeError) as info:
        opinfo.op_db()
    assert info.value.format() == (
        f"error: torch's OpInfo catalogue cannot be imported: import of {CATALOGUE} halted; "
        "None in sys.modules\n  hint: it needs torch with its testing modules and the "
        "'expecttest' package: pip install torch expecttest (or pip install -e '.[all]')"
    )


class _SampledAddmm(torch.nn.Module):
    def forward(self, s, a, b):
        return torch.sparse.sampled_addmm(s, a, b)


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_a_sparse_model_the_compiler_refuses_is_not_lowered_not_harness(tmp_path):
    checker = ModelChecker(cache_dir=None, isolation="none", work_dir=tmp_path)
    sparse = torch.eye(2).to_sparse_csr()
    try:
        v = sweep.check_entry(
            checker, _SampledAddmm(), [sparse, torch.ones(2, 2), torch.ones(2, 2)], "tosa"
        )
    finally:
        checker.close()
    assert (v.verdict, v.stage, v.pass_name) == (
        "NOT-LOWERED",
        "import",
        "torch-backend-to-tosa-backend-pipeline",
    )
    assert "torch.aten.sparse_sampled_addmm" in v.detail


def test_a_sparse_model_the_compiler_takes_is_the_harness_limit(tmp_path):
    class Compiles:
        def compile(self, *args, **kwargs):
            return None

    refused = BoundaryError(Problem("a sparse_csr tensor cannot cross to compiled code"))
    v = sweep._beyond_the_boundary(Compiles(), None, [], "tosa", refused)
    assert v == Verdict("HARNESS", "a sparse_csr tensor cannot cross to compiled code")


class _Chalf(torch.nn.Module):
    def forward(self, x):
        return x.chalf()


def test_a_result_numpy_cannot_hold_is_not_lowered_when_the_compiler_refuses_it(tmp_path):
    checker = ModelChecker(cache_dir=None, isolation="none", work_dir=tmp_path)
    try:
        v = sweep.check_entry(checker, _Chalf(), [torch.ones(3)], "tosa")
    finally:
        checker.close()
    assert (v.verdict, v.stage) == ("NOT-LOWERED", "import")
    assert "complex<f16>" in v.detail


def test_redo_checks_again_the_entries_with_those_verdicts(tmp_path):
    path = tmp_path / "r.jsonl"
    old = {"op": "add", "dtype": "float32", "sample": 0, "pipeline": "tosa", "verdict": "HARNESS"}
    path.write_text(json.dumps(old) + "\n")
    units = opinfo.select_units(["add"], ["float32"], 1, None)
    settings = sweep.SweepSettings(("tosa",), work_dir=str(tmp_path / "work"))
    assert sweep.run_sweep(units, settings, path, redo=frozenset({"MISMATCH"})) == 0
    assert sweep.run_sweep(units, settings, path, redo=frozenset({"HARNESS"})) == 1
    assert [r.verdict for r in sweep.read_results(path).values()] == ["PASS"]


def test_samples_are_made_without_torchs_beta_notes():
    info = opinfo.find_op("sparse.sampled_addmm")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        (sample,) = opinfo.samples_of(info, "float32", 1)
    assert sample.input.layout == torch.sparse_csr
    assert [str(w.message) for w in seen] == []


class _RandomMean(torch.nn.Module):
    def forward(self, x):
        return torch.rand_like(x).mean()


def test_a_random_op_with_enough_draws_is_judged_by_the_sample_rule():
    checker = ModelChecker(cache_dir=None, isolation="none")
    try:
        v = sweep.check_entry(checker, _RandomMean(), [torch.ones(64, 64)], "refbackend")
    finally:
        checker.close()
    assert v.verdict == "PASS"
