"""`mlirpipe-fill-borders`: a padding's fill written on its border only.

A padded convolution's image is a `linalg.fill` of the whole padded tensor (its zeros) with the
image written into its interior: after `eliminate-empty-tensors` the op that makes the image (the
transpose to NHWC, or the previous layer's epilogue) writes straight into that interior, a
`tensor.extract_slice` of the fill, and the result goes back with a `tensor.insert_slice`. Every
element of the interior is then written twice, once by the fill (a loop nest on one thread: 6.9
MB for a batch of 8 images of 64 channels, 58x58) and once by the op. Here such a fill becomes
fills of the border's slabs only, each a slice of the tensor: the interior is left to the op
that writes it all.
"""

from __future__ import annotations

from ..op_query import all_ops
from .generics import indexing_maps
from .registry import PassBody, register

PASS = "mlirpipe-fill-borders"
PLACE = ("static_offsets", "static_sizes", "static_strides")


@register(
    PASS,
    "Replace each linalg.fill of a tensor.empty of static shape whose result is used only by "
    "one tensor.extract_slice of its interior (static, unit strides) that is the only init of "
    "an op writing every element of it without reading it (a linalg.transpose, a linalg.fill, "
    "or a linalg.generic whose loops are all parallel and whose body does not read its "
    "output), and by the tensor.insert_slice at the same place of that op's result (or of a "
    "chain of linalg ops each writing into the one before's result and its only user, as a "
    "pooling into its -inf fill), by fills of the slabs around the interior: a padding's zeros "
    "written once, not under the image too",
)
def fill_borders(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for fill in [o for o in all_ops(op) if o.name == "linalg.fill"]:
            interior = _overwritten_interior(fill, ir)
            if interior is not None:
                offsets, sizes = interior
                with fill.location, ir.InsertionPoint(fill):
                    _fill_border(fill, offsets, sizes, ir)

    return run


def _static(op, name: str, ir) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _overwritten_interior(fill, ir) -> tuple[list[int], list[int]] | None:
    """(offsets, sizes) of the interior of `fill`'s tensor that one op overwrites whole, when
    the fill's result is used as the pass's description says; None otherwise."""
    if not fill.results:
        return None  # (a fill of a buffer)
    result = fill.results[0]
    kind = ir.RankedTensorType(result.type)
    empty = fill.operands[1].owner
    if getattr(empty, "name", None) != "tensor.empty" or not kind.has_static_shape:
        return None
    users = [use.owner for use in result.uses]
    extracts = [u for u in users if u.name == "tensor.extract_slice"]
    inserts = [u for u in users if u.name == "tensor.insert_slice"]
    if len(users) != 2 or len(extracts) != 1 or len(inserts) != 1:
        return None
    extract, insert = extracts[0], inserts[0]
    if len(extract.operands) != 1 or len(insert.operands) != 2 or insert.operands[1] != result:
        return None  # (dynamic offsets, sizes or strides)
    place = [_static(extract, n, ir) for n in PLACE]
    if place != [_static(insert, n, ir) for n in PLACE]:
        return None
    offsets, sizes, strides = place
    if any(s != 1 for s in strides):
        return None
    return (offsets, sizes) if _overwritten(extract.results[0], insert.operands[0], ir) else None


def _overwritten(interior, result, ir) -> bool:
    """Whether `result` is made from `interior` by a chain of ops, each the only user of the one
    init it writes (the previous one's result), the first of which writes every element of
    `interior` without reading it (a max pooling's -inf fill, then the pooling reading it)."""
    value = result
    while True:
        owner = value.owner
        if not isinstance(owner, ir.OpView | ir.Operation) or len(owner.results) != 1:
            return False
        op = owner.operation
        if not op.name.startswith("linalg.") or op.name in ("linalg.pack", "linalg.unpack"):
            return False
        init = op.operands[len(op.operands) - 1]  # (a structured op's one output: its last)
        if init.type != op.results[0].type:
            return False
        if [use.owner for use in init.uses] != [op]:
            return False
        if init == interior:
            return _writes_all(op, init, ir)
        value = init


def _writes_all(op, init, ir) -> bool:
    """Whether `op`'s one init is `init` and `op` writes every element of it, reading none."""
    if op.name == "linalg.transpose":
        return op.operands[1] == init
    if op.name == "linalg.fill":
        return op.operands[1] == init
    if op.name != "linalg.generic":
        return False
    view = op.opview
    if list(view.outputs) != [init] or init in list(view.inputs):
        return False
    if any("parallel" not in str(it) for it in op.attributes["iterator_types"]):
        return False
    out_map = indexing_maps(op, ir)[-1]
    if not out_map.is_permutation:
        return False
    block = op.regions[0].blocks[0]
    return not list(block.arguments[len(block.arguments) - 1].uses)


def _fill_border(fill, offsets: list[int], sizes: list[int], ir) -> None:
    """Replace `fill` by fills of the slabs outside [offsets, offsets + sizes): along each
    dimension d in turn, the part before and the part after the interior, within the interior
    along the dimensions before d and whole along those after it (disjoint, covering all)."""
    from torch_mlir.dialects import linalg, tensor

    value, empty = fill.operands
    kind = ir.RankedTensorType(empty.type)
    shape = list(kind.shape)
    rank = len(shape)
    tensor_ = empty
    for d in range(rank):
        before = (0, offsets[d])
        after = (offsets[d] + sizes[d], shape[d] - offsets[d] - sizes[d])
        for start, count in (before, after):
            if count == 0:
                continue
            slab_offsets = [*offsets[:d], start, *[0] * (rank - d - 1)]
            slab_sizes = [*sizes[:d], count, *shape[d + 1 :]]
            slab_type = ir.RankedTensorType.get(slab_sizes, kind.element_type)
            ones = [1] * rank
            slab = tensor.extract_slice(
                slab_type, tensor_, [], [], [], slab_offsets, slab_sizes, ones
            )
            filled = linalg.fill(value, outs=[slab])
            tensor_ = tensor.insert_slice(
                filled, tensor_, [], [], [], slab_offsets, slab_sizes, ones
            )
    fill.results[0].replace_all_uses_with(tensor_)
    fill.erase()
