"""`mlirpipe-forbid-ops`: fail, at each offending op, if any op of the named kinds is left."""

from __future__ import annotations

import fnmatch

from .registry import PassBody, register


@register(
    "mlirpipe-forbid-ops",
    "Fail if any op matching `ops` (comma-separated names or globs such as `linalg.*`) remains",
    options=("ops",),
)
def forbid_ops(options: dict[str, str]) -> PassBody:
    patterns = [p.strip() for p in options.get("ops", "").split(",") if p.strip()]

    def run(op, pass_) -> None:
        from ...mlir_env import ir

        found = []

        def matches(inner) -> bool:
            return any(fnmatch.fnmatchcase(inner.name, p) for p in patterns)

        def inside_match(inner) -> bool:
            # Ops inside a forbidden op (the implicit linalg.yield of a linalg.matmul) add
            # nothing but noise: the enclosing op is reported already.
            parent = inner.parent
            while parent is not None:
                if matches(parent):
                    return True
                parent = parent.parent
            return False

        def visit(inner):
            if matches(inner) and not inside_match(inner):
                found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        for inner in found:
            _known_location(inner).emit_error(
                f"'{inner.name}' is forbidden here by mlirpipe-forbid-ops"
            )
        if found:
            pass_.signal_pass_failure()

    return run


def _known_location(op):  # MLIR binding objects
    """The op's location, or its nearest ancestor's when it has none (ops a parser made up)."""
    current = op
    while current is not None and str(current.location) == "loc(unknown)":
        current = current.parent
    return (current or op).location
