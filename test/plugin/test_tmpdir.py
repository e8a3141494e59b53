"""A session leaves $TMPDIR as it found it: repro files, AOT builds and torch-mlir's own dump
of a failing lowering go under each test's output folder (`Output/`, `tmp_path`); torch's cache
goes to a folder of the session's, removed at its end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from litrun import lit_verdicts

HERE = Path(__file__).parent  # crash_passes.py: a pass that aborts
ROOT = HERE.parent.parent  # this checkout's pytest_mlirpipe, in every process the test starts

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""
# `func.func(tosa-to-linalg)` fails on an op no lowering knows: a failing stage, with a repro.
UNLOWERABLE = """\
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tosa.custom %a {domain_name = "d", operator_name = "op", implementation_attrs = ""} \
: (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
TO_LINALG = "mlirpipe-opt %s --pass-pipeline 'builtin.module(func.func(tosa-to-linalg))'"
FILES = {
    # The failing stage's input IR lands beside the file's %t files, under lit and pytest.
    "repro-checked.mlir": f"// RUN: not {TO_LINALG} 2>&1 | filecheck %s\n"
    "// CHECK: reproduce with: mlirpipe-opt "
    "{{.*}}Output/repro-checked.mlir.repro/repro-checked.pass-pipeline.input.mlir\n" + UNLOWERABLE,
    "repro-fails.mlir": f"// RUN: {TO_LINALG} | filecheck %s\n// CHECK: linalg\n" + UNLOWERABLE,
    "crash.mlir": "// MLIRPIPE-EXPECT: crash\n"
    "// RUN: mlirpipe-opt %s --pass-pipeline 'builtin.module(crash-abort)' | filecheck %s\n"
    "// CHECK: arith.addf\n"
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = arith.addf %a, %a : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n",
}
MODELS = """\
import pytest
import torch


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Bessel(torch.nn.Module):  # torch.special.i0: no lowering to linalg in torch-mlir
    def forward(self, x):
        return torch.special.i0(x)


@pytest.mark.parametrize("mode", ["jit", "aot"])
def test_check(mlirpipe, mode):
    mlirpipe.check(AddOne(), torch.ones(4), pipelines=["refbackend", "tosa"], mode=mode)


def test_compile_aot_builds_under_tmp_path(mlirpipe, tmp_path):
    f = mlirpipe.compile(AddOne(), torch.ones(4), mode="aot")
    assert f.library.is_relative_to(tmp_path) and f.header.is_relative_to(tmp_path)
    assert f(torch.ones(4)).tolist() == [2.0] * 4


def test_a_lowering_torch_mlir_cannot_do(mlirpipe):
    with pytest.raises(pytest.fail.Exception, match="could not be lowered to linalg-on-tensors"):
        mlirpipe.check(Bessel(), torch.ones(2))
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), str(ROOT)]))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "crash_passes")
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    tests = pytester.mkdir("tests")
    for name, text in FILES.items():
        (tests / name).write_text(text)
    (tests / "test_models.py").write_text(MODELS)
    return pytester


@pytest.fixture
def private_tmpdir(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$TMPDIR of the processes the test starts, holding one file of its own; no
    $TORCHINDUCTOR_CACHE_DIR, so torch's cache folder is the run's to keep out of $TMPDIR."""
    folder = suite.path / "private-tmp"
    folder.mkdir()
    (folder / "already-here.txt").write_text("not ours\n")
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    return folder


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_pytest_session_leaves_tmpdir_as_it_found_it(suite, private_tmpdir, workers):
    # pytester puts the session's --basetemp in its own folder, outside the private $TMPDIR.
    result = suite.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mlirpipe-no-cache", *workers, "tests"
    )

    assert sorted(os.listdir(private_tmpdir)) == ["already-here.txt"]
    result.assert_outcomes(passed=5, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(
        ["*reproduce with: mlirpipe-opt */Output/repro-fails.mlir.repro/repro-fails.*.mlir*"]
    )
    (repro,) = suite.path.glob("build/**/Output/repro-fails.mlir.repro/*.input.mlir")
    assert repro.read_text() == FILES["repro-fails.mlir"]  # the input of the first stage


def test_a_lit_run_leaves_tmpdir_as_it_found_it(suite, private_tmpdir, monkeypatch):
    monkeypatch.setenv("LIT_PRESERVES_TMP", "1")  # else lit makes and removes its own $TMPDIR

    codes, _ = lit_verdicts(suite.path, "tests")

    assert sorted(os.listdir(private_tmpdir)) == ["already-here.txt"]
    assert codes == {
        "repro-checked.mlir": "PASS",
        "repro-fails.mlir": "FAIL",
        "crash.mlir": "XFAIL",
    }
    (repro,) = suite.path.glob("build/**/Output/repro-fails.mlir.repro/*.input.mlir")
    assert repro.read_text() == FILES["repro-fails.mlir"]  # the input of the first stage
