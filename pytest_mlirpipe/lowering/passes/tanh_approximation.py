"""`mlirpipe-approximate-tanh`: each f32 `math.tanh` as arithmetic a vectorizer can widen.

Left to the end of the pipeline, `math.tanh` is expanded by refbackend's
`refback-expand-ops-for-llvm` into (1 - e^-2|x|) / (1 + e^-2|x|) with `math.exp`, which
`llvm.intr.exp` makes a call of the C library's `expf` per element, in vectors too (tanh-GELU,
as GPT-2 uses it, made one call per activation); near 0 that quotient also loses its digits
(1,500 ulp at x = 1e-4). Here it is Cephes' `tanhf`: for |x| < 0.625 the odd polynomial
x + x^3 P(x^2) (P of degree 4), above it 1 - 2 / (e^2|x| + 1) with the sign of x, e^2|x| by
`mlirpipe-approximate-exp`'s polynomial (2|x| clamped to 20, where tanh rounds to 1 already).
Both are computed on |x| and one is selected, as the vectorized code must, then given the sign
of x. NaN gives NaN, -0 gives -0.
"""

from __future__ import annotations

from .exp_approximation import exp_f32, f32_ops_replaced
from .registry import PassBody, register

PASS = "mlirpipe-approximate-tanh"

SMALL = 0.625  # below it the polynomial, from it the exponential
# 2|x| clamped to it: tanh(10) is 1 - 4e-9, which rounds to 1 in f32 (tanh(9) does not)
MAX_DOUBLED = 20.0
# tanh(a) = a + a z (P0 + z (P1 + z (P2 + z (P3 + z P4)))) with z = a^2, a = |x| < 0.625.
POLYNOMIAL = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
              -3.33332819422e-1)  # fmt: skip


@register(
    PASS,
    "Replace each math.tanh of f32 (a scalar: the body of a linalg.generic, before "
    "vectorization) by arith ops: Cephes' tanhf, an odd polynomial below |x| = 0.625 and "
    "1 - 2 / (exp(2|x|) + 1) with exp approximated above it; NaN for NaN",
)
def approximate_tanh(options: dict[str, str]) -> PassBody:
    return f32_ops_replaced("math.tanh", tanh_f32)


def tanh_f32(x, f32, ir):
    """tanh(x) of an f32 scalar `x` as arith ops at the current insertion point and location."""
    from torch_mlir.dialects import arith, math

    def const(value: float):
        return arith.constant(f32, value)

    a = math.absf(x)
    z = arith.mulf(a, a)
    p = const(POLYNOMIAL[0])
    for c in POLYNOMIAL[1:]:
        p = arith.addf(arith.mulf(p, z), const(c))
    small = arith.addf(arith.mulf(arith.mulf(p, z), a), a)
    # minimumf keeps a NaN (minnumf would clamp it); exp_f32 passes it on.
    e = exp_f32(arith.minimumf(arith.mulf(a, const(2.0)), const(MAX_DOUBLED)), f32, ir)
    large = arith.subf(const(1.0), arith.divf(const(2.0), arith.addf(e, const(1.0))))
    is_small = arith.cmpf(arith.CmpFPredicate.OLT, a, const(SMALL))
    # on |x|, then the sign of x: -0 + (+0) would be +0
    result = math.copysign(arith.select(is_small, small, large), x)
    return result
