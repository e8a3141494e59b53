"""The tanh GELU as torch computes it, decomposed before an import to torch or linalg."""

from __future__ import annotations

from typing import Any

from ...lowering.passes.tanh_gelu import K_BETA, K_KAPPA

# torch-mlir's lowering of `gelu(x, approximate="tanh")` to linalg (convert-torch-to-linalg)
# multiplies by 0.7977240352174656 where torch multiplies by sqrt(2 / pi) = 0.7978845608...:
# results are off by up to 5e-5 (GPT-2's MLP uses this GELU). An import to linalg runs that
# lowering inside torch-mlir's importer, where no pipeline of ours can rewrite the op first
# (pipelines taking the torch dialect do: mlirpipe-decompose-tanh-gelu); to TOSA torch-mlir
# computes sqrt(2 / pi) itself. So the op is decomposed here, as torch computes it
# (aten/src/ATen/native/cpu/Activation.cpp): kBeta = sqrt(2) * (2 / sqrt(pi)) / 2.


def _gelu(x: Any, approximate: str = "none") -> Any:
    """0.5 x (1 + tanh(kBeta (x + kKappa x^3))) for the tanh GELU; the erf GELU declines (the
    op stays, and torch-mlir lowers it right)."""
    import torch

    if approximate != "tanh":
        return NotImplemented
    inner = K_BETA * (x + K_KAPPA * (x * x * x))
    return 0.5 * x * (1.0 + torch.tanh(inner))


def exact_tanh_gelu() -> dict[Any, Any]:
    """Decompositions (op overload -> function) of the tanh GELU into torch's formula."""
    import torch

    return {torch.ops.aten.gelu.default: _gelu}


def has_tanh_gelu(program: Any) -> bool:
    """Whether an exported program computes a GELU with approximate="tanh"."""
    import torch

    return any(
        n.op == "call_function"
        and n.target == torch.ops.aten.gelu.default
        and n.kwargs.get("approximate", n.args[1] if len(n.args) > 1 else "none") == "tanh"
        for n in program.graph.nodes
    )
