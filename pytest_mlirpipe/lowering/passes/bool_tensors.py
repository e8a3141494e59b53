"""`mlirpipe-widen-bool-tensors`: tensors of i1 between linalg.generics held as bytes.

A vector of i1 is loaded and stored as bits, a tensor of i1 holds a byte an element, so the
generics that read or write one are not vectorized (`mlirpipe-mark-elementwise` leaves them to
`linalg-to-loops`). torch's softmax inside an attention (`_safe_softmax`) makes three: x == -inf
element by element, all() over each row, and a select of 0 for the rows that are all -inf. A
generic whose one result is of i1 and is read only as an input of other generics writes it as
i8 instead (0 or 1: `arith.extui` before its yield, its init an i8 one), and each reader
truncates it back (`arith.trunci` at the start of its body); a reduction whose combiner is an
`arith.andi` or `arith.ori` with its init combines the bytes themselves (the 0s and 1s of the
bytes combine as the bits do), a combiner the script can split into vector lanes.
"""

from __future__ import annotations

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-widen-bool-tensors"

# Combiners whose result on bytes of 0 or 1 is that of i1 on their low bits.
_BITWISE = ("arith.andi", "arith.ori")


@register(
    PASS,
    "Give each linalg.generic of static shapes whose one result is a tensor of i1, read only as "
    "an input of other linalg.generics and initialized by tensor.empty or a linalg.fill of it, "
    "a result of i8 (0 or 1) instead: arith.extui before its yield, arith.trunci where its "
    "readers' bodies take it; an arith.andi or arith.ori with the init combines the bytes",
)
def widen_bool_tensors(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        i1 = ir.IntegerType.get_signless(1)
        for generic in [o for o in all_ops(op) if o.name == "linalg.generic"]:
            if _widenable(generic, i1, ir):
                with generic.location:
                    _widen(generic, ir)

    return run


def _widenable(generic, i1, ir) -> bool:
    if len(generic.results) != 1:
        return False
    kind = generic.results[0].type
    if not isinstance(kind, ir.RankedTensorType):
        return False
    kind = ir.RankedTensorType(kind)
    if kind.element_type != i1 or not kind.has_static_shape:
        return False
    uses = list(generic.results[0].uses)
    for use in uses:
        user = use.owner
        if user.name != "linalg.generic":
            return False
        if use.operand_number >= len(user.opview.inputs):
            return False  # an init: its reader also writes it
    init = generic.operands[len(generic.operands) - 1].owner
    return bool(uses) and getattr(init, "name", None) in ("tensor.empty", "linalg.fill")


def _widen(generic, ir) -> None:
    from torch_mlir.dialects import arith, linalg, tensor

    i1 = ir.IntegerType.get_signless(1)
    i8 = ir.IntegerType.get_signless(8)
    last = len(generic.operands) - 1
    init = generic.operands[last].owner
    shape = list(ir.RankedTensorType(generic.results[0].type).shape)
    with ir.InsertionPoint(generic):
        empty = tensor.EmptyOp(shape, i8).result
        if init.name == "linalg.fill":
            empty = linalg.fill(arith.extui(i8, init.operands[0]), outs=[empty])
    generic.operands[last] = empty
    block = generic.regions[0].blocks[0]
    out = block.arguments[len(block.arguments) - 1]
    _narrow_argument(out, block, i1, i8, ir)
    body = list(block.operations)
    done = body[-1]
    with ir.InsertionPoint(done):
        done.operands[0] = _as_byte(done.operands[0], out, i8, ir)
    for o in reversed(list(block.operations)[:-1]):  # what the byte combiner left unused
        if o.name.startswith("arith.") and not any(list(r.uses) for r in o.results):
            o.erase()
    generic.results[0].set_type(ir.RankedTensorType.get(shape, i8))
    for use in list(generic.results[0].uses):
        user = use.owner
        reader = user.regions[0].blocks[0]
        _narrow_argument(reader.arguments[use.operand_number], reader, i1, i8, ir)


def _narrow_argument(arg, block, i1, i8, ir) -> None:
    """Make block argument `arg` an i8 whose uses in `block` read it truncated to i1."""
    from torch_mlir.dialects import arith

    arg.set_type(i8)
    if not list(arg.uses):
        return
    with ir.InsertionPoint.at_block_begin(block):
        bit = arith.trunci(i1, arg)
    arg.replace_all_uses_except(bit, bit.owner.operation)


def _as_byte(value, out, i8, ir):
    """The i8 a body yields for its i1 `value`: the combiner itself on bytes when `value` is
    an andi/ori of something with the init `out` (truncated), else `value` extended."""
    from torch_mlir.dialects import arith

    combiner = value.owner
    if getattr(combiner, "name", None) in _BITWISE and len(list(value.uses)) == 1:
        first, second = combiner.operands
        for mine, other in ((first, second), (second, first)):
            owner = mine.owner
            if getattr(owner, "name", None) == "arith.trunci" and owner.operands[0] == out:
                kind = arith.AndIOp if combiner.name == "arith.andi" else arith.OrIOp
                return kind(arith.extui(i8, other), out).result
    return arith.extui(i8, value)
