"""The level of an input told from its ops, for hints about IR given to the wrong pipeline."""

from __future__ import annotations

import pytest

from pytest_mlirpipe.lowering.ir_level import input_level
from pytest_mlirpipe.model import IRLevel


@pytest.mark.parametrize(
    ("text", "level", "op", "line"),
    [
        ('\n%0 = torch.operator "onnx.Add"(%a, %b)', IRLevel.ONNX, 'torch.operator "onnx.Add', 2),
        ("%0 = torch.aten.relu %a", IRLevel.TORCH, "torch.aten.relu", 1),
        ("%0 = torch.constant.int 1", IRLevel.TORCH, "torch.constant.int", 1),
        ("\n\n%0 = tosa.add %a, %b", IRLevel.TOSA, "tosa.add", 3),
        ("llvm.func @f()", IRLevel.LLVM, "llvm.func", 1),
    ],
)
def test_an_input_s_level_is_told_by_its_first_marker_op(text, level, op, line):
    seen = input_level(text)
    assert seen is not None
    assert (seen.level, seen.op, seen.line) == (level, op, line)


def test_linalg_on_tensors_input_has_no_marker():
    assert input_level("%0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>)") is None
