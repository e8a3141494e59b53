"""`mlirpipe-pack-matmul`: a matmul's operands packed into panels (B) and strips (A).

`C += A * B` on f32 tensors of static shapes, whose N is a multiple of the panel width W,
becomes a `linalg.pack` of B into panels (`tensor<N/W x K x W>`: each panel's K rows of W
floats contiguous) and a `linalg.contract` on them. With `rows=R` (and M a multiple of R), A
is packed too, into strips of R rows (`tensor<M/R x K x R>`: the R values of one k
contiguous), and the contract runs over (panel, strip, row in strip, column in panel, k),
writing C seen as `tensor<M/R x R x N/W x W>`; else over (panel, m, column in panel, k),
writing C seen as `tensor<M x N/W x W>` (expand_shapes: the same memory). A register tile of
R x W then reads both operands one after the other instead of K or N floats apart: rows that
far apart fall into a few sets of the L1 cache when K or N is a power of two. The contract is
marked `mlirpipe.packed = "rhs"` or `"both"` for the transform script. Other matmuls (other
element types, dynamic shapes, N not a multiple of W) are left as they are.
"""

from __future__ import annotations

from ...errors import PipelineSpecError, Problem
from ..op_query import all_ops
from .blas.matching import Refused, operand_dims
from .registry import PassBody, register

PASS = "mlirpipe-pack-matmul"
WIDTH_OPTION = "width"
ROWS_OPTION = "rows"
PACKED_ATTR = "mlirpipe.packed"


@register(
    PASS,
    "Pack B of each f32 linalg.matmul of static shapes whose N is a multiple of `width` "
    "(default 16) into panels of `width` columns, and with `rows=R` (default 0: A as it is) A "
    "into strips of R rows when M is a multiple of R; the matmul becomes a linalg.contract on "
    "the packed operands",
    options=(WIDTH_OPTION, ROWS_OPTION),
)
def pack_matmul(options: dict[str, str]) -> PassBody:
    width = _count(options.get(WIDTH_OPTION, "16"), WIDTH_OPTION, minimum=1)
    rows = _count(options.get(ROWS_OPTION, "0"), ROWS_OPTION, minimum=0)

    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for matmul in [o for o in all_ops(op) if o.name == "linalg.matmul"]:
            try:
                shapes = _packable(matmul, width, ir)
            except Refused:
                continue
            _rewrite(matmul, shapes, width, rows if rows and shapes[0] % rows == 0 else 0, ir)

    return run


def _count(text: str, option: str, minimum: int) -> int:
    if not text.isdigit() or int(text) < minimum:
        what = "a positive integer" if minimum else "an integer of 0 or more"
        raise PipelineSpecError(
            Problem(
                f"{PASS}: {option}={text!r} is not {what}",
                hint=f"give the panel width in columns and the strip height in rows (0: A is "
                f"not packed), e.g. {PASS}{{{WIDTH_OPTION}=16 {ROWS_OPTION}=4}}",
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


def _rewrite(matmul, shapes: tuple, width: int, rows: int, ir) -> None:
    """The matmul as a linalg.contract on B in panels (and A in strips when `rows`)."""
    from torch_mlir.dialects import linalg, tensor

    m, n, k, a_k_major, b_n_major = shapes
    a, b, c = matmul.operands
    f32 = ir.F32Type.get()
    panels = n // width
    with ir.InsertionPoint(matmul), matmul.location:
        # B is (k, n), or (n, k) as a linear layer's weight: then its rows are panels' columns.
        b_packed = _pack(b, [panels, k, width], width, tiled_dim=0 if b_n_major else 1, ir=ir)
        d = [ir.AffineDimExpr.get(i) for i in range(5)]
        if rows:  # loops (panel, strip, row in strip, column in panel, k)
            a = _pack(a, [m // rows, k, rows], rows, tiled_dim=1 if a_k_major else 0, ir=ir)
            c_shape, c_groups = [m // rows, rows, panels, width], ([0, 1], [2, 3])
            dims = ([d[1], d[4], d[2]], [d[0], d[4], d[3]], [d[1], d[2], d[0], d[3]])
        else:  # loops (panel, m, column in panel, k)
            c_shape, c_groups = [m, panels, width], ([0], [1, 2])
            dims = ([d[3], d[1]] if a_k_major else [d[1], d[3]], [d[0], d[3], d[2]])
            dims += ([d[1], d[0], d[2]],)
        groups = ir.ArrayAttr.get(
            [
                ir.ArrayAttr.get(
                    [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i) for i in group]
                )
                for group in c_groups
            ]
        )
        c_view = tensor.expand_shape(ir.RankedTensorType.get(c_shape, f32), c, groups, [], c_shape)
        loops = 5 if rows else 4
        maps = [ir.AffineMap.get(loops, 0, list(e)) for e in dims]
        contract = linalg.contract(a, b_packed, outs=[c_view], indexing_maps=maps)
        contract.owner.attributes[PACKED_ATTR] = ir.StringAttr.get("both" if rows else "rhs")
        result = tensor.collapse_shape(matmul.results[0].type, contract, groups)
    matmul.results[0].replace_all_uses_with(result)
    matmul.erase()


def _pack(value, shape: list[int], tile: int, tiled_dim: int, ir):
    """`value` (2-d) packed to `shape` (outer, other dim, tile) by tiling `tiled_dim`."""
    from torch_mlir.dialects import linalg, tensor

    empty = tensor.EmptyOp(shape, ir.F32Type.get()).result
    if tiled_dim == 0:
        return linalg.pack(value, empty, inner_dims_pos=[0], inner_tiles=[tile])
    return linalg.pack(value, empty, inner_dims_pos=[1], inner_tiles=[tile], outer_dims_perm=[1, 0])
