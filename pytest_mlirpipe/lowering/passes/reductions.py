"""`mlirpipe-simplify-reductions`: reductions in the form a script splits into vector lanes.

torch-mlir lowers a softmax's row maximum (aten._softmax, max over a dim) to a
`linalg.generic` with two results, the maximum and its index; a softmax reads only the
maximum, but the index is computed all the same (a compare and a select per element), and a
reduction of two results is not split into lanes. A result nobody reads is dropped here,
with the body ops that only computed it. A reduction whose result keeps the reduced dimension
(a sum of (128, 768) into (128, 1), the map (d0, d1) -> (d0, 0)) writes its result collapsed
to (128) (map (d0, d1) -> (d0)), into a fill of (128) when its init was a fill, expanded back
after it: the vectorizer does not take an output map with a constant, as the partial results
of such a split have. A linalg.generic that reads a reduction's result expanded with unit
dimensions by a map whose results there are the constant 0 (a softmax's division by (128, 1)
through (d0, d1) -> (d0, 0)) reads the result itself by the map without them: then the
reduction and its readers are ops on the same rows, which the script computes a block of rows
at a time. A reduction over
several trailing loops of inputs read whole (an adaptive average pooling to 1x1: the sum of
each channel's H x W) becomes one over a single loop of their product, its inputs collapsed
(H x W contiguous): a reduction of the last dimension, which the script splits into lanes
(before, it stayed a scalar loop).
"""

from __future__ import annotations

from ..op_query import all_ops
from .generics import bounds_every_loop, groups_keeping, pure, reassociation
from .generics import indexing_maps as _maps
from .registry import PassBody, register

PASS = "mlirpipe-simplify-reductions"


