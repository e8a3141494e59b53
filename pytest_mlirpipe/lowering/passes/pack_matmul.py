"""`mlirpipe-pack-matmul`: a matmul's operands packed into panels (B) and strips (A).

`C += A * B` on f32 tensors of static shapes, whose N is a multiple of the panel width W,
becomes a `linalg.pack` of B into panels (`tensor<N/W x K x W>`: each panel's K rows of W
floats contiguous) and a `linalg.contract` on them. With `rows=R` (and M at least R), A
is packed too, into strips of R rows (`tensor<M/R x K x R>`: the R values of one k
contiguous), and the contract runs over (panel, strip, row in strip, column in panel, k),
writing C seen as `tensor<M/R x R x N/W x W>`; when R does not divide M, the last M mod R rows
are a second contract on a strip of their own, and each writes its rows of C in place (a
slice of it). Without `rows` (or with M < R) the contract runs over (panel, m, column in panel, k),
writing C seen as `tensor<M x N/W x W>` (expand_shapes: the same memory). A register tile of
R x W then reads both operands one after the other instead of K or N floats apart: rows that
far apart fall into a few sets of the L1 cache when K or N is a power of two. The contract is
marked `mlirpipe.packed = "rhs"` or `"both"` for the transform script. Other matmuls (other
element types, dynamic shapes, N not a multiple of W) are left as they are.

When B is a constant (a model's weight, or its `linalg.transpose`: a linear layer's), its panels
are computed here, once, as a new constant: no copy of B is left to run at every call, which
for a small M (a batch of one row) cost more than the product itself.
"""

from __future__ import annotations

from ...errors import PipelineSpecError, Problem
from ..op_query import all_ops
from .blas.matching import Refused, operand_dims
from .constants import Blobs, f32_constant
from .registry import PassBody, register

PASS = "mlirpipe-pack-matmul"
WIDTH_OPTION = "width"
ROWS_OPTION = "rows"
PACKED_ATTR = "mlirpipe.packed"


@register(
    PASS,
    "Pack B of each f32 linalg.matmul of static shapes whose N is a multiple of `width` "
    "(default 16) into panels of `width` columns, and with `rows=R` (default 0: A as it is) A "
    "into strips of R rows when M is at least R (the last M mod R rows a strip of their own); "
    "the matmul becomes linalg.contracts on the packed operands",
    options=(WIDTH_OPTION, ROWS_OPTION),
)
def pack_matmul(options: dict[str, str]) -> PassBody:
    width = _count(options.get(WIDTH_OPTION, "16"), WIDTH_OPTION, minimum=1)
    rows = _count(options.get(ROWS_OPTION, "0"), ROWS_OPTION, minimum=0)

    def run(op, pass_) -> None:
        from ...mlir_env import ir

        blobs = Blobs(op)
        for matmul in [o for o in all_ops(op) if o.name == "linalg.matmul"]:
            try:
                shapes = _packable(matmul, width, ir)
            except Refused:
                continue
            _rewrite(matmul, shapes, width, rows, blobs, ir)

    return run


def _count(text: str, option: str, minimum: int) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < minimum:
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


