"""`mlirpipe-mark-elementwise`: mark the elementwise ops and row reductions a script vectorizes."""

from __future__ import annotations

from ..op_query import all_ops
from .generics import indexing_maps
from .registry import PassBody, register

PASS = "mlirpipe-mark-elementwise"
MARK = "mlirpipe.elementwise"
ROW_REDUCTION_MARK = "mlirpipe.row_reduction"
# An elementwise op computed in its convolution's blocks (the convolution marked CONV_MARK).
EPILOGUE_MARK = "mlirpipe.epilogue"
CONV_MARK = "mlirpipe.conv_epilogue"
# A tile of a transpose between NCHW and NHWC, or of one that swaps the last two dimensions (the
# script's tile_transposes made it, inside an scf.forall), which the script vectorizes.
TRANSPOSE_TILE_MARK = "mlirpipe.transpose_tile"
TILED_PERMUTATIONS = ([0, 2, 3, 1], [0, 3, 1, 2], [1, 0], [0, 2, 1], [0, 1, 3, 2])
NHWC_CONVS = ("linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_2d_nhwc_hwc")
# An NHWC convolution whose output channels leave, in register tiles of CHANNEL_TILE channels (the
# widest of the shipped tables), a last tile whose width is not a power of two (24 channels in
# tiles of 32 are one tile of 24): the script gives it narrower register tiles, whose vectors
# LLVM does not split at every operation.
NARROW_MARK = "mlirpipe.narrow_channels"
# The last elementwise op of a chain that reads a row statistic (a softmax's division by the
# row sum): the script computes it a block of rows at a time with the chain before it
# (reductions, elementwise ops) fused into each block.
ROW_CHAIN_MARK = "mlirpipe.row_chain"
CHAIN_OPS = ("linalg.generic", "linalg.fill", "linalg.transpose", "linalg.broadcast")
MAX_CHAIN = 16
CHANNEL_TILE = 32
MAX_RANK = 4
# A linalg.transpose that keeps its last dimension (moves rows of it: heads split from or merged
# into an attention's width, a batch swapped with a sequence) is tiled and vectorized as an
# elementwise op of its rank, one contiguous vector a row; up to this rank (the split of a
# projection into q, k and v has 5 dimensions).
MAX_ROW_TRANSPOSE_RANK = 5


