"""`mlirpipe-decompose-tanh-gelu`: the tanh GELU in torch ops, with torch's constant.

torch-mlir's lowering of `torch.aten.gelu %x, "tanh"` to linalg (convert-torch-to-linalg)
multiplies by 0.7977240352174656 where torch multiplies by sqrt(2 / pi) = 0.7978845608...:
results are off by up to 5e-5 (an ONNX `Gelu(approximate="tanh")` becomes that op, and so does
GPT-2's MLP imported to torch). torch-mlir's own decompositions (torch-decompose-complex-ops)
leave the op whole. Here each one of f32 or f64 becomes torch's formula in torch ops, as torch
computes it (aten/src/ATen/native/cpu/Activation.cpp): 0.5 x (1 + tanh(kBeta (x + kKappa x^3)))
with kBeta = sqrt(2) * (2 / sqrt(pi)) / 2, x^3 as x * x * x. The erf GELU ("none") is left to
torch-mlir, which lowers it right; so are 16-bit floats, whose rounding hides the constant's
error and which torch computes in f32 (op by op in 16 bits, the formula would be further off).
"""

from __future__ import annotations

import math
import re

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-decompose-tanh-gelu"

K_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
K_KAPPA = 0.044715
# a value tensor of f32 or f64, of any shape: `!torch.vtensor<[16,64],f32>`, `<*,f64>`
_DECOMPOSED = re.compile(r"!torch\.vtensor<.*,(f32|f64)>")


@register(
    PASS,
    'Replace each torch.aten.gelu of f32 or f64 whose approximate is "tanh" by torch\'s formula '
    "in torch ops, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); convert-torch-to-linalg "
    "would multiply by 0.797724 instead of sqrt(2 / pi)",
)
def decompose_tanh_gelu(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for gelu in [o for o in all_ops(op) if o.name == "torch.aten.gelu"]:
            if _is_tanh(gelu, ir) and _DECOMPOSED.fullmatch(str(gelu.results[0].type)):
                with ir.InsertionPoint(gelu), gelu.location:
                    result = _formula(gelu.operands[0], gelu.results[0].type)
                gelu.results[0].replace_all_uses_with(result)
                approximate = gelu.operands[1].owner
                gelu.erase()
                if not list(approximate.results[0].uses):
                    approximate.erase()

    return run


def _is_tanh(gelu, ir) -> bool:
    """Whether `gelu`'s approximate is the constant string "tanh"."""
    const = gelu.operands[1].owner
    if getattr(const, "name", None) != "torch.constant.str":
        return False  # a block argument, or a string computed at run time
    return ir.StringAttr(const.attributes["value"]).value == "tanh"


def _formula(x, kind):
    """0.5 x (1 + tanh(kBeta (x + kKappa x x x))) of the value tensor `x` of type `kind`, in
    torch's order of operations, at the current insertion point and location."""
    from torch_mlir.dialects import torch as t

    one = t.ConstantIntOp(1).result  # the alpha of aten.add

    def scalar(value: float):
        return t.ConstantFloatOp(value).result

    cube = t.AtenMulTensorOp(kind, t.AtenMulTensorOp(kind, x, x).result, x).result
    sum_ = t.AtenAddTensorOp(kind, x, t.AtenMulScalarOp(kind, cube, scalar(K_KAPPA)).result, one)
    inner = t.AtenMulScalarOp(kind, sum_.result, scalar(K_BETA)).result
    tanh = t.AtenTanhOp(kind, inner).result
    half_x = t.AtenMulScalarOp(kind, x, scalar(0.5)).result
    one_plus = t.AtenAddScalarOp(kind, tanh, scalar(1.0), one).result
    return t.AtenMulTensorOp(kind, half_x, one_plus).result
