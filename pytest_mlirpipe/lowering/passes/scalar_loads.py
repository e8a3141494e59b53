"""`mlirpipe-scalarize-extracted-loads`: a vector read only for its elements, read per element.

The outer-product lowering of a matmul's register tile reads the tile's column of A as one
vector (`vector<6xf32>` for a strip of 6 rows) and extracts each element to broadcast it. LLVM
splits a load of 6 floats into loads of 4 and 2, broadcasts the 4 from memory but keeps the 2 in
a register, and with 12 accumulators and 2 vectors of B that register is one too many: an
accumulator is spilled to the stack in the k loop. Read as scalars, each element is broadcast
straight from memory (`vbroadcastss mem`) and takes no register of its own.
"""

from __future__ import annotations

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-scalarize-extracted-loads"


@register(
    PASS,
    "Replace each 1-D vector.load, or in-bounds unmasked vector.transfer_read along a "
    "memref's last dimension, of scalars, whose every use is a vector.extract of one element "
    "at a static position, by a memref.load of each element "
    "extracted (LLVM then broadcasts them from memory instead of holding the vector in a "
    "register)",
)
def scalarize_extracted_loads(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for read in [o for o in all_ops(op) if o.name in _READS]:
            found = _scalarizable(read, ir)
            if found is not None:
                source, indices = found
                _scalarize(read, source, indices, ir)

    return run


_READS = ("vector.load", "vector.transfer_read")


def _scalarizable(read, ir):
    """(memref, indices) of a read this pass rewrites, else None."""
    result = read.results[0]
    if not isinstance(result.type, ir.VectorType):
        return None
    vector = ir.VectorType(result.type)
    uses = [use.owner for use in result.uses]
    if (
        vector.rank != 1
        or not uses
        or any(not _extracts_one_element(use, vector.shape[0], ir) for use in uses)
    ):
        return None
    operands = list(read.operands)
    memory = operands[0].type
    if not isinstance(memory, ir.MemRefType) or ir.MemRefType(memory).element_type != (
        vector.element_type
    ):  # a tensor, or a memref of vectors
        return None
    if read.name == "vector.load":
        return operands[0], operands[1:]
    # transfer_read: source, indices..., padding[, mask]; in bounds, minor identity, no mask.
    rank = ir.MemRefType(memory).rank
    if len(operands) != rank + 2:  # a mask
        return None
    if "in_bounds" not in read.attributes:
        return None
    if not all(ir.BoolAttr(b).value for b in ir.ArrayAttr(read.attributes["in_bounds"])):
        return None
    perm = ir.AffineMapAttr(read.attributes["permutation_map"]).value
    if perm != ir.AffineMap.get_minor_identity(rank, 1):
        return None
    return operands[0], operands[1 : rank + 1]


def _extracts_one_element(op, size: int, ir) -> bool:
    """`op` is a vector.extract of one element at a static position inside the vector (-1, a
    poison position, would become a load before it)."""
    if op.name != "vector.extract" or len(op.operands) != 1:  # a dynamic position
        return False
    if isinstance(op.results[0].type, ir.VectorType):
        return False
    return 0 <= ir.DenseI64ArrayAttr(op.attributes["static_position"])[0] < size


def _scalarize(read, source, indices, ir) -> None:
    from torch_mlir.dialects import arith, memref

    loaded: dict[int, object] = {}
    for extract in [use.owner for use in read.results[0].uses]:
        position = ir.DenseI64ArrayAttr(extract.attributes["static_position"])[0]
        if position not in loaded:
            with ir.InsertionPoint(read), read.location:
                last = indices[-1]
                if position:
                    offset = arith.constant(ir.IndexType.get(), position)
                    last = arith.addi(last, offset)
                loaded[position] = memref.load(source, [*indices[:-1], last])
        extract.results[0].replace_all_uses_with(loaded[position])
        extract.erase()
    read.erase()
