"""`mlirpipe-fuse-elementwise`: chains of elementwise ops as one op, one pass over memory.

torch-mlir lowers a BatchNorm in eval mode to four elementwise `linalg.generic`s (subtract the
mean, multiply by 1/sqrt(var + eps), by the weight, add the bias) and the ReLU after it to a
fifth: five passes over the whole activation, each reading and writing it. Here a producer
whose one user is an elementwise op (or a reduction: a layer norm's squares into its sum) over
the same loops, reading it element by element as it was written, is computed in that user's
body instead: one op reads the chain's inputs and writes its end. A producer with several
such users is computed in each of them when it is one op and no math function (a type
conversion), or up to three arith ops without a division that read no more bytes an element
than they write (a post-norm's residual sum widened to f64 for the layer norm's mean and
variance).

Upstream's `linalg-fuse-elementwise-ops` also fuses through broadcasts and reshapes and copies
ops with side effects (torch-mlir's `cf.assert` of a non-zero divisor) into the fused bodies,
which then stay loops; this pass fuses only what keeps each op vectorizable as it was: a
producer whose loops are all parallel, whose one result is written by the identity map, whose
body has only `arith`/`math` ops (and `linalg.index`) and does not read its output's element,
into a consumer that reads it by the identity map too.

An input that is a splat constant (torch-mlir's `where(mask, 0.0, x)` in a softmax, a
`masked_fill`: a whole tensor of one value) is read as that scalar, a constant in the body: the
tensor (6 MB for an attention's scores at batch 8) is no longer read element by element.
"""

from __future__ import annotations

from ..op_query import all_ops
from .generics import bounds_every_loop, pure
from .generics import indexing_maps as _maps
from .registry import PassBody, register

PASS = "mlirpipe-fuse-elementwise"


@register(
    PASS,
    "Compute each linalg.generic whose loops are all parallel, with one result written by the "
    "identity map, whose body has only arith and math ops and does not read its output, in the "
    "body of the one linalg.generic using that result, when that op reads it by the identity "
    "map over the same number of loops (in each of several such users a producer of one op and "
    "no math function, or of up to three arith ops without a division reading no more bytes "
    "an element than it writes): a chain of elementwise ops (a batch norm and a ReLU) becomes "
    "one op, one pass over memory instead of one per op; then each input of a linalg.generic "
    "that is a splat constant (a tensor of one value) is dropped, its element a scalar "
    "constant in the body",
)
def fuse_elementwise(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        fused = True
        while fused:  # until a whole walk fuses nothing
            fused = False
            # In order: a producer comes before its consumers, so the ops a fusion erases (the
            # consumer and the producer) were walked already; the new op takes the consumer's
            # place and gets its other producers too.
            for consumer in [o for o in all_ops(op) if o.name == "linalg.generic"]:
                while (new := _fuse_one_producer(consumer, ir)) is not None:
                    consumer, fused = new, True
        for generic in [o for o in all_ops(op) if o.name == "linalg.generic"]:
            with generic.location:
                _read_splats_as_scalars(generic, ir)

    return run


def _splat_value(value, ir):
    """The attribute of the one element of `value` when it is a splat constant tensor of ints
    (booleans too) or floats; None otherwise."""
    owner = value.owner
    if not isinstance(owner, ir.OpView | ir.Operation) or owner.name != "arith.constant":
        return None
    if not isinstance(value.type, ir.RankedTensorType):
        return None  # (a scalar input)
    element_type = ir.RankedTensorType(value.type).element_type
    if not isinstance(element_type, ir.IntegerType | ir.FloatType | ir.IndexType):
        return None  # (complex numbers: the bindings cannot read their dense attribute)
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not ir.DenseElementsAttr(attr).is_splat:
        return None
    element = ir.DenseElementsAttr(attr).get_splat_value()
    if isinstance(element, ir.BoolAttr):  # (a tensor of i1's: arith.constant takes an i1)
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(ir.BoolAttr(element).value))
    return element if isinstance(element, ir.FloatAttr | ir.IntegerAttr) else None