@register(
    PASS,
    "Drop each result of a linalg.generic with a reduction loop that nobody uses (and the body "
    "ops only it used) when the other results still use every loop; write a reduction's result "
    "without the unit dimensions its output map indexes by the constant 0 (a collapse_shape "
    "of its init, or a fill of the collapsed shape when the init was a fill of a tensor.empty "
    "that nothing else reads, and an expand_shape of its result); merge the trailing reduction "
    "loops of a reduction whose inputs are read by the identity map into one (its inputs "
    "collapsed); let each linalg.generic that reads a reduction's result through a "
    "tensor.expand_shape adding unit dimensions, by a map whose results at them are the "
    "constant 0, read the result itself by the map without them",
)
def simplify_reductions(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for generic in [o for o in all_ops(op) if o.name == "linalg.generic"]:
            if not _has_reduction(generic):
                continue
            with generic.location:
                generic = _drop_dead_results(generic, ir)
                _collapse_unit_outputs(generic, ir)
                _merge_trailing_reductions(generic, ir)
        for expand in [o for o in all_ops(op) if o.name == "tensor.expand_shape"]:
            producer = expand.operands[0].owner
            if getattr(producer, "name", None) == "linalg.generic" and _has_reduction(producer):
                _read_unexpanded(expand, ir)

    return run


def _has_reduction(generic) -> bool:
    return any("reduction" in str(it) for it in generic.attributes["iterator_types"])


def _drop_dead_results(generic, ir):
    """`generic`, or the generic that replaced it without its unused results."""
    for index in reversed(range(len(generic.results))):
        if len(generic.results) == 1:
            break
        if not list(generic.results[index].uses):
            generic = _without_result(generic, index, ir) or generic
    return generic


def _without_result(generic, index: int, ir):
    """A new generic as `generic` without result `index` (None when that result's computation
    has a side effect, or the other operands' maps leave a loop without a bound)."""
    from torch_mlir.dialects import linalg

    view = generic.opview
    inputs, outputs = list(view.inputs), list(view.outputs)
    block = generic.regions[0].blocks[0]
    out_arg = block.arguments[len(inputs) + index]
    body = list(block.operations)
    kept_values = [v for i, v in enumerate(body[-1].operands) if i != index]
    live = _live_ops(body[:-1], kept_values)
    dead = [o for o in body[:-1] if o not in live]
    if any(not pure(o) for o in dead) or any(out_arg in list(o.operands) for o in live):
        return None
    maps = _maps(generic, ir)
    del maps[len(inputs) + index]
    if not bounds_every_loop(maps, ir):
        return None
    arguments = [a for i, a in enumerate(block.arguments) if i != len(inputs) + index]
    with ir.InsertionPoint(generic), generic.location:
        new = linalg.GenericOp(
            [r.type for i, r in enumerate(generic.results) if i != index],
            inputs,
            [v for i, v in enumerate(outputs) if i != index],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            generic.attributes["iterator_types"],
        )
    for name in generic.attributes:
        if "." in name:  # discardable ones, as mlirpipe.* marks
            new.attributes[name] = generic.attributes[name]
    with generic.location:
        new_block = new.regions[0].blocks.append(*[a.type for a in arguments])
    for old_arg, new_arg in zip(arguments, new_block.arguments, strict=True):
        old_arg.replace_all_uses_with(new_arg)
    at_end = ir.InsertionPoint(new_block)
    for o in body[:-1]:
        if o in live:
            o.detach_from_parent()
            at_end.insert(o)
    with at_end, generic.location:
        linalg.YieldOp(kept_values)
    kept = [r for i, r in enumerate(generic.results) if i != index]
    for old, result in zip(kept, new.results, strict=True):
        old.replace_all_uses_with(result)
    generic.erase()
    return new.operation


def _live_ops(ops: list, roots: list) -> list:
    """The ops of `ops` (a block's, in order) that compute a value of `roots`, directly or not."""
    wanted = list(roots)
    live: list = []
    for o in reversed(ops):
        if any(r in wanted for r in o.results):
            live.append(o)
            wanted.extend(o.operands)
    return live[::-1]


def _collapse_unit_outputs(generic, ir) -> None:
    """Give `generic`'s one output, of static shape, only its indexed dimensions: each of size
    1 indexed by the constant 0 is collapsed into the dimension before it (after it when
    first)."""
    from torch_mlir.dialects import tensor

    if len(generic.results) != 1:
        return
    maps = _maps(generic, ir)
    out_map, init = maps[-1], generic.operands[len(generic.operands) - 1]
    out_type = ir.RankedTensorType(init.type)
    if not out_type.has_static_shape:
        return
    shape = list(out_type.shape)
    kept = [i for i, e in enumerate(out_map.results) if not (str(e) == "0" and shape[i] == 1)]
    if len(kept) == len(shape) or not kept:
        return
    unit_dims_away = reassociation(groups_keeping(kept, len(shape)), ir)
    collapsed = ir.RankedTensorType.get([shape[i] for i in kept], out_type.element_type)
    with ir.InsertionPoint(generic), generic.location:
        new_init = _fill_of(collapsed, init, ir) or tensor.collapse_shape(
            collapsed, init, unit_dims_away
        )
    generic.operands[len(generic.operands) - 1] = new_init
    maps[-1] = ir.AffineMap.get(out_map.n_dims, 0, [out_map.results[i] for i in kept])
    generic.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    result = generic.results[0]
    result.set_type(collapsed)
    with ir.InsertionPoint.after(generic), generic.location:
        expanded = tensor.expand_shape(out_type, result, unit_dims_away, [], shape)
    result.replace_all_uses_except(expanded, expanded.owner.operation)


def _fill_of(kind, init, ir):
    """A linalg.fill of a new tensor.empty of type `kind` with the value `init` is filled with,
    when `init` is the result of such a fill of a tensor.empty and nothing else reads that
    result (the old fill is then left unread); None otherwise."""
    from torch_mlir.dialects import linalg, tensor

    fill = init.owner
    if getattr(fill, "name", None) != "linalg.fill" or len(list(init.uses)) != 1:
        return None
    empty = fill.operands[1].owner
    if getattr(empty, "name", None) != "tensor.empty" or len(empty.operands):
        return None
    return linalg.fill(fill.operands[0], outs=[tensor.empty(kind.shape, kind.element_type)])


def _unit_dims_added(expand, ir) -> list[int] | None:
    """The dimensions of `expand`'s result (a tensor.expand_shape of static shapes) that are
    its source's, when the others are unit dimensions it adds (in each group of its
    reassociation, the first dimension of the source's size); None otherwise."""
    source = ir.RankedTensorType(expand.operands[0].type)
    result = ir.RankedTensorType(expand.results[0].type)
    if not (source.has_static_shape and result.has_static_shape):
        return None
    kept: list[int] = []
    for d, group in enumerate(expand.attributes["reassociation"]):
        dims = [ir.IntegerAttr(i).value for i in group]
        keep = next((i for i in dims if result.shape[i] == source.shape[d]), None)
        if keep is None or any(result.shape[i] != 1 for i in dims if i != keep):
            return None
        kept.append(keep)
    return kept


def _read_unexpanded(expand, ir) -> None:
    """Let each linalg.generic that reads `expand` (a reduction's result with unit dimensions
    added) as an input by a map whose results at those dimensions are the constant 0 (a
    softmax's division by the row sum, (d0, d1, d2, 0)) read the reduction's result itself by
    the map without them: the reduction and its readers are then linalg ops on the same rows,
    which the script computes a block of rows at a time. `expand` goes when nothing reads it
    any more."""
    kept = _unit_dims_added(expand, ir)
    if kept is None:
        return
    source = expand.operands[0]
    for use in list(expand.results[0].uses):
        reader = use.owner
        if getattr(reader, "name", None) != "linalg.generic":
            continue
        if use.operand_number >= len(reader.opview.inputs):
            continue  # (an init)
        maps = _maps(reader, ir)
        read_by = maps[use.operand_number]
        if any(str(e) != "0" for i, e in enumerate(read_by.results) if i not in kept):
            continue
        maps[use.operand_number] = ir.AffineMap.get(
            read_by.n_dims, 0, [read_by.results[i] for i in kept]
        )
        reader.operands[use.operand_number] = source
        reader.attributes["indexing_maps"] = ir.ArrayAttr.get(
            [ir.AffineMapAttr.get(m) for m in maps]
        )
    if not list(expand.results[0].uses):
        expand.erase()


def _merge_trailing_reductions(generic, ir) -> None:
    """Replace `generic` (one result, static shapes), whose last loops k ... n-1 are two or more
    reductions, whose inputs are read by the identity map and whose output by (d0, ..., dk-1),
    by a generic of k + 1 loops reading each input with those loops collapsed into one; the
    body, which must not read a loop index, is moved as it is."""
    from torch_mlir.dialects import linalg, tensor

    kinds = [str(it) for it in generic.attributes["iterator_types"]]
    first = len(kinds)
    while first > 0 and "reduction" in kinds[first - 1]:
        first -= 1
    if len(kinds) - first < 2 or any("reduction" in k for k in kinds[:first]):
        return
    maps = _maps(generic, ir)
    n = len(kinds)
    identity = ir.AffineMap.get_identity(n)
    leading = ir.AffineMap.get(n, 0, [ir.AffineDimExpr.get(d) for d in range(first)])
    block = generic.regions[0].blocks[0]
    if (
        len(generic.results) != 1
        or any(m != identity for m in maps[:-1])
        or maps[-1] != leading
        or any(o.name == "linalg.index" for o in block.operations)
        or not all(ir.RankedTensorType(v.type).has_static_shape for v in generic.operands)
    ):
        return
    view = generic.opview
    groups = reassociation([*([d] for d in range(first)), list(range(first, n))], ir)
    merged = ir.AffineMap.get_identity(first + 1)
    out_map = ir.AffineMap.get(first + 1, 0, [ir.AffineDimExpr.get(d) for d in range(first)])
    iterators = ir.ArrayAttr.get(list(generic.attributes["iterator_types"])[: first + 1])
    with ir.InsertionPoint(generic), generic.location:
        inputs = []
        for value in view.inputs:
            kind = ir.RankedTensorType(value.type)
            size = 1
            for extent in kind.shape[first:]:
                size *= extent
            flat = ir.RankedTensorType.get([*kind.shape[:first], size], kind.element_type)
            inputs.append(tensor.collapse_shape(flat, value, groups))
        new = linalg.GenericOp(
            [r.type for r in generic.results],
            inputs,
            list(view.outputs),
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [merged] * len(inputs) + [out_map]]),
            iterators,
        )
    for name in generic.attributes:
        if "." in name:  # discardable ones, as mlirpipe.* marks
            new.attributes[name] = generic.attributes[name]
    generic.regions[0].blocks[0].append_to(new.regions[0])
    generic.results[0].replace_all_uses_with(new.results[0])
    generic.erase()
