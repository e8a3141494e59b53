"""`mlirpipe-fold-reshape-pairs`: a collapse_shape undoing an expand_shape is the latter's source.

A matmul on packed operands writes C through an expand_shape (M/R x R x N/W x W) and returns it
collapsed back to M x N. After bufferization the function returns
`collapse_shape(expand_shape(%alloc))`, which buffer-results-to-out-params does not see as an
allocation: it would keep the buffer and copy it into the caller's at the end. Folded, the
function returns `%alloc` itself, which becomes the caller's buffer. The pass folds only this
pair (canonicalize would fold it too, but it also rewrites the vector code around it).
"""

from __future__ import annotations

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-fold-reshape-pairs"


@register(
    PASS,
    "Replace each memref.collapse_shape of a memref.expand_shape with the same reassociation "
    "by the expand_shape's source (buffer-results-to-out-params then sees the allocation)",
)
def fold_reshape_pairs(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        for collapse in [o for o in all_ops(op) if o.name == "memref.collapse_shape"]:
            expand = collapse.operands[0].owner
            if getattr(expand, "name", None) != "memref.expand_shape":
                continue
            source = expand.operands[0]
            same_groups = str(collapse.attributes["reassociation"]) == str(
                expand.attributes["reassociation"]
            )
            if same_groups and source.type == collapse.results[0].type:
                collapse.results[0].replace_all_uses_with(source)
                collapse.erase()

    return run
