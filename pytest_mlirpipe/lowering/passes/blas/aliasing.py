"""Alias analysis, just enough to know that nothing between two ops touches a buffer."""

from __future__ import annotations

from .ssa import defining_op, ir, op_name

# Ops that only create or view buffers; they read and write no memory.
NO_ACCESS = frozenset(
    {
        "memref.alloc",
        "memref.alloca",
        "memref.get_global",
        "memref.subview",
        "memref.cast",
        "memref.reinterpret_cast",
        "memref.expand_shape",
        "memref.collapse_shape",
        "memref.transpose",
        "memref.view",
        "memref.dim",
        "memref.extract_strided_metadata",
    }
)
VIEWS = NO_ACCESS - {"memref.alloc", "memref.alloca", "memref.get_global", "memref.dim"}
FRESH = ("memref.alloc", "memref.alloca")


def root(value):
    """The buffer `value` is a view of (through at most 64 view ops)."""
    seen = 0
    while seen < 64:
        owner = defining_op(value)
        if owner is None or owner.name not in VIEWS:
            return value
        value = owner.operands[0]
        seen += 1
    return value


def may_alias(x, y) -> bool:
    rx, ry = root(x), root(y)
    if rx == ry:
        return True
    ox, oy = defining_op(rx), defining_op(ry)
    if op_name(ox) in FRESH or op_name(oy) in FRESH:
        return False
    if op_name(ox) == op_name(oy) == "memref.get_global":
        return str(ox.attributes["name"]) == str(oy.attributes["name"])
    return True


def untouched(value, first, last, allowed=()) -> bool:
    """No op strictly between `first` and `last` may read or write `value` (others allowed)."""
    between = _between(first, last)
    if between is None:
        return False
    for op in between:
        if op.name in NO_ACCESS or any(op == a for a in allowed):
            continue
        if any(may_alias(v, value) for v in _memref_operands(op)):
            return False
    return True


def _memref_operands(op) -> list:
    bindings = ir()
    found = []

    def visit(inner):
        found.extend(v for v in inner.operands if isinstance(v.type, bindings.MemRefType))
        return bindings.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _between(first, last) -> list | None:
    """The ops strictly between `first` and `last` of one block (None if not in one block)."""
    block = first.block
    if block != last.block:
        return None
    ops = list(block.operations)
    i = next(i for i, o in enumerate(ops) if o == first)
    j = next(i for i, o in enumerate(ops) if o == last)
    return ops[i + 1 : j] if i < j else None
