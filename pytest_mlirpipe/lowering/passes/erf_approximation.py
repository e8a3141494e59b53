"""`mlirpipe-approximate-erf`: each f32 `math.erf` as arithmetic of our own, within 1.3 ulp.

Left to the end of the pipeline, `math.erf` is expanded by refbackend's
`refback-expand-ops-for-llvm` into upstream's rational approximation, off by up to 4.2 ulp
(2.5e-7 near x = 1.84). Here erf is two polynomials, fitted by least squares on Chebyshev
nodes against float64's erf and measured in f32 arithmetic:

- |x| < 1: erf(x) = x + x (2/sqrt(pi) - 1 + z Q(z)), z = x^2, Q of degree 5 weighted by the
  relative error (the term added to x is at most 0.13 x, so its rounding errors count for
  little);
- 1 <= |x| < 4: erf(|x|) = 1 - R(|x| - 2.5), R of degree 14 fitted to erfc (on Chebyshev
  polynomials, for the absolute error, which is erf's), then the sign of x; from |x| = 4 (3.92
  already rounds to 1) |x| is clamped to 4. Without an exp (erfc = exp(-x^2) times a smooth
  function, with exp by `mlirpipe-approximate-exp`'s polynomial, was as accurate and a third
  slower).

Both are computed and one is selected, as the vectorized code must. NaN gives NaN, -0 gives -0,
+-inf gives +-1.
"""

from __future__ import annotations

import math

from .exp_approximation import f32_ops_replaced
from .registry import PassBody, register

PASS = "mlirpipe-approximate-erf"

SMALL = 1.0  # below it the polynomial in x^2, from it 1 - R
CLAMP = 4.0  # |x| clamped to it: erf(3.92) rounds to 1 in f32
CENTER = 2.5  # R's variable is |x| - 2.5, the middle of 1 ... 4
TWO_OVER_SQRT_PI_MINUS_1 = 2.0 / math.sqrt(math.pi) - 1.0
# Highest degree first; Q's constant term is -2 / (3 sqrt(pi)).
Q = (8.351701399078593e-05, -0.0008154899696819484, 0.005203950218856335,
     -0.02686147205531597, 0.11283750832080841, -0.37612637877464294)  # fmt: skip
# erfc(x) on 1 <= x <= 4, in t = x - 2.5: absolute errors, which is what they are in erf.
R = (-8.90137130227231e-07, -4.985672035218158e-07, 1.5719271686975844e-05,
     -1.7760237824404612e-05, -8.110047201626003e-05, 0.00027061818400397897,
     -0.0002587301132734865, -0.0005603601457551122, 0.002797554712742567,
     -0.006109109614044428, 0.008622604422271252, -0.008351769298315048,
     0.005445688497275114, -0.002178184688091278, 0.0004069523711223155)  # fmt: skip


@register(
    PASS,
    "Replace each math.erf of f32 (a scalar: the body of a linalg.generic, before "
    "vectorization) by arith ops: a polynomial in x^2 below |x| = 1, 1 - R(|x|) above it (R "
    "fitted to erfc), within 1.3 ulp; NaN for NaN, +-1 for +-inf",
)
def approximate_erf(options: dict[str, str]) -> PassBody:
    return f32_ops_replaced("math.erf", erf_f32)


def erf_f32(x, f32, ir):
    """erf(x) of an f32 scalar `x` as arith ops at the current insertion point and location."""
    from torch_mlir.dialects import arith, math

    def const(value: float):
        return arith.constant(f32, value)

    def horner(coefficients: tuple[float, ...], t):
        p = const(coefficients[0])
        for c in coefficients[1:]:
            p = arith.addf(arith.mulf(p, t), const(c))
        return p

    z = arith.mulf(x, x)
    term = arith.addf(const(TWO_OVER_SQRT_PI_MINUS_1), arith.mulf(z, horner(Q, z)))
    small = arith.addf(x, arith.mulf(x, term))
    # minimumf keeps a NaN (minnumf would clamp it to 4), which the arithmetic passes on.
    a = arith.minimumf(math.absf(x), const(CLAMP))
    tail = horner(R, arith.subf(a, const(CENTER)))
    large = math.copysign(arith.subf(const(1.0), tail), x)
    is_small = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(x), const(SMALL))
    result = arith.select(is_small, small, large)
    return result
