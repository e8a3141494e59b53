"""What the project's passes read of a `linalg.generic` (its indexing maps, whether they bound
every loop, which body ops have no side effect) and the reassociations of the reshapes they
build around one."""

from __future__ import annotations

# Body ops with no side effect (torch-mlir's cf.assert has one).
PURE_DIALECTS = ("arith.", "math.")
PURE_OPS = ("linalg.index",)


def indexing_maps(op, ir) -> list:
    """The affine maps of `op`'s indexing_maps attribute, one per operand."""
    return [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]


def pure(op) -> bool:
    """Whether body op `op` has no side effect (it may be dropped or computed elsewhere)."""
    return op.name.startswith(PURE_DIALECTS) or op.name in PURE_OPS


def bounds_every_loop(maps: list, ir) -> bool:
    """Whether every loop is a dimension of some operand read through `maps` (its bound read
    from that operand's shape): an op without such an operand for a loop does not verify."""
    dims = {e.position for m in maps for e in m.results if isinstance(e, ir.AffineDimExpr)}
    return dims == set(range(maps[0].n_dims))


def groups_keeping(kept: list[int], rank: int) -> list[list[int]]:
    """Groups of consecutive dimensions of `rank`, one per kept dimension, each dropped one in
    the group of the kept dimension before it (of the first kept one when none is before it):
    the reassociation that collapses the dropped (unit) dimensions away."""
    groups: list[list[int]] = []
    leading: list[int] = []
    for d in range(rank):
        if d in kept:
            groups.append([*leading, d])
            leading = []
        elif groups:
            groups[-1].append(d)
        else:
            leading.append(d)
    return groups


def reassociation(groups, ir):
    """`groups` (lists of dimensions) as the reassociation attribute of a collapse_shape or
    expand_shape."""
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups]
    )