@register(
    PASS,
    f"Mark each linalg.generic on tensors of static shapes, none empty, whose loops are all "
    f"parallel, that has a result, whose rank is 1 to {MAX_RANK} and whose operands' elements "
    f"are integers or floats of 8 bits or more with {MARK} = its rank (a vector of i1 is loaded "
    "and stored as bits, not as the bytes of a tensor of i1); one of rank 2 or more with one "
    "result whose last loop is a reduction and whose other loops are parallel (a softmax's sum, "
    f"a layer norm's mean) with {ROW_REDUCTION_MARK} = its rank; an elementwise op of rank 4 "
    "that reads, by the identity map, the result of an f32 NHWC convolution "
    f"(conv_2d_nhwc_hwcf, depthwise_conv_2d_nhwc_hwc) used nowhere else with {EPILOGUE_MARK} "
    f"instead, and that convolution with {CONV_MARK}; each linalg.transpose between NCHW and "
    f"NHWC or of the last two dimensions in an scf.forall (a tile of tile-transposes) on such "
    f"tensors with "
    f"{TRANSPOSE_TILE_MARK} (not one of dynamic shape, nor of i1); each other linalg.transpose "
    f"of rank 3 to {MAX_ROW_TRANSPOSE_RANK} that keeps its last dimension last, on such "
    f"tensors, with {MARK} = its rank (its rows are contiguous on both sides); each "
    f"linalg.conv_2d_nhwc_hwcf of static shape whose output channels modulo {CHANNEL_TILE} are "
    f"neither 0 nor a power of two (24, 56) with {NARROW_MARK}; each elementwise op so marked, "
    "of rank 2 or more, that reads a row statistic (the result of a reduction so marked of its "
    "rank, or of elementwise ops of one rank less on such results) by the map of its leading "
    "loops, whose users are neither reductions of its rank nor such ops, and whose producers "
    "(and theirs: generic, fill, transpose and broadcast ops, up to 16) nothing else reads, "
    f"with {ROW_CHAIN_MARK} = its rank",
)
def mark_elementwise(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        i64 = ir.IntegerType.get_signless(64)
        for generic in [o for o in all_ops(op) if o.name == "linalg.generic"]:
            mark = _mark(generic, ir)
            conv = _epilogue_of(generic, ir) if mark == MARK else None
            if conv is not None:
                generic.attributes[EPILOGUE_MARK] = ir.UnitAttr.get()
                conv.attributes[CONV_MARK] = ir.UnitAttr.get()
            elif mark:
                generic.attributes[mark] = ir.IntegerAttr.get(i64, len(_iterators(generic)))
        for transpose in [o for o in all_ops(op) if o.name == "linalg.transpose"]:
            if _transpose_tile(transpose, ir):
                transpose.attributes[TRANSPOSE_TILE_MARK] = ir.UnitAttr.get()
            elif _row_transpose(transpose, ir):
                rank = len(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
                transpose.attributes[MARK] = ir.IntegerAttr.get(i64, rank)
        for conv in [o for o in all_ops(op) if o.name == "linalg.conv_2d_nhwc_hwcf"]:
            if _narrow_channels(conv, ir):
                conv.attributes[NARROW_MARK] = ir.UnitAttr.get()
        generics = [o for o in all_ops(op) if o.name == "linalg.generic"]
        readers = [g.operation for g in generics if _reads_row_statistic(g, ir)]
        for reader in readers:
            rank = len(_iterators(reader))
            users = [use.owner.operation for use in reader.results[0].uses]
            if any(u in readers or _row_reduction_of(u, rank) for u in users):
                continue  # (a step of a longer chain)
            if _private_chain(reader):
                reader.attributes[ROW_CHAIN_MARK] = ir.IntegerAttr.get(i64, rank)

    return run


def _chain_before(end) -> list | None:
    """The ops that the script's structured.fuse fuses into a block of `end`: its producers,
    and theirs, that are linalg.generic, fill, transpose or broadcast ops (the matmuls and
    convolutions are tiled before: the fusion stops at their loops); None when there are more
    than MAX_CHAIN."""
    chain: list = []
    work = [end]
    while work:
        for value in work.pop().operands:
            producer = getattr(value.owner, "operation", None)
            if producer is None or producer.name not in CHAIN_OPS or producer in chain:
                continue
            chain.append(producer)
            work.append(producer)
            if len(chain) > MAX_CHAIN:
                return None
    return chain


def _private_chain(end) -> bool:
    """Whether every op fused into a block of `end` is read only by `end` and the others: then
    nothing is computed twice (by two chains' blocks, or by a block and the op left for an
    outside reader)."""
    chain = _chain_before(end)
    if chain is None:
        return False
    members = [*chain, end]
    return all(
        use.owner.operation in members for producer in chain for use in producer.results[0].uses
    )


def _row_reduction_of(op, rank: int) -> bool:
    """Whether `op` is a reduction of the last dimension this pass marked, of `rank` loops."""
    if ROW_REDUCTION_MARK not in op.attributes:
        return False
    return op.attributes[ROW_REDUCTION_MARK].value == rank


def _statistic_rank(value, depth: int = 0) -> int | None:
    """The rank of the row reduction whose result `value` is (its rank plus one), or is made of
    by marked elementwise ops of `value`'s rank (a variance's mean, eps added, square root);
    None otherwise."""
    owner = value.owner
    if getattr(owner, "name", None) != "linalg.generic" or depth > 8:
        return None
    if ROW_REDUCTION_MARK in owner.attributes:
        return owner.attributes[ROW_REDUCTION_MARK].value
    if MARK not in owner.attributes:
        return None
    rank = owner.attributes[MARK].value
    inputs = list(owner.operands)[: len(owner.operands) - len(owner.results)]
    ranks = {_statistic_rank(v, depth + 1) for v in inputs}
    return rank + 1 if rank + 1 in ranks else None


def _reads_row_statistic(generic, ir) -> bool:
    """Whether `generic` (marked elementwise, of rank 2 or more, one result) reads a row
    statistic of its rank by the map of its leading loops."""
    if MARK not in generic.attributes or len(generic.results) != 1:
        return False
    rank = generic.attributes[MARK].value
    if rank < 2:
        return False
    leading = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank - 1)])
    maps = indexing_maps(generic, ir)
    inputs = list(generic.operands)[: len(generic.operands) - 1]
    return any(
        read_by == leading and _statistic_rank(value) == rank
        for value, read_by in zip(inputs, maps, strict=False)
    )


