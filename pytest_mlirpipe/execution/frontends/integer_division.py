"""Integer floor division as exact integer ops, decomposed before an import to linalg."""

from __future__ import annotations

from typing import Any

# torch-mlir lowers an integer floor division to linalg through float64 (sitofp, divf, floor,
# fptosi): beyond 2**53 the quotient is rounded, 9223372036854775806 // 1073741824 gives
# 8589934592 instead of 8589934591. Its truncating division is an exact arith.divsi, so this
# decomposition computes floor division from it. (Its TOSA lowering is not helped: there
# torch-mlir computes int64 sums and differences in int32.)


def _is_integral(a: Any, b: Any) -> bool:
    import torch

    dtype = torch.result_type(a, b)
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


def _floor_divide(a: Any, b: Any) -> Any:
    """a / b rounded down: the truncated quotient, one lower where the remainder is not 0 and
    its sign is not the divisor's. On floating-point operands it declines (the op stays)."""
    import torch

    if not _is_integral(a, b):
        return NotImplemented
    aten = torch.ops.aten
    if isinstance(b, torch.Tensor):
        quotient = aten.div.Tensor_mode(a, b, rounding_mode="trunc")
        sign = torch.sign(b)
    else:
        quotient = aten.div.Scalar_mode(a, b, rounding_mode="trunc")
        sign = (b > 0) - (b < 0)
    below = torch.sign(a - quotient * b) * sign < 0
    return quotient - below.to(quotient.dtype)


def _div_mode(a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
    return _floor_divide(a, b) if rounding_mode == "floor" else NotImplemented


def exact_floor_division() -> dict[Any, Any]:
    """Decompositions (op overload -> function) of integer floor division into truncating
    division: torch.div(..., rounding_mode="floor"), torch.floor_divide and `//`."""
    import torch

    aten = torch.ops.aten
    return {
        aten.div.Tensor_mode: _div_mode,
        aten.div.Scalar_mode: _div_mode,
        aten.floor_divide.default: _floor_divide,
        aten.floor_divide.Scalar: _floor_divide,
    }


def divides_integers(program: Any) -> bool:
    """Whether an exported program floor-divides integers (an op `exact_floor_division`
    decomposes, with an integer result)."""
    return any(
        n.op == "call_function" and _floors(n) and _is_integer(n.meta.get("val"))
        for n in program.graph.nodes
    )


def _floors(node: Any) -> bool:
    """Whether an FX node is a floor division (a div with rounding_mode="floor")."""
    import torch

    aten = torch.ops.aten
    if node.target in (aten.floor_divide.default, aten.floor_divide.Scalar):
        return True
    if node.target not in (aten.div.Tensor_mode, aten.div.Scalar_mode):
        return False
    mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
    return mode == "floor"


def _is_integer(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype is not None and not (dtype.is_floating_point or dtype.is_complex)
