"""Shared libraries, repros and torch-mlir's own dump go to the caller's folder, not $TMPDIR."""

from __future__ import annotations

import os
import subprocess
import tempfile

import numpy as np
import pytest
import torch
from cli_run import MLIRPIPE, MODEL

from pytest_mlirpipe.errors import MlirpipeError
from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.frontends import import_torch
from pytest_mlirpipe.execution.workdir import TORCH_CACHE_VARIABLE, private_torch_cache

DOUBLE = """\
func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.add ins(%arg0, %arg0 : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
X = np.arange(4, dtype=np.float32)


def test_an_aot_build_goes_under_the_given_work_dir(tmp_path, tmpdir_):
    checker = ModelChecker(cache_dir=None)

    f = checker.compile(DOUBLE, X, mode="aot", work_dir=tmp_path / "work")

    assert f.library.parent.parent == tmp_path / "work"
    assert f.library.parent.name.startswith("aot-refbackend-")
    assert f.header.parent == f.library.parent
    assert f(X).tolist() == [0.0, 2.0, 4.0, 6.0]
    assert list(tmpdir_.iterdir()) == []


def test_without_a_work_dir_aot_builds_are_removed_when_the_checker_closes(tmpdir_):
    checker = ModelChecker(cache_dir=None, mode="aot")

    f = checker.compile(DOUBLE, X)
    outcomes = checker.check(DOUBLE, X, reference=lambda x: x + x)
    assert f.library.is_relative_to(tmpdir_) and f.library.is_file()
    checker.close()

    assert [o.verdict for o in outcomes] == ["PASS"]
    assert list(tmpdir_.iterdir()) == []


class _Bessel(torch.nn.Module):  # torch.special.i0: no lowering to linalg in torch-mlir
    def forward(self, x):
        return torch.special.i0(x)


def test_a_lowering_torch_mlir_cannot_do_leaves_no_dump_in_tmpdir(tmpdir_):
    with pytest.raises(MlirpipeError, match="could not be lowered to linalg-on-tensors"):
        import_torch(_Bessel(), [torch.ones(2)], "linalg")

    assert list(tmpdir_.iterdir()) == []  # no UnnammedModule.mlir
    assert tempfile.gettempdir() == str(tmpdir_)


def test_the_runtime_built_without_a_writable_cache_leaves_no_folder(
    tmp_path, tmpdir_, monkeypatch
):
    from pytest_mlirpipe.execution.native import runtime

    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("MLIRPIPE_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    runtime.runtime_library.cache_clear()
    try:
        lib = runtime.runtime_library()
        assert lib is not None and runtime.symbol_address(lib, "mlirpipe_taken") != 0
    finally:
        runtime.runtime_library.cache_clear()  # the next caller loads the cached one again

    assert list(tmpdir_.iterdir()) == []


def test_mlirpipe_run_leaves_no_torch_cache_in_tmpdir(tmp_path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    tmpdir = tmp_path / "t"
    tmpdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k != TORCH_CACHE_VARIABLE}
    run = subprocess.run(
        [*MLIRPIPE, "run", "model.py::MM", "--inputs", "4x4xf32,4x4xf32", "--no-time"],
        cwd=tmp_path,
        env={**env, "TMPDIR": str(tmpdir)},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "model.py::MM" in run.stdout and "PASS" in run.stdout
    assert os.listdir(tmpdir) == []


def test_a_torch_cache_folder_the_user_names_is_kept(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(TORCH_CACHE_VARIABLE, str(tmp_path / "mine"))
    with private_torch_cache():
        assert os.environ[TORCH_CACHE_VARIABLE] == str(tmp_path / "mine")
    assert os.environ[TORCH_CACHE_VARIABLE] == str(tmp_path / "mine")