def _narrow_channels(conv, ir) -> bool:
    """Whether `conv`'s output channels (static) leave a last register tile of CHANNEL_TILE
    channels whose width is neither 0 nor a power of two."""
    kind = ir.RankedTensorType(conv.results[0].type) if len(conv.results) else None
    if kind is None or not kind.has_static_shape:
        return False
    left = kind.shape[-1] % CHANNEL_TILE
    return left != 0 and left & (left - 1) != 0


def _iterators(generic) -> list[str]:
    """`parallel` or `reduction` for each loop of `generic`."""
    return [
        "parallel" if "parallel" in str(it) else "reduction"
        for it in generic.attributes["iterator_types"]
    ]


def _mark(generic, ir) -> str | None:
    """The attribute this pass gives `generic`, if any."""
    iterators = _iterators(generic)
    if not len(generic.results) or not 1 <= len(iterators) <= MAX_RANK:
        return None
    if not _on_bytes_of_static_shapes(generic, ir):
        return None
    if all(it == "parallel" for it in iterators):
        return MARK
    last_reduced = iterators == ["parallel"] * (len(iterators) - 1) + ["reduction"]
    if len(iterators) >= 2 and last_reduced and len(generic.results) == 1:
        return ROW_REDUCTION_MARK
    return None


def _transpose_tile(transpose, ir) -> bool:
    """Whether `transpose` is a tile of tile-transposes the script can vectorize: between NCHW
    and NHWC or of the last two dimensions, directly in an scf.forall, on bytes or wider of
    static shapes."""
    permutation = list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
    parent = transpose.parent
    return (
        permutation in TILED_PERMUTATIONS
        and getattr(parent, "name", None) == "scf.forall"
        and _on_bytes_of_static_shapes(transpose, ir)
    )


def _row_transpose(transpose, ir) -> bool:
    """Whether `transpose` moves whole rows of its last dimension (which stays last), has rank
    3 to MAX_ROW_TRANSPOSE_RANK and is on bytes or wider of static shapes: tiled into rows, each
    a contiguous read and write."""
    permutation = list(ir.DenseI64ArrayAttr(transpose.attributes["permutation"]))
    return (
        3 <= len(permutation) <= MAX_ROW_TRANSPOSE_RANK
        and permutation[-1] == len(permutation) - 1
        and _on_bytes_of_static_shapes(transpose, ir)
    )


def _on_bytes_of_static_shapes(generic, ir) -> bool:
    """Whether every operand is a tensor of static shape, of at least one element, holding
    integers or floats of 8 bits or more."""
    for value in generic.operands:
        if not isinstance(value.type, ir.RankedTensorType):
            return False
        kind = ir.RankedTensorType(value.type)
        element = kind.element_type
        if not kind.has_static_shape or 0 in kind.shape:
            return False  # (of no elements: nothing to vectorize, and tiling it crashes)
        if isinstance(element, ir.IntegerType):
            if ir.IntegerType(element).width < 8:
                return False
        elif not isinstance(element, ir.FloatType):
            return False
    return True


def _epilogue_of(generic, ir):
    """The convolution whose blocks can compute `generic` (elementwise, rank 4) as they are
    written: one it reads by the identity map, on f32 tensors of static shapes, whose result
    nothing else reads; None when there is none."""
    if len(generic.results) != 1 or len(_iterators(generic)) != 4:
        return None
    maps = indexing_maps(generic, ir)
    inputs = len(generic.operands) - len(generic.results)
    for value, read_by in zip(list(generic.operands)[:inputs], maps, strict=False):
        conv = getattr(value.owner, "operation", None)
        if conv is None or conv.name not in NHWC_CONVS or CONV_MARK in conv.attributes:
            continue
        if read_by != ir.AffineMap.get_identity(4) or len(list(value.uses)) != 1:
            continue
        if (
            conv.parent != generic.parent
            or str(ir.RankedTensorType(value.type).element_type) != "f32"
        ):
            continue
        return conv
    return None
