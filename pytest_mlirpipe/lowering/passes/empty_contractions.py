"""`mlirpipe-fold-empty-contractions`: a matmul of no products is its initial result.

A `linalg.matmul` or `linalg.batch_matmul` on tensors of static shapes with a dimension of size
0 (K = 0: each element a sum of no products; M, N or the batch 0: a result of no elements)
computes its initial result C unchanged. It is replaced by C: tiling it crashes the transform
script that tiles every matmul (refbackend-vectorized's).
"""

from __future__ import annotations

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-fold-empty-contractions"
CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul")


@register(
    PASS,
    "Replace each linalg.matmul and linalg.batch_matmul on tensors of static shapes with a "
    "dimension of size 0 by its initial result (a sum of no products leaves it unchanged)",
)
def fold_empty_contractions(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for contraction in [o for o in all_ops(op) if o.name in CONTRACTIONS]:
            if _empty(contraction, ir):
                contraction.results[0].replace_all_uses_with(contraction.operands[2])
                contraction.erase()

    return run


def _empty(contraction, ir) -> bool:
    """Whether `contraction` (A, B, C on tensors of static shapes) has a dimension of size 0."""
    values = list(contraction.operands)
    if len(values) != 3 or len(contraction.results) != 1:
        return False
    if not all(isinstance(v.type, ir.RankedTensorType) for v in values):
        return False
    kinds = [ir.RankedTensorType(v.type) for v in values]
    return all(k.has_static_shape for k in kinds) and any(0 in k.shape for k in kinds)
