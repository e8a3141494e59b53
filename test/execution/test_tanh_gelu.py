"""The tanh GELU (GPT-2's) gives torch's results: the torch import writes it out with torch's
constant sqrt(2 / pi), where torch-mlir's lowering to linalg multiplies by 0.797724; an ONNX
Gelu(approximate="tanh") is written out by the pipelines (mlirpipe-decompose-tanh-gelu)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.frontends import import_torch
from pytest_mlirpipe.execution.results.compare import Rule

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import networks

F = torch.nn.functional
PIPELINES = ["refbackend", "refbackend-vectorized", "tosa"]
# refbackend: the ONNX import to linalg-on-tensors (onnx_model.py) before the pipeline
ONNX_PIPELINES = ["onnx-linalg", "onnx-linalg-vectorized", "refbackend"]


class TanhGelu(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


@pytest.fixture(scope="module")
def checker():
    c = ModelChecker(cache_dir=None)
    yield c
    c.close()


def randn(*shape: int, scale: float = 1.0) -> torch.Tensor:
    return scale * torch.randn(shape, generator=torch.Generator().manual_seed(0))


def onnx_tanh_gelu(rows: int, columns: int, dtype: torch.dtype) -> Any:
    """An ONNX model of one Gelu(approximate="tanh") node (opset 20, where Gelu appeared)."""
    from onnx import TensorProto, helper

    kind = {torch.float32: TensorProto.FLOAT, torch.float64: TensorProto.DOUBLE}[dtype]
    graph = helper.make_graph(
        [helper.make_node("Gelu", ["X"], ["Y"], approximate="tanh")],
        "tanh_gelu",
        [helper.make_tensor_value_info("X", kind, [rows, columns])],
        [helper.make_tensor_value_info("Y", kind, [rows, columns])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


@pytest.mark.parametrize("to", ["torch", "linalg"])
def test_the_tanh_gelu_is_imported_with_torchs_constant(to: str) -> None:
    text = import_torch(TanhGelu(), [randn(4, 8)], to)
    assert "torch.aten.gelu" not in text
    assert f"{math.sqrt(2.0 / math.pi):.12f}"[:12] in text
    assert "0.797724" not in text and "7.977240e-01" not in text


def test_the_erf_gelu_is_left_to_torch_mlir() -> None:
    assert "torch.aten.gelu" in import_torch(torch.nn.GELU(), [randn(4, 8)], "torch")


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_tanh_gelu_matches_torch_and_float64_by_the_default_verdict(
    checker, pipeline: str
) -> None:
    (outcome,) = checker.check(TanhGelu(), randn(16, 64, scale=4.0), pipelines=[pipeline])
    (result,) = outcome.comparison.results
    assert outcome.verdict == "PASS" and result.rule == Rule.SCALED and result.total == 1024
    # against the float64 run: no further off than torch's own f32 (the same formula)
    assert result.native_error <= 2 * result.torch_error


@pytest.mark.parametrize("pipeline", ONNX_PIPELINES)
def test_an_onnx_tanh_gelu_matches_onnxs_reference_evaluator_by_the_default_verdict(
    checker, pipeline: str
) -> None:
    model = onnx_tanh_gelu(16, 64, torch.float32)
    (outcome,) = checker.check(model, randn(16, 64, scale=4.0), pipelines=[pipeline])
    (result,) = outcome.comparison.results
    # no float64 run of an ONNX model: the float32 pair (the constant 0.797724 was off by 5e-5)
    assert outcome.verdict == "PASS" and result.rule == Rule.PER_DTYPE and result.total == 1024


@pytest.mark.parametrize("pipeline", ONNX_PIPELINES)
def test_an_onnx_tanh_gelu_matches_torch_and_float64_by_the_default_verdict(
    checker, pipeline: str
) -> None:
    model = onnx_tanh_gelu(16, 64, torch.float32)
    x = randn(16, 64, scale=4.0)
    (outcome,) = checker.check(model, x, pipelines=[pipeline], reference=TanhGelu())
    (result,) = outcome.comparison.results
    assert outcome.verdict == "PASS" and result.rule == Rule.SCALED and result.total == 1024
    assert result.native_error <= 2 * result.torch_error


@pytest.mark.parametrize("pipeline", ONNX_PIPELINES)
def test_an_onnx_tanh_gelu_of_doubles_matches_torchs_by_the_default_verdict(
    checker, pipeline: str
) -> None:
    # against torch, not ONNX's evaluator: the function body of ONNX's Gelu holds 2 / pi and
    # 0.044715 as float32 constants, so its doubles are off by up to 6e-9 here
    model = onnx_tanh_gelu(16, 64, torch.float64)
    x = randn(16, 64, scale=4.0).double()
    (outcome,) = checker.check(model, x, pipelines=[pipeline], reference=TanhGelu())
    (result,) = outcome.comparison.results
    assert outcome.verdict == "PASS" and result.rule == Rule.SCALED and result.total == 1024
    assert (result.rtol, result.atol) == (1e-9, 1e-12)  # the float64 pair


@pytest.mark.parametrize(
    "make", [lambda: networks.Gpt2Block(32, 4), lambda: networks.bert_layer(32, 4, 64)],
    ids=["gpt2-block", "bert-layer"],
)  # fmt: skip
def test_a_small_transformer_block_of_bench_networks_matches_torch(checker, make) -> None:
    (outcome,) = checker.check(make(), randn(1, 16, 32), pipelines=["refbackend-vectorized"])
    (result,) = outcome.comparison.results
    assert outcome.verdict == "PASS" and result.rule == Rule.SCALED and result.total == 512
