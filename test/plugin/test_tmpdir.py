"""A session leaves $TMPDIR as it found it: repro files, AOT builds and torch-mlir's own dump
of a failing lowering go under each test's output folder (`Output/`, `tmp_path`); torch's cache
goes to a folder of the session's, removed at its end. A lit suite's tests get lit's own
temporary folder (`lit-tmp-*`, unless $LIT_PRESERVES_TMP), removed with what they left."""

from __future__ import annotations

import os
from pathlib import Path

import lit.llvm
import pytest
from litrun import lit_verdicts
from suite_kinds import KINDS, build_suite

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


# mktemp makes a file in $TMPDIR and prints its path: lit gives its tests a folder of its own,
# lit-tmp-*, and removes it with what they left there when it ends.
MKTEMP = "// RUN: mktemp | FileCheck %s\n// CHECK: {{.*}}/lit-tmp-{{[^/]*}}/tmp.\n"


@pytest.fixture
def clean_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "private-tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.delenv("LIT_PRESERVES_TMP", raising=False)
    monkeypatch.setattr(lit.llvm, "llvm_config", None)  # init's suite sets it up again
    return folder


@pytest.mark.parametrize("kind", KINDS)
def test_lit_s_own_tmpdir_is_the_tests_and_goes_with_what_they_left(
    pytester: pytest.Pytester, clean_tmpdir: Path, kind: str
) -> None:
    build_suite(pytester.path, kind, {"mktemp.mlir": MKTEMP})

    codes, output = lit_verdicts(pytester.path, "test")
    assert codes == {"mktemp.mlir": "PASS"}, output
    assert list(clean_tmpdir.iterdir()) == []
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test")
    result.assert_outcomes(passed=1)
    assert list(clean_tmpdir.iterdir()) == []


@pytest.mark.parametrize("args", [["-n", "2"], ["--mlirpipe-jobs=2"]], ids=["xdist", "jobs"])
def test_each_worker_s_tests_get_lit_s_own_tmpdir(
    pytester: pytest.Pytester, clean_tmpdir: Path, args: list[str]
) -> None:
    files = {f"mktemp{i}.mlir": MKTEMP for i in range(4)}
    build_suite(pytester.path, "plain", files)

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, "test")
    result.assert_outcomes(passed=4)
    assert list(clean_tmpdir.iterdir()) == []


def test_lit_preserves_tmp_keeps_tmpdir_for_the_tests_as_lit_does(
    pytester: pytest.Pytester, clean_tmpdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIT_PRESERVES_TMP", "1")
    build_suite(pytester.path, "plain", {"mktemp.mlir": MKTEMP})

    codes, output = lit_verdicts(pytester.path, "test")
    assert codes == {"mktemp.mlir": "FAIL"}, output
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test")
    result.assert_outcomes(failed=1)
    assert len([p for p in clean_tmpdir.iterdir() if p.name.startswith("tmp.")]) == 2
