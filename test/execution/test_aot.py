"""Ahead-of-time: a shared library and a C header, called from Python and from a C program."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from cases import CASES, Addmm, Reductions, mlp

PIPELINES = ["refbackend", "refbackend-dps", "tosa"]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_aot_library_matches_torch_for_every_abi(mlirpipe, pipeline: str) -> None:
    x = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    (outcome,) = mlirpipe.check(Reductions(), x, pipelines=[pipeline], mode="aot")
    assert outcome.mode == "aot" and outcome.verdict == "PASS"


# Each type case once per shim: the callback ABI's copy-out and destination passing.
TYPE_CASES = [
    ("scan-sort-topk", "refbackend"),
    ("complex", "refbackend"),
    ("complex", "refbackend-dps"),
    ("item-results", "refbackend"),
    ("item-results", "refbackend-dps"),
    ("uint8", "refbackend-dps"),
    ("f16-bf16", "refbackend-dps"),
    ("complex32", "refbackend-dps"),
    ("complex32-in", "refbackend-dps"),
]


@pytest.mark.parametrize(("name", "pipeline"), TYPE_CASES)
@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_aot_library_marshals_each_element_type(mlirpipe, name: str, pipeline: str) -> None:
    case = next(c for c in CASES if c.name == name)
    (outcome,) = mlirpipe.check(
        case.model(),
        *case.inputs(torch.Generator().manual_seed(0)),
        pipelines=[pipeline],
        mode="aot",
        rtol=case.rtol,
        atol=case.atol,
        name=name,
    )
    assert outcome.mode == "aot" and outcome.verdict == "PASS"


def test_header_declares_complex_memrefs_and_scalar_results(mlirpipe) -> None:
    case = next(c for c in CASES if c.name == "complex")
    compiled = mlirpipe.compile(
        case.model(), *case.inputs(torch.Generator()), pipeline="refbackend-dps", mode="aot"
    )
    header = compiled.header.read_text()
    assert "float _Complex *aligned;" in header and "double _Complex *aligned;" in header
    assert "const mlirpipe_memref_2d_c64 *z, const mlirpipe_memref_1d_c128 *w," in header


C_MAIN = r"""
#include <stdio.h>
#include "mlirpipe_forward.h"

int main(void) {
  float x[8 * 32], y[8 * 10];
  for (int i = 0; i < 8 * 32; ++i) x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  mlirpipe_memref_2d_f32 in = {x, x, 0, {8, 32}, {32, 1}};
  mlirpipe_memref_2d_f32 out = {y, y, 0, {8, 10}, {10, 1}};
  int status = mlirpipe_forward(&in, &out);
  for (int i = 0; i < 8 * 10; ++i) printf("%.9g\n", y[i]);
  return status;
}
"""


@pytest.mark.parametrize("pipeline", ["refbackend", "refbackend-dps"])
def test_c_program_calls_the_model_through_the_header(mlirpipe, tmp_path: Path, pipeline) -> None:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    model = mlp()
    x = ((torch.arange(8 * 32) * 7) % 13).float().reshape(8, 32) / 13.0 - 0.5
    compiled = mlirpipe.compile(model, x, pipeline=pipeline, mode="aot")
    assert compiled.header is not None and compiled.library is not None
    header = compiled.header.read_text()
    assert "int mlirpipe_forward(const mlirpipe_memref_2d_f32 *input," in header
    (tmp_path / "main.c").write_text(C_MAIN)
    shutil.copy(compiled.header, tmp_path / "mlirpipe_forward.h")
    exe = tmp_path / "main"
    subprocess.run(
        [cc, str(tmp_path / "main.c"), str(compiled.library), "-o", str(exe), f"-I{tmp_path}"],
        check=True,
    )
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    got = np.array([float(v) for v in run.stdout.split()], dtype=np.float32).reshape(8, 10)
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_aot_callable_does_not_leak_result_buffers(mlirpipe) -> None:
    a, b, bias = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64)
    compiled = mlirpipe.compile(Addmm(), bias, a, b, pipeline="refbackend", mode="jit")
    call = compiled.function.bind(bias, a, b)
    for _ in range(200):  # let malloc settle
        call()
    ctypes.CDLL(None).malloc_trim(0)  # free memory left resident would hide a leak
    before = _rss_kib()
    for _ in range(1000):
        call()
    assert _rss_kib() - before < 2048  # 1000 leaked 16 KiB results would be 16 MiB
    np.testing.assert_allclose(
        compiled.function.outputs()[0], torch.addmm(bias, a, b).numpy(), rtol=1e-4, atol=1e-4
    )


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")
