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
        from ..op_query import all_ops, known_location, outermost

        def matches(inner) -> bool:
            return any(fnmatch.fnmatchcase(inner.name, p) for p in patterns)

        # Ops inside a forbidden op (the implicit linalg.yield of a linalg.matmul) add
        # nothing but noise: the enclosing op is reported already.
        found = outermost([inner for inner in all_ops(op) if matches(inner)], matches)
        for inner in found:
            known_location(inner).emit_error(
                f"'{inner.name}' is forbidden here by mlirpipe-forbid-ops"
            )
        if found:
            pass_.signal_pass_failure()

    return run
