"""`mlirpipe-mark-elementwise`: mark the elementwise linalg.generic ops a script vectorizes."""

from __future__ import annotations

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-mark-elementwise"
MARK = "mlirpipe.elementwise"
MAX_RANK = 4


@register(
    PASS,
    f"Mark each linalg.generic on tensors of static shapes whose loops are all parallel, that "
    f"has a result, whose rank is 1 to {MAX_RANK} and whose operands' elements are integers or "
    f"floats of 8 bits or more with {MARK} = its rank (a vector of i1 is loaded and stored as "
    "bits, not as the bytes of a tensor of i1)",
)
def mark_elementwise(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for generic in [o for o in all_ops(op) if o.name == "linalg.generic"]:
            rank = _elementwise_rank(generic, ir)
            if rank:
                i64 = ir.IntegerType.get_signless(64)
                generic.attributes[MARK] = ir.IntegerAttr.get(i64, rank)

    return run


def _elementwise_rank(generic, ir) -> int:
    """The number of loops of an elementwise generic this pass marks; else 0."""
    iterators = generic.attributes["iterator_types"]
    if not len(generic.results) or any("parallel" not in str(it) for it in iterators):
        return 0
    if not 1 <= len(iterators) <= MAX_RANK:
        return 0
    for value in generic.operands:
        if not isinstance(value.type, ir.RankedTensorType):
            return 0
        kind = ir.RankedTensorType(value.type)
        element = kind.element_type
        if not kind.has_static_shape:
            return 0
        if isinstance(element, ir.IntegerType):
            if ir.IntegerType(element).width < 8:
                return 0
        elif not isinstance(element, ir.FloatType):
            return 0
    return len(iterators)
