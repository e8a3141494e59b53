"""Use-def helpers on the MLIR bindings: the op defining a value, the ops using it."""

from __future__ import annotations


def ir():
    """The bindings' `ir` module, imported when a pass first runs."""
    from ....mlir_env import ir as bindings

    return bindings


def defining_op(value):
    """The op whose result `value` is; None for a block argument."""
    if isinstance(value, ir().OpResult):
        return value.owner.operation
    return None


def op_name(op) -> str | None:
    return None if op is None else op.name


def users(value) -> list:
    return [use.owner.operation for use in value.uses]


def last_in_block(ops: list):
    """The op of `ops` (all in one block) that comes last."""
    last = ops[0]
    for o in ops[1:]:
        if last.is_before_in_block(o):
            last = o
    return last
