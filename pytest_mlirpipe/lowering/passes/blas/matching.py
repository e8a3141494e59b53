"""Which ops are gemms: a matmul, batch matmul or matmul-like generic on f32/f64 memrefs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ssa import ir

# Element type -> (CBLAS function without the library's prefix, element size in bytes).
GEMM = {"f32": ("cblas_sgemm", 4), "f64": ("cblas_dgemm", 8)}
MATMUL_OPS = ("linalg.matmul", "linalg.batch_matmul", "linalg.generic")


class Refused(Exception):
    """The op cannot be rewritten; the message says why (shown with `debug`)."""


@dataclass(frozen=True, slots=True)
class Operand:
    """A gemm operand: the memref, the loop dims indexing its dimensions (from the op's map)."""

    value: Any  # ir.Value (the bindings are untyped)
    dims: tuple[int, ...]


@dataclass(slots=True)
class Plan:
    """How one op becomes a gemm: its operands, loop dims, and the ops folded into the call."""

    op: Any  # ir.Operation
    a: Operand
    b: Operand
    c: Operand
    m: int
    n: int
    k: int
    batch: int | None
    elem: str
    beta: float = 1.0
    dead: tuple = ()  # ops to erase with the op (fill, copy, transpose, allocs), in order
    forward: tuple | None = None  # (writer, copy): the writer is to write the output directly


def match(op) -> Plan:
    """The gemm `op` computes; raises Refused saying why it is not one BLAS can run."""
    ins = list(op.operands)
    elem = _element_type(op, ins)
    if op.name == "linalg.generic" and any(
        "reduction" not in str(t) and "parallel" not in str(t) for t in _iterator_types(op)
    ):
        raise Refused("unknown iterator types")
    _check_body(op)
    amap, bmap, cmap = operand_dims(op)
    m, n, k, batch = _loop_dims(op, amap, bmap, cmap)
    a, b, c = (Operand(v, d) for v, d in zip(ins, (amap, bmap, cmap), strict=True))
    if c.value == a.value or c.value == b.value:
        raise Refused("its output is also one of its inputs")
    return Plan(op, a, b, c, m, n, k, batch, elem)


def looks_like_matmul(op) -> bool:
    """A linalg.generic worth a remark: two inputs, one output and a mulf in its body."""
    if len(op.operands) != 3:
        return False
    return any(o.name == "arith.mulf" for o in op.regions[0].blocks[0].operations)


def _element_type(op, ins: list) -> str:
    """The one element type of the op's three memref operands, when BLAS has a gemm for it."""
    bindings = ir()
    if len(ins) != 3 or len(op.results) != 0:
        if any(isinstance(v.type, bindings.RankedTensorType) for v in ins):
            raise Refused("its operands are tensors; run it after bufferization")
        raise Refused("it does not have exactly two inputs and one output on memrefs")
    for v in ins:
        if not isinstance(v.type, bindings.MemRefType):
            raise Refused(f"operand type {v.type} is not a memref")
        if bindings.MemRefType(v.type).memory_space is not None:
            raise Refused(f"operand type {v.type} is not in the default memory space")
    types = {str(bindings.MemRefType(v.type).element_type) for v in ins}
    if len(types) != 1:
        raise Refused(f"mixed element types ({', '.join(sorted(types))}) have no BLAS gemm")
    (elem,) = types
    if elem not in GEMM:
        raise Refused(
            f"element type {elem} has no BLAS gemm (f32 -> cblas_sgemm, f64 -> cblas_dgemm)"
        )
    return elem


def _iterator_types(op) -> list:
    return list(ir().ArrayAttr(op.attributes["iterator_types"]))


def _loop_dims(op, amap: tuple, bmap: tuple, cmap: tuple) -> tuple[int, int, int, int | None]:
    """(m, n, k, batch): the loop dims of a matmul or batch matmul with these operand maps."""
    n_loops = len({*amap, *bmap, *cmap})
    if op.name == "linalg.generic":
        kinds = [str(t) for t in _iterator_types(op)]
        reductions = [i for i, t in enumerate(kinds) if "reduction" in t]
    else:
        reductions = [i for i in range(n_loops) if i not in cmap]
    if len(cmap) == 2 and len(amap) == 2 and len(bmap) == 2 and n_loops == 3:
        batch = None
        m, n = cmap
    elif len(cmap) == 3 and len(amap) == 3 and len(bmap) == 3 and n_loops == 4:
        batch, m, n = cmap
        if amap[0] != batch or bmap[0] != batch:
            raise Refused("the batch dimension is not the outermost of every operand")
    else:
        raise Refused("its indexing maps are not those of a matmul or batch matmul")
    ks = [d for d in range(n_loops) if d not in cmap]
    if len(ks) != 1 or reductions != ks or len(set(cmap)) != len(cmap):
        raise Refused("its indexing maps are not those of a matmul or batch matmul")
    (k,) = ks
    core_a = set(amap[1:] if batch is not None else amap)
    core_b = set(bmap[1:] if batch is not None else bmap)
    if core_a != {m, k} or core_b != {k, n}:
        raise Refused("its indexing maps are not those of a matmul or batch matmul")
    return m, n, k, batch


def operand_dims(op) -> list[tuple[int, ...]]:
    """The loop dims indexing each operand's dimensions, from the op's indexing maps."""
    bindings = ir()
    maps = []
    for attr in bindings.ArrayAttr(op.attributes["indexing_maps"]):
        amap = bindings.AffineMapAttr(attr).value
        dims = []
        for expr in amap.results:
            if not isinstance(expr, bindings.AffineDimExpr):
                raise Refused(f"indexing map {amap} is not a projection of loop dims")
            dims.append(expr.position)
        maps.append(tuple(dims))
    return maps


def _check_body(op) -> None:
    """The region must compute `out + in0 * in1` (in either operand order)."""
    block = op.regions[0].blocks[0]
    a, b, c = (block.arguments[i] for i in range(3))
    body = list(block.operations)
    if [o.name for o in body] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        names = ", ".join(o.name for o in body)
        raise Refused(f"its body ({names}) is not a multiply-accumulate (mulf, addf, yield)")
    mul, add, yld = body
    if not _same(mul.operands, [a, b]):
        raise Refused("its body does not multiply the two inputs")
    if not _same(add.operands, [c, mul.result]):
        raise Refused("its body does not add the product to the output")
    if not _same(yld.operands, [add.result]):
        raise Refused("its body does not yield the sum")


def _same(values, expected) -> bool:
    """The same values in any order (ir.Value compares by equality only, it does not hash)."""
    values = list(values)
    if len(values) != len(expected):
        return False
    rest = list(expected)
    for v in values:
        hit = next((i for i, e in enumerate(rest) if e == v), None)
        if hit is None:
            return False
        rest.pop(hit)
    return True
