"""`mlirpipe-approximate-log`: each f32 `math.log` as arithmetic a vectorizer can widen.

`math.log` lowers to `llvm.intr.log`, which LLVM makes a call of the C library's `logf` per
element, in vectors too (a log-softmax takes the log of each row's sum). Here it is Cephes'
`logf`: x = m 2^e with m in [sqrt(1/2), sqrt(2)) taken from x's bits (a subnormal x scaled by
2^23 first), log(m) = f - f^2 / 2 + f^3 P(f) with f = m - 1 and P of degree 8, plus e ln 2 (ln 2
in two parts). 0 gives -inf, a negative x NaN, +inf +inf, NaN NaN.
"""

from __future__ import annotations

from .exp_approximation import f32_ops_replaced
from .registry import PassBody, register

PASS = "mlirpipe-approximate-log"

SQRT_HALF = 0.707106781186547524
LN2_HI = 0.693359375  # ln 2 to 9 bits: e * LN2_HI is exact
LN2_LO = -2.12194440e-4  # ln 2 - LN2_HI
MIN_NORMAL = 1.17549435e-38  # 2^-126: below it x is scaled by 2^23 before its bits are read
# log(1 + f) = f - f^2 / 2 + f^3 (P0 f^8 + ... + P8) on sqrt(1/2) - 1 <= f < sqrt(2) - 1.
POLYNOMIAL = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
              1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
              3.3333331174e-1)  # fmt: skip


@register(
    PASS,
    "Replace each math.log of f32 (a scalar: the body of a linalg.generic, before "
    "vectorization) by arith ops: Cephes' polynomial logf on the mantissa plus the exponent "
    "times ln 2; -inf for 0, NaN below 0 and for NaN, +inf for +inf",
)
def approximate_log(options: dict[str, str]) -> PassBody:
    return f32_ops_replaced("math.log", log_f32)


def log_f32(x, f32, ir):
    """log(x) of an f32 scalar `x` as arith ops at the current insertion point and location."""
    from torch_mlir.dialects import arith

    i32 = ir.IntegerType.get_signless(32)

    def const(value: float):
        return arith.constant(f32, value)

    def int_const(value: int):
        return arith.constant(i32, value)

    subnormal = arith.cmpf(arith.CmpFPredicate.OLT, x, const(MIN_NORMAL))
    scaled = arith.select(subnormal, arith.mulf(x, const(2.0**23)), x)
    bits = arith.bitcast(i32, scaled)
    # m in [1/2, 1): x's mantissa under the exponent of 1/2; e: x's exponent + 1
    biased = arith.andi(arith.shrui(bits, int_const(23)), int_const(0xFF))
    e = arith.subi(biased, arith.select(subnormal, int_const(126 + 23), int_const(126)))
    mantissa = arith.andi(bits, int_const(0x807FFFFF))
    m = arith.bitcast(f32, arith.ori(mantissa, int_const(0x3F000000)))
    # m below sqrt(1/2): 2m and e - 1, so that f is within sqrt(1/2) - 1 ... sqrt(2) - 1
    low = arith.cmpf(arith.CmpFPredicate.OLT, m, const(SQRT_HALF))
    f = arith.subf(arith.select(low, arith.addf(m, m), m), const(1.0))
    k = arith.sitofp(f32, arith.subi(e, arith.extui(i32, low)))
    z = arith.mulf(f, f)
    p = const(POLYNOMIAL[0])
    for c in POLYNOMIAL[1:]:
        p = arith.addf(arith.mulf(p, f), const(c))
    y = arith.mulf(arith.mulf(p, f), z)
    y = arith.addf(y, arith.mulf(k, const(LN2_LO)))
    y = arith.subf(y, arith.mulf(z, const(0.5)))
    result = arith.addf(arith.addf(f, y), arith.mulf(k, const(LN2_HI)))
    zero = arith.cmpf(arith.CmpFPredicate.OEQ, x, const(0.0))
    negative = arith.cmpf(arith.CmpFPredicate.OLT, x, const(0.0))
    inf = arith.cmpf(arith.CmpFPredicate.OEQ, x, const(float("inf")))
    nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    result = arith.select(zero, const(float("-inf")), result)
    result = arith.select(negative, const(float("nan")), result)
    result = arith.select(inf, x, result)
    result = arith.select(nan, x, result)
    return result
