"""`mlirpipe-sink-transposes`: transposes moved down through elementwise ops until they cancel.

A `linalg.transpose` (a convolution's result back to NCHW, from mlirpipe-conv-to-nhwc) read by
an elementwise `linalg.generic` (a batch norm, a ReLU, a residual add) moves below it: the op
runs on the transpose's input, in its layout, and its result is transposed instead. The op's
other operands are read through its permuted indexing maps (a broadcast of channels reads the
channel dimension where it now is); an operand that is itself a transpose by the same
permutation is read untransposed. A transpose inserted into a filled tensor (a padding) moves
below the insertion likewise. Where a transpose reaches the inverse transpose (the next
convolution's image to NHWC) the two cancel: a block of convolutions keeps its images in NHWC
from one convolution to the next. A transpose that reaches anything else stays above it. Only
transposes from NHWC to NCHW (mlirpipe-conv-to-nhwc's of a result) move; others (a linear
layer's weight, an attention's keys) are left where they are. Then a transpose to NHWC of a
padding (an insertion into a fill, torch-mlir's padding of a convolution's NCHW image) moves
above it: the image is transposed, then inserted into a fill in NHWC.
"""

from __future__ import annotations

from ..op_query import all_ops
from .conv_layout import FROM_NHWC, TO_NHWC, transposed
from .generics import groups_keeping, reassociation
from .generics import indexing_maps as _maps
from .registry import PassBody, register

PASS = "mlirpipe-sink-transposes"


@register(
    PASS,
    "Move each linalg.transpose from NHWC to NCHW below the elementwise linalg.generics (all "
    "loops parallel, identity maps of results whose initial values are not read) and the "
    "tensor.insert_slices into a linalg.fill that read it, and cancel it with an inverse "
    "linalg.transpose it reaches; then move each linalg.transpose from NCHW to NHWC of a "
    "tensor.insert_slice into a linalg.fill above the insertion",
)
def sink_transposes(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        while _sink_one(op, ir):
            pass
        while _hoist_one(op, ir):
            pass

    return run


def _hoist_one(root, ir) -> bool:
    """Move one transpose to NHWC of a padding (an insertion into a filled tensor that only it
    reads) above that padding: the insertion's source is transposed, then inserted into a fill
    in NHWC; whether one moved. The image is then transposed into the padded tensor's interior
    (once `eliminate-empty-tensors` gives the transpose that interior as its destination), not
    transposed after a copy into a padded NCHW tensor."""
    for transpose in [o for o in all_ops(root) if o.name == "linalg.transpose"]:
        perm = _permutation(transpose, ir)
        insert = transpose.operands[0].owner
        if perm != list(TO_NHWC) or getattr(insert, "name", None) != "tensor.insert_slice":
            continue
        insert = insert.operation
        if not _into_fill(insert, insert.operands[0], ir) or len(list(insert.results[0].uses)) != 1:
            continue
        with ir.InsertionPoint(transpose), transpose.location:
            source = transposed(insert.operands[0], tuple(perm), ir)
            inserted = _refilled(insert, source, perm, ir)
        transpose.results[0].replace_all_uses_with(inserted)
        transpose.erase()
        _erase_with_fill(insert)
        return True
    return False


def _sink_one(root, ir) -> bool:
    """Move one transpose below one of its users (or cancel it with one); whether one moved."""
    for transpose in [o for o in all_ops(root) if o.name == "linalg.transpose"]:
        perm = _permutation(transpose, ir)
        if perm != list(FROM_NHWC):
            continue
        result = transpose.results[0]
        for use in list(result.uses):
            user = use.owner
            cancels = user.name == "linalg.transpose" and user.operands[0] == result
            if cancels and _inverse(perm) == _permutation(user, ir):
                user.results[0].replace_all_uses_with(transpose.operands[0])
                user.erase()
            elif user.name == "linalg.generic" and _elementwise(user, result, ir):
                _sink_through_generic(user, transpose, perm, ir)
            elif user.name == "tensor.insert_slice" and _into_fill(user, result, ir):
                _sink_through_insert(user, perm, ir)
            else:
                continue
            if not list(result.uses):
                transpose.erase()
            return True
    return False


def _permutation(transpose, ir) -> list[int]:
    return [int(p) for p in ir.DenseI64ArrayAttr(transpose.attributes["permutation"])]


def _inverse(perm: list[int]) -> list[int]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def _elementwise(generic, value, ir) -> bool:
    """Whether `generic` is elementwise over `value`'s shape: all loops parallel, `value` read
    through an identity map, each result written through one, each initial result unread."""
    maps = _maps(generic, ir)
    loops = maps[0].n_dims
    identity = ir.AffineMap.get_identity(loops)
    inputs = len(generic.operands) - len(generic.results)
    if ir.RankedTensorType(value.type).rank != loops:
        return False
    if any("parallel" not in str(it) for it in generic.attributes["iterator_types"]):
        return False
    reads = [i for i, v in enumerate(generic.operands[:inputs]) if v == value]
    if not reads or any(maps[i] != identity for i in reads):
        return False
    if any(m != identity for m in maps[inputs:]):
        return False
    block = generic.regions[0].blocks[0]
    return not any(list(arg.uses) for arg in list(block.arguments)[inputs:])


def _into_fill(insert, value, ir) -> bool:
    """Whether `insert` writes `value` (of the destination's rank) at static offsets, sizes and
    strides into the result of a linalg.fill."""
    if insert.operands[0] != value or len(insert.operands) != 2:
        return False
    dest = insert.operands[1]
    if getattr(dest.owner, "name", None) != "linalg.fill":
        return False
    return ir.RankedTensorType(value.type).rank == ir.RankedTensorType(dest.type).rank


def _sink_through_generic(generic, transpose, perm: list[int], ir) -> None:
    """`generic`, which reads `transpose` (by `perm`), run in the layout before the transposes
    by `perm` of its operands, its results transposed by `perm`."""
    from torch_mlir.dialects import linalg

    maps = _maps(generic, ir)
    inputs = len(generic.operands) - len(generic.results)
    loops = maps[0].n_dims
    permuted = ir.AffineMap.get_permutation(perm)
    identity = ir.AffineMap.get_identity(loops)
    new_inputs, new_maps, skipped = [], [], []
    for value, old in zip(list(generic.operands)[:inputs], maps[:inputs], strict=True):
        owner = value.owner
        untransposed = getattr(owner, "name", None) == "linalg.transpose" and old == identity
        if untransposed and _permutation(owner, ir) == perm:
            new_inputs.append(owner.operands[0])
            new_maps.append(identity)
            skipped.append(owner)
        else:
            new_inputs.append(value)
            new_maps.append(ir.AffineMap.get(loops, 0, [e.compose(permuted) for e in old.results]))
    inverse = _inverse(perm)
    with ir.InsertionPoint(generic), generic.location:
        for i, (value, kept) in enumerate(zip(new_inputs, new_maps, strict=True)):
            new_inputs[i], new_maps[i] = _without_unit_dims(value, kept, ir)
        outputs = [_empty(v, inverse, ir) for v in list(generic.operands)[inputs:]]
        all_maps = [*new_maps, *[identity] * len(outputs)]
        new = linalg.GenericOp(
            [v.type for v in outputs],
            new_inputs,
            outputs,
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in all_maps]),
            generic.attributes["iterator_types"],
        )
        generic.regions[0].blocks[0].append_to(new.regions[0])
        _renumber_indices(new, perm, ir)
        results = [transposed(r, tuple(perm), ir) for r in new.results]
    for old, result in zip(generic.results, results, strict=True):
        old.replace_all_uses_with(result)
    generic.erase()
    # The other transposes it read untransposed, when nothing else reads them (the one being
    # moved is the caller's to erase).
    erased = [transpose]
    for owner in skipped:
        if not any(owner == done for done in erased) and not list(owner.results[0].uses):
            owner.erase()
            erased.append(owner)


