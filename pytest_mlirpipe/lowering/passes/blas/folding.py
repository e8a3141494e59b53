"""Ops around a gemm that fold into its call: a zero fill (beta = 0), a transpose (a flag)."""

from __future__ import annotations

from .aliasing import FRESH, root, untouched
from .matching import Operand, Plan
from .ssa import defining_op, ir, last_in_block, op_name, users


def fold_output(plan: Plan) -> None:
    """beta = 0 when the output is known zero right before the op, dropping what made it zero;
    otherwise beta = 1 (linalg.matmul accumulates), with a copied-in initial value written
    straight into the output when the copy's source is a temporary made only for it."""
    op, c = plan.op, plan.c.value
    previous = [u for u in users(c) if u != op and u.block == op.block and u.is_before_in_block(op)]
    if not previous:
        return
    init = last_in_block(previous)
    if init.name == "linalg.fill" and init.operands[1] == c and _is_zero(init.operands[0]):
        if untouched(c, init, op):
            plan.beta, plan.dead = 0.0, (init,)
        return
    if init.name != "memref.copy" or init.operands[1] != c or not untouched(c, init, op):
        return
    src = init.operands[0]
    if op_name(defining_op(root(src))) not in FRESH:
        return
    if not _fold_zero_copy(plan, init, src):
        plan.forward = _forwardable(src, init, c, previous)


def _fold_zero_copy(plan: Plan, copy, src) -> bool:
    """beta = 0 when the output is a copy of a temporary zero-filled just before (the copy
    One-Shot Bufferize's `copy-before-write` inserts); the copy, and the temporary when only
    it reads the zeros, are dropped."""
    base = root(src)
    fill = _zero_fill_of(base)
    if (
        fill is None
        or fill.block != copy.block
        or not fill.is_before_in_block(copy)
        or not untouched(base, fill, copy)
    ):
        return False
    dead = [copy]
    if src == base and len(users(base)) == 2:  # only this copy reads the zeros
        dead += [fill, defining_op(base)]
    plan.beta, plan.dead = 0.0, tuple(dead)
    return True


def _is_zero(value) -> bool:
    owner = defining_op(value)
    if op_name(owner) != "arith.constant":
        return False
    attr = owner.attributes["value"]
    return isinstance(attr, ir().FloatAttr) and attr.value == 0.0


def _zero_fill_of(value):
    """The op `linalg.fill ins(0.0) outs(value)`, when it is `value`'s only writer."""
    fills = [
        u
        for u in users(value)
        if u.name == "linalg.fill" and u.operands[1] == value and _is_zero(u.operands[0])
    ]
    return fills[0] if len(fills) == 1 else None


def _forwardable(src, copy, c, c_users_before: list):
    """(writer, copy): `writer` fills a temporary that is only copied into the output; it can
    write the output itself when the output is a fresh buffer nothing else touched before."""
    src_users = users(src)
    alloc, c_alloc = defining_op(src), defining_op(c)
    if src != root(src) or op_name(alloc) not in FRESH or len(src_users) != 2:
        return None
    if op_name(c_alloc) not in FRESH or len(c_alloc.operands) or len(c_users_before) != 1:
        return None
    (writer,) = [u for u in src_users if u != copy]
    operands = list(writer.operands)
    if (
        not writer.name.startswith("linalg.")
        or len(writer.results)
        or writer.block != copy.block
        or not writer.is_before_in_block(copy)
        or operands[-1] != src
        or sum(v == src for v in operands) != 1
        or c_alloc.block != writer.block
    ):
        return None
    return (writer, copy)


def fold_transposes(plan: Plan) -> None:
    """An input that is a fresh buffer a `linalg.transpose` wrote only for this op becomes the
    transpose's source with permuted dims: a transpose flag instead of a copy."""
    dead = list(plan.dead)
    for field_name in ("a", "b"):
        operand: Operand = getattr(plan, field_name)
        folded = _folded_transpose(plan, operand, dead)
        if folded is not None:
            source, dims, transpose = folded
            setattr(plan, field_name, Operand(source, dims))
            dead += [transpose, defining_op(operand.value)]
    plan.dead = tuple(dead)


def _folded_transpose(plan: Plan, operand: Operand, dead: list):
    """(source, dims, transpose) when `operand` is a fresh buffer that only a transpose writes
    and only the op reads, and nothing else touches the source in between; else None."""
    value = operand.value
    if op_name(defining_op(value)) not in FRESH:
        return None
    value_users = users(value)
    writers = [u for u in value_users if u.name == "linalg.transpose" and u.operands[1] == value]
    if len(writers) != 1 or len(value_users) != 2 or not any(u == plan.op for u in value_users):
        return None
    (tr,) = writers
    if tr.block != plan.op.block or not tr.is_before_in_block(plan.op):
        return None
    source = tr.operands[0]
    if not untouched(source, tr, plan.op, allowed=dead):
        return None
    perm = list(ir().DenseI64ArrayAttr(tr.attributes["permutation"]))
    dims = [0] * len(perm)
    for i, p in enumerate(perm):
        dims[p] = operand.dims[i]
    if plan.batch is not None and dims[0] != plan.batch:
        return None
    return source, tuple(dims), tr