def _rewrite(matmul, shapes: tuple, width: int, rows: int, blobs: Blobs, ir) -> None:
    """The matmul as linalg.contracts on B in panels (and A in strips when `rows`): with M not
    a multiple of `rows`, one on the strips of the first rows and one on a strip of the rest."""
    m, n, k, a_k_major, b_n_major = shapes
    a, b, c = matmul.operands
    rows = rows if m >= rows else 0  # fewer rows than a strip: A stays
    split = bool(rows) and m % rows != 0
    fill = _sole_fill(c, matmul) if split else None
    with ir.InsertionPoint(matmul), matmul.location:
        # B is (k, n), or (n, k) as a linear layer's weight: then its rows are panels' columns.
        b_packed = _constant_panels(b, b_n_major, width, blobs, ir)
        if b_packed is None:
            b_packed = _pack(b, [n // width, k, width], width, 0 if b_n_major else 1, ir)
        if not split:
            result = _contract(a, b_packed, c, shapes, width, rows, ir)
        else:
            # Rows [0, full) in strips of `rows`, rows [full, m) in one strip; each writes its
            # rows of C in place (its own fill of them when C was filled).
            full = m - m % rows
            result = fill.operands[1] if fill else c
            for start, count, height in ((0, full, rows), (full, m - full, m - full)):
                a_rows = _rows(a, start, count, k, a_k_major, ir)
                c_rows = _rows(result, start, count, n, False, ir)
                if fill:
                    c_rows = _filled(fill, c_rows)
                part = (count, n, k, a_k_major, b_n_major)
                c_rows = _contract(a_rows, b_packed, c_rows, part, width, height, ir)
                result = _insert_rows(c_rows, result, start, count, n)
    matmul.results[0].replace_all_uses_with(result)
    matmul.erase()
    if fill:  # each part filled its own rows
        fill.erase()


def _contract(a, b_packed, c, shapes: tuple, width: int, rows: int, ir):
    """C (m x n) plus A times B in panels, as a linalg.contract (A in strips of `rows` when
    `rows`: m is a multiple of it); the new C."""
    from torch_mlir.dialects import linalg, tensor

    m, n, k, a_k_major, _ = shapes
    f32 = ir.F32Type.get()
    panels = n // width
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    if rows:  # loops (panel, strip, row in strip, column in panel, k)
        a = _pack(a, [m // rows, k, rows], rows, tiled_dim=1 if a_k_major else 0, ir=ir)
        c_shape, c_groups = [m // rows, rows, panels, width], ([0, 1], [2, 3])
        dims = ([d[1], d[4], d[2]], [d[0], d[4], d[3]], [d[1], d[2], d[0], d[3]])
    else:  # loops (panel, m, column in panel, k)
        c_shape, c_groups = [m, panels, width], ([0], [1, 2])
        a_map = [d[3], d[1]] if a_k_major else [d[1], d[3]]
        dims = (a_map, [d[0], d[3], d[2]], [d[1], d[0], d[2]])
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
    return tensor.collapse_shape(c.type, contract, groups)


def _sole_fill(c, matmul):
    """The linalg.fill that produced C, when C is used once (as the matmul's C, not also as
    its A or B, nor by another op); else None."""
    owner = c.owner
    if getattr(owner, "name", None) != "linalg.fill":
        return None
    uses = list(c.uses)
    return owner if len(uses) == 1 and uses[0].owner == matmul else None


def _filled(fill, value):
    """`value` filled with `fill`'s scalar (a new linalg.fill)."""
    from torch_mlir.dialects import linalg

    return linalg.fill(fill.operands[0], outs=[value])


def _rows(value, start: int, count: int, other: int, transposed: bool, ir):
    """Rows [start, start + count) of a 2-d tensor (columns when `transposed`; `other` is the
    size of the other dimension)."""
    from torch_mlir.dialects import tensor

    f32 = ir.F32Type.get()
    offsets, sizes = ([0, start], [other, count]) if transposed else ([start, 0], [count, other])
    kind = ir.RankedTensorType.get(sizes, f32)
    return tensor.extract_slice(kind, value, [], [], [], offsets, sizes, [1, 1])


def _insert_rows(rows, dest, start: int, count: int, columns: int):
    """`rows` (count x columns) written into `dest` from row `start` on."""
    from torch_mlir.dialects import tensor

    return tensor.insert_slice(rows, dest, [], [], [], [start, 0], [count, columns], [1, 1])


def _pack(value, shape: list[int], tile: int, tiled_dim: int, ir):
    """`value` (2-d) packed to `shape` (outer, other dim, tile) by tiling `tiled_dim`."""
    from torch_mlir.dialects import linalg, tensor

    empty = tensor.EmptyOp(shape, ir.F32Type.get()).result
    if tiled_dim == 0:
        return linalg.pack(value, empty, inner_dims_pos=[0], inner_tiles=[tile])
    return linalg.pack(value, empty, inner_dims_pos=[1], inner_tiles=[tile], outer_dims_perm=[1, 0])


def _constant_panels(b, b_n_major: bool, width: int, blobs: Blobs, ir):
    """B in panels as a new constant, when B is a constant or a transpose of one; else None."""
    transposed, source = False, b
    owner = b.owner
    if getattr(owner, "name", None) == "linalg.transpose":
        if [int(p) for p in ir.DenseI64ArrayAttr(owner.attributes["permutation"])] != [1, 0]:
            return None
        transposed, source = True, owner.operands[0]
    values = blobs.values(source)
    if values is None:
        return None
    kn = values.T if transposed != b_n_major else values  # B as (k, n)
    k, n = kn.shape
    panels = kn.reshape(k, n // width, width).transpose(1, 0, 2)
    return f32_constant(panels, f"mlirpipe_panels_{width}", ir)
