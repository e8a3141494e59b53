"""Files on which pytest once disagreed with lit, each run by lit and by pytest in every
isolation mode and under xdist: the verdicts agree, and are the ones lit gives."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from parity import ADD, GeneratedFile, compare_runners, junit_outcomes, write_suite

HERE = Path(__file__).parent

MM_F32 = textwrap.dedent(
    """\
    func.func @mm(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4x4xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
      %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                         outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
      return %r : tensor<4x4xf32>
    }
    """
)
MM_I32 = MM_F32.replace("f32", "i32").replace("0.0 : i32", "0 : i32")
BLAS_DEBUG_PIPELINE = """\
[pipeline]
name = "blas-debug"
extends = "refbackend-blas"

[[stage]]
name = "matmul-to-blas"
replaces = "matmul-to-blas"
reason = "the same pass, saying why it leaves an op alone"
passes = ["mlirpipe-matmul-to-blas{debug=true}"]
"""
DEBUG_RUN = (
    "// RUN: mlirpipe-opt %s --pipelines-dir %S/pipelines --pipeline blas-debug "
    "--stop-after matmul-to-blas 2>&1 | FileCheck %s\n"
)
STOP_AT_BLAS = "mlirpipe-opt %s --pipeline refbackend-blas --stop-after matmul-to-blas"

# name -> (text, lit's verdict)
FILES: dict[str, tuple[str | bytes, str]] = {
    # C++ printing straight to the process's stderr (MLIR's print-op-stats).
    "cxx-stderr.mlir": (
        "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(print-op-stats)' 2>&1 "
        "| FileCheck %s\n// CHECK: Operations encountered\n// CHECK: arith.addf\n" + ADD,
        "PASS",
    ),
    # An exported variable reaches the second lowering, served from the stage-prefix cache.
    "export-between-runs.mlir": (
        f"// RUN: {STOP_AT_BLAS} | FileCheck %s --check-prefix=DEFAULT\n"
        "// RUN: export MLIRPIPE_BLAS_PREFIX=foo_\n"
        f"// RUN: {STOP_AT_BLAS} | FileCheck %s --check-prefix=FOO\n"
        "// DEFAULT: scipy_cblas_sgemm\n// FOO: foo_cblas_sgemm\n" + MM_F32,
        "PASS",
    ),
    # Two identical lowerings: the second is served from the cache and says its remark again.
    "remarks-twice.mlir": (DEBUG_RUN + DEBUG_RUN + "// CHECK: remark:\n" + MM_I32, "PASS"),
    # Passes on its second try.
    "retries.mlir": (
        "// ALLOW_RETRIES: 2\n// RUN: echo x >> %t.log\n// RUN: FileCheck %s --input-file %t.log\n"
        "// CHECK: x\n// CHECK-NEXT: x\n" + ADD,
        "FLAKYPASS",
    ),
    # Writes into a folder no RUN line made.
    "missing-folder.mlir": (
        "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(canonicalize)' > %t/sub/out\n"
        + ADD,
        "UNRESOLVED",
    ),
    # Redirects from a file no RUN line wrote.
    "missing-input.mlir": ("// RUN: FileCheck %s < %t.missing\n// CHECK: x\n" + ADD, "UNRESOLVED"),
    # Puts a command in the background, which lit's internal shell refuses.
    "background.mlir": ("// RUN: true\n// RUN: sleep 300 & true\n" + ADD, "UNRESOLVED"),
    # A check file that is not UTF-8.
    "not-utf8.mlir": (
        b"// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(canonicalize)' | FileCheck %s\n"
        b"// CHECK: arith.addf\n// caf\xe9\n" + ADD.encode(),
        "FAIL",
    ),
}


# Appends, then crashes in a test process (not in a fresh one): the file is run again, and
# that run must not see the first run's line. (`none` runs in the pytest process: a crash there
# ends the session, as documented.)
CRASH_AFTER_APPEND = (
    "// RUN: echo run >> %t.log\n"
    "// RUN: mlirpipe-opt %s --pass-pipeline='builtin.module(crash-in-process)'\n"
    "// RUN: FileCheck %s --input-file %t.log\n// CHECK: run\n// CHECK-NOT: run\n" + ADD
)


def test_each_divergence_gets_lits_verdict_in_every_mode(tmp_path):
    files = [GeneratedFile(name, text) for name, (text, _) in FILES.items()]
    files.append(GeneratedFile("pipelines/blas-debug.toml", BLAS_DEBUG_PIPELINE))
    result = compare_runners(tmp_path, files)
    assert result.lit == {name: code for name, (_, code) in FILES.items()}
    assert result.disagreements() == []


def test_a_rerun_after_a_crash_starts_from_the_files_the_first_run_found(tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "crash_passes")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    files = [GeneratedFile("crash-after-append.mlir", CRASH_AFTER_APPEND)]
    result = compare_runners(tmp_path, files, modes=("fork", "subprocess", "xdist"))
    assert result.lit == {"crash-after-append.mlir": "PASS"}
    assert result.disagreements() == []


def _pytest_output(suite: Path, mode: str, *extra: str) -> str:
    """What `pytest SUITE` in a process of its own prints, in isolation `mode`."""
    argv = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider"]
    argv += [f"--mlirpipe-isolation={mode}", *extra]
    return subprocess.run(argv, cwd=suite, capture_output=True, text=True, check=False).stdout


@pytest.mark.parametrize("mode", ["fork", "none", "subprocess"])
def test_bad_inputs_are_reported_in_a_few_located_lines_without_tracebacks(tmp_path, mode):
    names = ("missing-input.mlir", "not-utf8.mlir", "missing-folder.mlir")
    write_suite(tmp_path, [GeneratedFile(n, FILES[n][0]) for n in names])
    out = _pytest_output(tmp_path, mode)
    assert "missing-input.mlir: UNRESOLVED: lit's shell could not run the script" in out
    assert "missing-input.mlir:1: error: RUN line 1 could not run: FileNotFoundError" in out
    assert "which does not exist; write it in an earlier RUN line or fix its name" in out
    assert "missing-folder.mlir:1: error: RUN line 1 could not run: FileNotFoundError" in out
    assert "does not exist; create it in an earlier RUN line (mkdir -p) or fix the path" in out
    assert "(lit's traceback with -vv)" in out
    assert re.search(
        r"not-utf8\.mlir:3:7: error: the check file is not UTF-8 text \(byte 0xe9\); "
        r"FileCheck reads UTF-8",
        out,
    )
    assert "Traceback" not in out and "UnicodeDecodeError" not in out
    assert len(out.splitlines()) < 80, out


BACKGROUND_MARK = "9.25"  # an unusual `sleep` argument, to find the process if it ever started


def _sleeping_marked() -> list:
    import psutil

    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if proc.info["name"] == "sleep" and BACKGROUND_MARK in (proc.info["cmdline"] or []):
                found.append(proc)
    return found


@pytest.mark.parametrize("mode", ["fork", "none", "subprocess"])
def test_a_backgrounded_command_is_unresolved_with_lits_message_and_leaves_nothing_running(
    tmp_path, mode
):
    text = f"// RUN: true\n// RUN: sleep {BACKGROUND_MARK} & true\n// CHECK: x\n" + ADD
    write_suite(tmp_path, [GeneratedFile("background.mlir", text)])
    xml = tmp_path / "junit.xml"
    out = _pytest_output(tmp_path, mode, f"--junitxml={xml}")
    assert "background.mlir: UNRESOLVED: the test file is malformed" in out
    assert (
        "background.mlir:2: error: unsupported shell operator: '&' (lit's internal shell runs "
        "every command in the foreground)\n"
        f"  sleep {BACKGROUND_MARK} & true\n"
        "  hint: drop the '&'; to run one command after another, join them with && or ;"
    ) in out
    assert "Traceback" not in out and "AttributeError" not in out
    assert junit_outcomes(xml) == {"background.mlir": "UNRESOLVED"}
    assert _sleeping_marked() == []
