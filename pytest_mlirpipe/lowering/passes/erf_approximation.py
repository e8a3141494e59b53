"""`mlirpipe-approximate-erf`: each f32 `math.erf` as arithmetic of our own, within 1.4 ulp.

Left to the end of the pipeline, `math.erf` is expanded by refbackend's
`refback-expand-ops-for-llvm` into upstream's rational approximation, off by up to 4.2 ulp
(2.5e-7 near x = 1.84). Here erf is two polynomials, fitted (least squares weighted by the
relative error, on Chebyshev nodes) against float64's erf and measured in f32 arithmetic:

- |x| < 1: erf(x) = x + x (2/sqrt(pi) - 1 + z Q(z)), z = x^2, Q of degree 5 (the term added to x
  is at most 0.13 x, so its rounding errors count for little);
- 1 <= |x| < 4: erf(|x|) = 1 - exp(-x^2) R(|x| - 2.5), R of degree 11 fitted to erfc(x) e^(x^2),
  exp by `mlirpipe-approximate-exp`'s polynomial, then the sign of x; from |x| = 4 (3.92 already
  rounds to 1) |x| is clamped to 4.

Both are computed and one is selected, as the vectorized code must. NaN gives NaN, -0 gives -0,
+-inf gives +-1.
"""

from __future__ import annotations

import math

from ..op_query import all_ops
from .exp_approximation import exp_f32
from .registry import PassBody, register

PASS = "mlirpipe-approximate-erf"

SMALL = 1.0  # below it the polynomial in x^2, from it 1 - exp(-x^2) R
CLAMP = 4.0  # |x| clamped to it: erf(3.92) rounds to 1 in f32
CENTER = 2.5  # R's variable is |x| - 2.5, the middle of 1 ... 4
TWO_OVER_SQRT_PI_MINUS_1 = 2.0 / math.sqrt(math.pi) - 1.0
# Highest degree first; Q's constant term is -2 / (3 sqrt(pi)).
Q = (8.351701399078593e-05, -0.0008154899696819484, 0.005203950218856335,
     -0.02686147205531597, 0.11283750832080841, -0.37612637877464294)  # fmt: skip
R = (-3.835798736417928e-07, 1.6588418247920345e-06, -4.009343228972284e-06,
     1.4425777408177964e-05, -5.8942707255482674e-05, 0.00021283204841893166,
     -0.0007337129791267216, 0.0024660928174853325, -0.008001474663615227,
     0.024938173592090607, -0.0743473619222641, 0.21080635488033295)  # fmt: skip


@register(
    PASS,
    "Replace each math.erf of f32 (a scalar: the body of a linalg.generic, before "
    "vectorization) by arith ops: a polynomial in x^2 below |x| = 1, 1 - exp(-x^2) R(|x|) "
    "above it with exp approximated, within 1.4 ulp; NaN for NaN, +-1 for +-inf",
)
def approximate_erf(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        f32 = ir.F32Type.get()
        for erf in [o for o in all_ops(op) if o.name == "math.erf"]:
            if erf.results[0].type == f32:
                _expand(erf, f32, ir)

    return run


def _expand(erf, f32, ir) -> None:
    from torch_mlir.dialects import arith, math

    with ir.InsertionPoint(erf), erf.location:

        def const(value: float):
            return arith.constant(f32, value)

        def horner(coefficients: tuple[float, ...], t):
            p = const(coefficients[0])
            for c in coefficients[1:]:
                p = arith.addf(arith.mulf(p, t), const(c))
            return p

        x = erf.operands[0]
        z = arith.mulf(x, x)
        term = arith.addf(const(TWO_OVER_SQRT_PI_MINUS_1), arith.mulf(z, horner(Q, z)))
        small = arith.addf(x, arith.mulf(x, term))
        # minimumf keeps a NaN (minnumf would clamp it to 4); exp_f32 passes it on.
        a = arith.minimumf(math.absf(x), const(CLAMP))
        e = exp_f32(arith.negf(arith.mulf(a, a)), f32, ir)
        tail = arith.mulf(e, horner(R, arith.subf(a, const(CENTER))))
        large = math.copysign(arith.subf(const(1.0), tail), x)
        is_small = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(x), const(SMALL))
        result = arith.select(is_small, small, large)
    erf.results[0].replace_all_uses_with(result)
    erf.erase()
