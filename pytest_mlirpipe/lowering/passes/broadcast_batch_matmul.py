"""`mlirpipe-flatten-broadcast-batch-matmul`: a batch_matmul of one B broadcast is one matmul.

A linear layer on a 3-d input may come out of the import as a `linalg.batch_matmul` whose B is
its weight broadcast along the batch by a `linalg.generic` (a multi-head attention's input
projection on (sequence, batch, width) does): at every call that generic copies the weight once
per batch entry (128 copies of 256 x 768 floats, 100 MB, for a sequence of 128), and each
entry's product is a small matmul (M the batch). The batch_matmul becomes a `linalg.matmul` of
A's batches stacked (`collapse_shape` to (batch x M) x K, the same memory) with the weight itself,
its result expanded back; the broadcast is then dead. C filled by a `linalg.fill` used only here
becomes a fill of the 2-d result. Other batch_matmuls (other maps, dynamic shapes, B not such a
broadcast) are left as they are.
"""

from __future__ import annotations

from ..op_query import all_ops
from .blas.matching import Refused, operand_dims
from .generics import reassociation
from .registry import PassBody, register

PASS = "mlirpipe-flatten-broadcast-batch-matmul"


@register(
    PASS,
    "Rewrite each linalg.batch_matmul of static shapes whose B is a 2-d tensor broadcast along "
    "the batch (a linalg.generic that only copies it) as a linalg.matmul of A's batches stacked "
    "with that tensor, the result expanded back to 3-d",
)
def flatten_broadcast_batch_matmul(options: dict[str, str]) -> PassBody:
    return lambda op, pass_: _rewrite_each(op, _broadcast_source)


def _rewrite_each(op, b_of) -> None:
    """Each linalg.batch_matmul under `op` as a matmul of A's batches stacked with `b_of`(it)
    (a 2-d B), unless `b_of` refuses it."""
    from ...mlir_env import ir

    for bmm in [o for o in all_ops(op) if o.name == "linalg.batch_matmul"]:
        try:
            b = b_of(bmm, ir)
        except Refused:
            continue
        _rewrite(bmm, b, ir)


def _static_operands(bmm, ir) -> list:
    """The operands of `bmm`, a batch_matmul of static shapes on tensors; else Refused."""
    values = list(bmm.operands)
    if len(values) != 3 or len(bmm.results) != 1:
        raise Refused("not a batch_matmul on tensors")
    if not all(isinstance(v.type, ir.RankedTensorType) for v in values):
        raise Refused("not on tensors")
    if any(not ir.RankedTensorType(v.type).has_static_shape for v in values):
        raise Refused("dynamic shapes")
    if operand_dims(bmm) != [(0, 1, 3), (0, 3, 2), (0, 1, 2)]:
        raise Refused("not a batch_matmul's maps")
    return values


def _broadcast_source(bmm, ir):
    """The 2-d (k, n) tensor B of `bmm` broadcasts along the batch; else Refused."""
    values = _static_operands(bmm, ir)
    generic = values[1].owner
    if getattr(generic, "name", None) != "linalg.generic" or len(generic.operands) != 2:
        raise Refused("B is not a linalg.generic of one input")
    if operand_dims(generic) != [(1, 2), (0, 1, 2)]:
        raise Refused("B is not a 2-d tensor broadcast along the batch")
    block = generic.regions[0].blocks[0]
    body = list(block.operations)
    if [o.name for o in body] != ["linalg.yield"] or body[0].operands[0] != block.arguments[0]:
        raise Refused("B's generic does more than copy its input")
    return generic.operands[0]


def _rewrite(bmm, weight, ir) -> None:
    from torch_mlir.dialects import linalg, tensor

    a, broadcast, c = bmm.operands
    batch, m, k = ir.RankedTensorType(a.type).shape
    n = ir.RankedTensorType(c.type).shape[2]
    # A's element type and C's may differ (products of bf16 accumulated in f32)
    a_element = ir.RankedTensorType(a.type).element_type
    c_element = ir.RankedTensorType(c.type).element_type
    stacked = reassociation([[0, 1], [2]], ir)
    with ir.InsertionPoint(bmm), bmm.location:
        a_type = ir.RankedTensorType.get([batch * m, k], a_element)
        a2 = tensor.collapse_shape(a_type, a, stacked)
        c_type = ir.RankedTensorType.get([batch * m, n], c_element)
        fill = c.owner
        if getattr(fill, "name", None) == "linalg.fill" and len(list(c.uses)) == 1:
            c2 = linalg.fill(
                fill.operands[0], outs=[tensor.EmptyOp([batch * m, n], c_element).result]
            )
        else:
            c2 = tensor.collapse_shape(c_type, c, stacked)
        # The maps written out: the pack pass after this one reads them (a matmul built here
        # has no indexing_maps attribute of its own until it is printed and parsed again).
        d = [ir.AffineDimExpr.get(i) for i in range(3)]
        maps = [ir.AffineMap.get(3, 0, [d[i], d[j]]) for i, j in ((0, 2), (2, 1), (0, 1))]
        product = linalg.matmul(a2, weight, outs=[c2], indexing_maps=maps)
        result = tensor.expand_shape(c.type, product, stacked, [], [batch, m, n])
    bmm.results[0].replace_all_uses_with(result)
    bmm.erase()
    for dead in (broadcast.owner, c.owner):  # the copies of B and the 3-d fill, when unused
        kind = getattr(dead, "name", None)
        if kind in ("linalg.generic", "linalg.fill") and not list(dead.results[0].uses):
            dead.erase()


UNIT_BATCH_PASS = "mlirpipe-unit-batch-matmul"


@register(
    UNIT_BATCH_PASS,
    "Rewrite each linalg.batch_matmul of static shapes and a batch of 1 (a TOSA matmul's) as a "
    "linalg.matmul of its operands collapsed to 2-d, the result expanded back to 3-d; other "
    "ops (convolutions among them) are left named as they are",
)
def unit_batch_matmul(options: dict[str, str]) -> PassBody:
    return lambda op, pass_: _rewrite_each(op, _unit_batch_b)


def _unit_batch_b(bmm, ir):
    """B of `bmm` collapsed to 2-d (k, n), when its batch is 1; else Refused."""
    from torch_mlir.dialects import tensor

    values = _static_operands(bmm, ir)
    kinds = [ir.RankedTensorType(v.type) for v in values]
    if kinds[0].shape[0] != 1:
        raise Refused("a batch other than 1")
    _, k, n = kinds[1].shape
    groups = reassociation([[0, 1], [2]], ir)
    with ir.InsertionPoint(bmm), bmm.location:
        b_type = ir.RankedTensorType.get([k, n], kinds[1].element_type)
        return tensor.collapse_shape(b_type, values[1], groups)
