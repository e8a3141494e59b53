"""lit and pytest give every generated RUN/CHECK file the same verdict, in every isolation
mode and under xdist (a short budget here; `python bench/parity.py` runs a long one)."""

from __future__ import annotations

import shutil

from hypothesis import HealthCheck, Phase, given, settings
from parity import (
    ADD,
    CANONICALIZE,
    VERIFY_MET,
    VERIFY_UNMET,
    GeneratedFile,
    ParityResult,
    compare_runners,
    generated_suite,
)


@settings(
    max_examples=3,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # a failing suite is printed whole, not shrunk
    suppress_health_check=list(HealthCheck),
)
@given(files=generated_suite(14, min_size=1))
def test_generated_files_get_lits_verdict_in_every_mode(files, tmp_path_factory):
    folder = tmp_path_factory.mktemp("parity")
    try:
        result = compare_runners(folder / "suite", files)
        disagreements = result.disagreements()
        texts = {f.name: f.text for f in files}
        shown = [f"{d}\n{texts[d.split(':')[0]]}" for d in disagreements]
        assert not disagreements, "verdicts differ:\n" + "\n".join(shown)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


VERIFY = f"mlirpipe-opt %s -verify-diagnostics --split-input-file {CANONICALIZE}"
FORBID_ADD = "--pass-pipeline='builtin.module(mlirpipe-forbid-ops{ops=arith.addf})'"
# name: (text, lit's verdict)
VERIFY_FILES = {
    "met.mlir": (f"// RUN: {VERIFY} | FileCheck %s\n// CHECK: @add\n{VERIFY_MET}", "PASS"),
    "unmet.mlir": (f"// RUN: {VERIFY}\n{VERIFY_UNMET}", "FAIL"),
    "unmet-not.mlir": (
        f"// RUN: not {VERIFY} 2>&1 | FileCheck %s\n// CHECK: was not produced\n{VERIFY_UNMET}",
        "PASS",
    ),
    "unmet-wrong-check.mlir": (
        f"// RUN: not {VERIFY} 2>&1 | FileCheck %s\n// CHECK: arith.subf\n{VERIFY_UNMET}",
        "FAIL",
    ),
    "pass-error.mlir": (
        f"// RUN: mlirpipe-opt %s -verify-diagnostics {FORBID_ADD}\n"
        + ADD.replace("tensor<4xf32>\n", "tensor<4xf32> // expected-error {{forbidden}}\n", 1),
        "PASS",
    ),
    "only-expected.mlir": (
        f"// RUN: mlirpipe-opt %s -verify-diagnostics=only-expected {FORBID_ADD}\n{ADD}",
        "PASS",
    ),
}


def test_verify_diagnostics_files_get_lits_verdict_in_every_mode(tmp_path):
    files = [GeneratedFile(name, text) for name, (text, _) in VERIFY_FILES.items()]
    result = compare_runners(tmp_path, files)
    assert result.lit == {name: verdict for name, (_, verdict) in VERIFY_FILES.items()}
    assert result.disagreements() == []


def test_a_disagreement_is_reported_with_the_file_and_both_verdicts():
    result = ParityResult(1, {"a.mlir": "PASS"}, {"fork": {"a.mlir": "failed"}})
    assert result.disagreements() == ["a.mlir: lit PASS, pytest (fork) failed"]


def test_a_file_pytest_never_reported_is_a_disagreement():
    result = ParityResult(1, {"a.mlir": "UNSUPPORTED"}, {"none": {}})
    assert result.disagreements() == ["a.mlir: lit UNSUPPORTED, pytest (none) missing"]
