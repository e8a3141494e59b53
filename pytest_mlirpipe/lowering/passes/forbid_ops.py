"""`mlirpipe-forbid-ops`: fail, at each offending op, if any op of the named kinds is left."""

from __future__ import annotations

import fnmatch

from . import PassBody, register


@register(
    "mlirpipe-forbid-ops",
    "Fail if any op matching `ops` (comma-separated names or globs such as `linalg.*`) remains",
    options=("ops",),
)
def forbid_ops(options: dict[str, str]) -> PassBody:
    patterns = [p.strip() for p in options.get("ops", "").split(",") if p.strip()]

    def run(op, pass_) -> None:  # noqa: ANN001  (MLIR binding objects)
        from ...mlir_env import ir

        found = []

        def visit(inner):  # noqa: ANN001
            name = inner.name
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        for inner in found:
            inner.location.emit_error(f"'{inner.name}' is forbidden here by mlirpipe-forbid-ops")
        if found:
            pass_.signal_pass_failure()

    return run