def _read_splats_as_scalars(generic, ir) -> None:
    """Replace `generic` by one without its splat constant inputs, each read as a scalar
    constant in the body; left as it is when it has none, or when dropping them would leave a
    loop without an operand bounding it. (Under `generic`'s location.)"""
    from torch_mlir.dialects import arith

    inputs = list(generic.opview.inputs)
    splats = {k: a for k, v in enumerate(inputs) if (a := _splat_value(v, ir)) is not None}
    if not splats:
        return
    maps = _maps(generic, ir)
    kept = [k for k in range(len(inputs)) if k not in splats]
    new_maps = [maps[k] for k in kept] + maps[len(inputs) :]
    if not bounds_every_loop(new_maps, ir):
        return
    old_args = list(generic.regions[0].blocks[0].arguments)
    arguments = [old_args[k] for k in kept] + old_args[len(inputs) :]
    new, at_end = _generic_like(generic, [inputs[k] for k in kept], new_maps, arguments, ir)
    for k, element in splats.items():
        scalar = arith.ConstantOp(old_args[k].type, element, ip=at_end)
        old_args[k].replace_all_uses_with(scalar.result)
    _replace_by(generic, new, at_end)


def _fuse_one_producer(consumer, ir):
    """The op that replaced `consumer` with one of its producers fused in; None when none
    could be."""
    for value in consumer.opview.inputs:
        producer = _fusable_producer(value, consumer, ir)
        if producer is not None:
            with consumer.location:
                return _fuse(producer, consumer, ir)
    return None


def _fusable_producer(value, consumer, ir):
    """The linalg.generic that makes `value`, if it can be computed in `consumer`'s body: every
    read of `value` by `consumer` is an input read by the identity map, and `consumer` is its
    only user unless the producer is cheap enough to compute again in each user (a type
    conversion: a layer norm's f32 input widened to f64 for both its sums; see
    `_recomputable`)."""
    owner = value.owner
    if not isinstance(owner, ir.OpView | ir.Operation) or owner.name != "linalg.generic":
        return None  # (a block argument's owner is its block)
    producer = owner.operation
    if producer.parent != consumer.parent or len(producer.results) != 1:
        return None
    iterators = producer.attributes["iterator_types"]
    if any("parallel" not in str(it) for it in iterators):
        return None
    loops = len(iterators)
    if len(consumer.attributes["iterator_types"]) != loops:
        return None
    identity = ir.AffineMap.get_identity(loops)
    if _maps(producer, ir)[-1] != identity:
        return None
    c_maps = _maps(consumer, ir)
    n_inputs = len(consumer.opview.inputs)
    reads = [k for k, v in enumerate(consumer.operands) if v == value]
    if any(k >= n_inputs or c_maps[k] != identity for k in reads):
        return None
    # The fused op loses the producer's output, which may have been the only operand giving a
    # loop its length (a row broadcast to several rows, then summed over them).
    others = [m for k, m in enumerate(c_maps) if k not in reads]
    if not bounds_every_loop(_maps(producer, ir)[:-1] + others, ir):
        return None
    block = producer.regions[0].blocks[0]
    out_element = block.arguments[len(block.arguments) - 1]
    if list(out_element.uses):
        return None
    body = list(block.operations)
    if any(not pure(o) for o in body[:-1]):  # (the last: its linalg.yield)
        return None
    shared = any(use.owner.operation != consumer for use in value.uses)
    if shared and not _recomputable(producer, body, ir):
        return None
    return producer


# Divisions and remainders: many cycles a vector, not computed twice unless alone.
_SLOW = ("arith.divf", "arith.divsi", "arith.divui", "arith.remf", "arith.remsi", "arith.remui")


def _recomputable(producer, body: list, ir) -> bool:
    """Whether a producer's body (its yield last) is cheap enough to compute in each of its
    users: one conversion or arithmetic op, or up to three of them without a division when the
    producer reads no more bytes an element than it writes (a post-norm's residual sum widened
    to f64 for the layer norm's mean and variance: each user then reads the two f32 inputs
    where it read the f64 sum, and the sum is never written). No `math` function."""
    if any(o.name.startswith("math.") for o in body):
        return False
    if len(body) <= 2:
        return True
    if len(body) > 4 or any(o.name in _SLOW for o in body):
        return False
    read = sum(_element_bytes(v.type, ir) for v in producer.opview.inputs)
    return read <= _element_bytes(producer.results[0].type, ir)