def _renumber_indices(generic, perm: list[int], ir) -> None:
    """Each `linalg.index` in `generic`'s body, which read loop d of the op before the move,
    reading loop perm[d]: the same dimension of the image (a channel's index), where it now is."""
    i64 = ir.IntegerType.get_signless(64)
    for inner in all_ops(generic):
        if inner.name == "linalg.index":
            dim = ir.IntegerAttr(inner.attributes["dim"]).value
            inner.attributes["dim"] = ir.IntegerAttr.get(i64, perm[dim])


def _without_unit_dims(value, kept, ir) -> tuple:
    """`value` read through the map `kept` without the unit dimensions the map reads at 0 (a
    channel's scale, tensor<C x 1 x 1> read at (c, 0, 0), as tensor<C> read at (c)): the
    vectorizer reads that along the last dimension as one vector, not element by element."""
    from torch_mlir.dialects import tensor

    kind = ir.RankedTensorType(value.type)
    results = list(kept.results)
    zero = ir.AffineExpr.get_constant(0)
    unit = [kind.shape[i] == 1 and e == zero for i, e in enumerate(results)]
    if not any(unit):
        return value, kept
    kept_dims = [i for i, drop in enumerate(unit) if not drop]
    shape = [kind.shape[i] for i in kept_dims]
    collapsed = tensor.collapse_shape(
        ir.RankedTensorType.get(shape, kind.element_type),
        value,
        reassociation(groups_keeping(kept_dims, len(unit)), ir),
    )
    new_results = [e for e, drop in zip(results, unit, strict=True) if not drop]
    return collapsed, ir.AffineMap.get(kept.n_dims, 0, new_results)


def _sink_through_insert(insert, perm: list[int], ir) -> None:
    """`insert` of a transpose by `perm` as the insertion of its input into a fill in that
    layout, transposed by `perm`."""
    with ir.InsertionPoint(insert), insert.location:
        inserted = _refilled(insert, insert.operands[0].owner.operands[0], _inverse(perm), ir)
        result = transposed(inserted, tuple(perm), ir)
    insert.results[0].replace_all_uses_with(result)
    _erase_with_fill(insert)


def _refilled(insert, source, order: list[int], ir):
    """`source` inserted, where `insert` inserted its source, into a fill like `insert`'s
    destination with its dimensions in `order` (offsets, sizes and strides reordered too)."""
    from torch_mlir.dialects import linalg, tensor

    fill = insert.operands[1].owner
    offsets, sizes, strides = (
        [int(v) for v in ir.DenseI64ArrayAttr(insert.attributes[name])]
        for name in ("static_offsets", "static_sizes", "static_strides")
    )
    filled = linalg.fill(fill.operands[0], outs=[_empty(insert.results[0], order, ir)])
    return tensor.insert_slice(
        source,
        filled,
        [],
        [],
        [],
        [offsets[i] for i in order],
        [sizes[i] for i in order],
        [strides[i] for i in order],
    )


def _erase_with_fill(insert) -> None:
    """Erase `insert` (replaced, unused), and the fill it inserted into when nothing else
    reads it."""
    fill = insert.operands[1].owner
    insert.erase()
    if not list(fill.results[0].uses):
        fill.erase()


def _empty(value, perm: list[int], ir):
    """A tensor.empty of `value`'s shape permuted by `perm`."""
    from torch_mlir.dialects import tensor

    kind = ir.RankedTensorType(value.type)
    return tensor.EmptyOp([kind.shape[p] for p in perm], kind.element_type).result
