"""`mlirpipe-pack-matmul-rhs`: a matmul's right-hand side packed into panels of columns.

`C += A * B` on f32 tensors of static shapes, whose N is a multiple of the panel width W,
becomes a `linalg.pack` of B into panels (`tensor<N/W x K x W>`: each panel's K rows of W
floats contiguous) and a `linalg.contract` over the loops (panel, m, column in panel, k) that
writes C seen as `tensor<M x N/W x W>` (an expand_shape: the same memory). A register tile then
reads B's rows one after the other instead of N floats apart, which keeps the panel in the L1
cache (rows N floats apart fall into a few of its sets when N is a power of two). Other
matmuls (other element types, dynamic shapes, N not a multiple of W) are left as they are.
"""

from __future__ import annotations

from ...errors import PipelineSpecError, Problem
from ..op_query import all_ops
from .blas.matching import Refused, operand_dims
from .registry import PassBody, register

WIDTH_OPTION = "width"


@register(
    "mlirpipe-pack-matmul-rhs",
    "Pack the right-hand side of each f32 linalg.matmul of static shapes whose N is a multiple "
    "of `width` (default 16) into panels of `width` columns, each panel's rows contiguous, and "
    "compute the matmul as a linalg.contract on the panels",
    options=(WIDTH_OPTION,),
)
def pack_matmul_rhs(options: dict[str, str]) -> PassBody:
    width = _width(options.get(WIDTH_OPTION, "16"))

    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for matmul in [o for o in all_ops(op) if o.name == "linalg.matmul"]:
            try:
                shapes = _packable(matmul, width, ir)
            except Refused:
                continue
            _rewrite(matmul, shapes, width, ir)

    return run


def _width(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise PipelineSpecError(
            Problem(
                f"mlirpipe-pack-matmul-rhs: {WIDTH_OPTION}={text!r} is not a positive integer",
                hint="give the panel width in columns, e.g. mlirpipe-pack-matmul-rhs{width=16}",
            )
        )
    return int(text)


def _packable(matmul, width: int, ir) -> tuple:
    """(M, N, K, A is k-major, B is n-major) of a matmul this pass rewrites; else Refused."""
    values = list(matmul.operands)
    if len(values) != 3 or len(matmul.results) != 1:
        raise Refused("not a matmul on tensors")
    types = [v.type for v in values]
    if not all(isinstance(t, ir.RankedTensorType) for t in types):
        raise Refused("not a matmul on tensors")
    tensors = [ir.RankedTensorType(t) for t in types]
    if any(not t.has_static_shape or str(t.element_type) != "f32" for t in tensors):
        raise Refused("not f32 of static shapes")
    amap, bmap, cmap = operand_dims(matmul)
    if cmap != (0, 1) or amap not in ((0, 2), (2, 0)) or bmap not in ((2, 1), (1, 2)):
        raise Refused("its maps are not those of a matmul writing C as (m, n)")
    m, n = tensors[2].shape
    k = tensors[0].shape[1 if amap == (0, 2) else 0]
    if n % width:
        raise Refused("N is not a multiple of the panel width")
    return m, n, k, amap == (2, 0), bmap == (1, 2)


def _rewrite(matmul, shapes: tuple, width: int, ir) -> None:
    from torch_mlir.dialects import linalg, tensor

    m, n, k, a_k_major, b_n_major = shapes
    a, b, c = matmul.operands
    f32 = ir.F32Type.get()
    panels = n // width
    with ir.InsertionPoint(matmul), matmul.location:
        empty = tensor.EmptyOp([panels, k, width], f32).result
        if b_n_major:  # B is (n, k): panels of its rows are already (panel, k, column)
            packed = linalg.pack(b, empty, inner_dims_pos=[0], inner_tiles=[width])
        else:
            packed = linalg.pack(
                b, empty, inner_dims_pos=[1], inner_tiles=[width], outer_dims_perm=[1, 0]
            )
        c3_type = ir.RankedTensorType.get([m, panels, width], f32)
        groups = ir.ArrayAttr.get(
            [
                ir.ArrayAttr.get(
                    [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in dims]
                )
                for dims in ([0], [1, 2])
            ]
        )
        c3 = tensor.expand_shape(c3_type, c, groups, [], [m, panels, width])
        # Loops (panel, m, column in panel, k).
        d = [ir.AffineDimExpr.get(i) for i in range(4)]
        maps = [
            ir.AffineMap.get(4, 0, [d[3], d[1]] if a_k_major else [d[1], d[3]]),
            ir.AffineMap.get(4, 0, [d[0], d[3], d[2]]),
            ir.AffineMap.get(4, 0, [d[1], d[0], d[2]]),
        ]
        result3 = linalg.contract(a, packed, outs=[c3], indexing_maps=maps)
        result = tensor.collapse_shape(matmul.results[0].type, result3, groups)
    matmul.results[0].replace_all_uses_with(result)
    matmul.erase()
