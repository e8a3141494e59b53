"""`mlirpipe-inline-alloca-scopes`: inline the memref.alloca_scope ops that allocate nothing."""

from __future__ import annotations

from ..op_query import all_ops
from .registry import PassBody, register


@register(
    "mlirpipe-inline-alloca-scopes",
    "Inline each memref.alloca_scope that holds no memref.alloca (as its canonicalization "
    "does, without canonicalizing anything else): convert-scf-to-openmp wraps every parallel "
    "loop body in one, and convert-scf-to-cf cannot lower loops inside it",
)
def inline_alloca_scopes(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        failed = False
        for scope in [o for o in all_ops(op) if o.name == "memref.alloca_scope"]:
            allocas = [o for o in all_ops(scope) if o.name == "memref.alloca"]
            if allocas:
                allocas[0].location.emit_error(
                    "mlirpipe-inline-alloca-scopes: this memref.alloca is inside a "
                    "memref.alloca_scope (a parallel loop's body), which therefore stays and "
                    "convert-scf-to-cf cannot lower; hoist the allocation out of the loop "
                    "(e.g. allocate it before the scf.forall) or lower it to memref.alloc"
                )
                failed = True
                continue
            _inline(scope)
        if failed:
            pass_.signal_pass_failure()

    return run


def _inline(scope) -> None:
    """Move the body of `scope` before it, its results replaced by what the body returns."""
    body = scope.regions[0].blocks[0]
    ops = list(body.operations)
    terminator = ops[-1]
    for inner in ops[:-1]:
        inner.move_before(scope)
    for result, value in zip(scope.results, terminator.operands, strict=True):
        result.replace_all_uses_with(value)
    terminator.erase()
    scope.erase()