def _element_bytes(type_, ir) -> int:
    """Bytes of one element of a tensor type (of a scalar type: its own); a large number when
    unknown (complex numbers, index), so that the producer is left as it is."""
    element = ir.ShapedType(type_).element_type if isinstance(type_, ir.ShapedType) else type_
    if isinstance(element, ir.IntegerType):
        return max(1, ir.IntegerType(element).width // 8)
    if isinstance(element, ir.FloatType):
        return max(1, ir.FloatType(element).width // 8)
    return 1 << 20


def _fuse(producer, consumer, ir):
    """Replace `consumer` by one generic that computes `producer`'s element where it read
    its result, and erase `consumer` (and `producer` unless another op reads it, in which
    case a copy of it is fused); the new generic."""
    value = producer.results[0]
    if any(use.owner.operation != consumer for use in value.uses):
        producer = producer.clone(ip=ir.InsertionPoint(consumer))
        for k, v in enumerate(consumer.operands):
            if v == value:
                consumer.operands[k] = producer.results[0]
        value = producer.results[0]
    c_view = consumer.opview
    c_inputs = list(c_view.inputs)
    p_inputs = list(producer.opview.inputs)
    c_maps, p_maps = _maps(consumer, ir), _maps(producer, ir)
    p_block = producer.regions[0].blocks[0]
    c_block = consumer.regions[0].blocks[0]
    c_args = list(c_block.arguments)
    reads = [k for k, v in enumerate(c_inputs) if v == value]
    inputs, maps, arguments = [], [], []
    for k, v in enumerate(c_inputs):
        if k == reads[0]:  # the producer's operands where it was first read
            inputs += p_inputs
            maps += p_maps[: len(p_inputs)]
            arguments += list(p_block.arguments)[: len(p_inputs)]
        elif k not in reads:
            inputs.append(v)
            maps.append(c_maps[k])
            arguments.append(c_args[k])
    maps += c_maps[len(c_inputs) :]
    arguments += c_args[len(c_inputs) :]
    new, at_end = _generic_like(consumer, inputs, maps, arguments, ir)
    p_body = list(p_block.operations)
    for o in p_body[:-1]:
        o.detach_from_parent()
        at_end.insert(o)
    element = p_body[-1].operands[0]
    for k in reads:
        c_args[k].replace_all_uses_with(element)
    _replace_by(consumer, new, at_end)
    producer.erase()
    return new.operation


def _generic_like(op, inputs, maps, arguments, ir):
    """A linalg.generic before `op` with its outputs, loops, result types and discardable
    attributes (mlirpipe.* marks), reading `inputs` through `maps` (the outputs' maps last), the
    arguments of its block in place of `arguments` (block arguments of other ops); the op and an
    insertion point at the end of its block."""
    from torch_mlir.dialects import linalg

    with ir.InsertionPoint(op):
        new = linalg.GenericOp(
            [r.type for r in op.results],
            inputs,
            list(op.opview.outputs),
            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            op.attributes["iterator_types"],
        )
    for name in op.attributes:
        if "." in name:
            new.attributes[name] = op.attributes[name]
    block = new.regions[0].blocks.append(*[a.type for a in arguments])
    for old, arg in zip(arguments, block.arguments, strict=True):
        old.replace_all_uses_with(arg)
    return new, ir.InsertionPoint(block)


def _replace_by(op, new, at_end) -> None:
    """Move the body of `op` (a linalg.generic) to `at_end` in `new`'s, use `new`'s results in
    place of `op`'s and erase `op`."""
    for o in list(op.regions[0].blocks[0].operations):
        o.detach_from_parent()
        at_end.insert(o)
    for old, result in zip(op.results, new.results, strict=True):
        old.replace_all_uses_with(result)
    op.erase()
