"""Inputs of the report tests: a matmul, and a module of a given size."""

from __future__ import annotations

# linalg.fill and linalg.matmul on tensors: refbackend lowers them to loops, then to llvm.
MATMUL = """\
func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant dense<1.000000e+00> : tensor<2x2xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.matmul ins(%arg0, %cst_0 : tensor<2x2xf32>, tensor<2x2xf32>) \
outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
"""


def chain_of_adds(n: int) -> str:
    """A function of `n` chained `linalg.add`s; refbackend's last stage prints ~27 lines each."""
    lines = ["func.func @forward(%arg0: tensor<8xf32>) -> tensor<8xf32> {"]
    previous = "%arg0"
    for i in range(n):
        lines.append(f"  %e{i} = tensor.empty() : tensor<8xf32>")
        lines.append(
            f"  %v{i} = linalg.add ins({previous}, %arg0 : tensor<8xf32>, tensor<8xf32>) "
            f"outs(%e{i} : tensor<8xf32>) -> tensor<8xf32>"
        )
        previous = f"%v{i}"
    lines.append(f"  return {previous} : tensor<8xf32>\n}}\n")
    return "\n".join(lines)
