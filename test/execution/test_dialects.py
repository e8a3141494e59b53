"""Every dialect torch-mlir emits parses where the harness and the tools parse MLIR."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_mlirpipe.cli.main import run as mlirpipe
from pytest_mlirpipe.mlir_env import new_context
from pytest_mlirpipe.tools.opt import run as mlirpipe_opt

SCAN_MODEL = (
    "import torch\n\n"
    "class Scan(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return torch.cumsum(x, 0), torch.sort(x, dim=-1)[0], torch.topk(x, 2)[0]\n"
)


@pytest.mark.parametrize("dialect", ["torch", "torch_c", "tm_tensor", "stablehlo", "chlo"])
def test_a_new_context_knows_every_dialect_torch_mlir_emits(dialect: str) -> None:
    assert new_context().get_dialect_descriptor(dialect).namespace == dialect


def test_imported_tm_tensor_ops_pipe_into_mlirpipe_opt_refbackend(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SCAN_MODEL)
    imported, err = io.StringIO(), io.StringIO()
    argv = ["import", f"{tmp_path}/m.py::Scan", "--to", "linalg", "--inputs", "4x5xf32"]
    assert mlirpipe(argv, io.StringIO(), imported, err) == 0, err.getvalue()
    assert "tm_tensor.scan" in imported.getvalue() and "tm_tensor.sort" in imported.getvalue()
    lowered, err = io.StringIO(), io.StringIO()
    code = mlirpipe_opt(
        ["--pipeline", "refbackend"], io.StringIO(imported.getvalue()), lowered, err
    )
    assert code == 0, err.getvalue()
    assert "llvm.func @forward" in lowered.getvalue() and "tm_tensor" not in lowered.getvalue()
