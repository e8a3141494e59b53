"""`mlirpipe-approximate-exp`: each f32 `math.exp` as arithmetic a vectorizer can widen.

`math.exp` lowers to `llvm.intr.exp`, which LLVM makes a call of the C library's `expf` per
element, in vectors too (a softmax of 128 x 768 spent most of its time in those calls). Here it
becomes the polynomial of Cephes' `expf`: x = k ln 2 + r with k = floor(x log2(e) + 1/2) and
|r| <= ln(2) / 2 (ln 2 in two parts, so that k ln 2 is exact), exp(r) by a polynomial of degree 7
(within 1 ulp of exp on that range), times 2^k built from k's bits. x above ln(FLT_MAX) gives
+inf, x below ln(2^-150) gives 0, NaN gives NaN; between, subnormal results are rounded once
more (as torch's are).
The upstream pass that does this (math's polynomial approximation) is not in torch-mlir's build.
"""

from __future__ import annotations

from collections.abc import Callable

from ..op_query import all_ops
from .registry import PassBody, register

PASS = "mlirpipe-approximate-exp"

LOG2E = 1.44269504088896341
LN2_HI = 0.693359375  # ln 2 to 9 bits: k * LN2_HI is exact for |k| < 2^15
LN2_LO = -2.12194440e-4  # ln 2 - LN2_HI
# exp(r) = 1 + r + r^2 (P5 + r (P4 + r (P3 + r (P2 + r (P1 + r P0))))) on |r| <= ln(2) / 2.
POLYNOMIAL = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
              1.6666665459e-1, 5.0000001201e-1)  # fmt: skip
MAX_INPUT = 88.72283935546875  # ln(FLT_MAX), rounded up: above it exp overflows to +inf
MIN_INPUT = -103.972077083991796  # ln(2^-150): below it exp rounds to 0


@register(
    PASS,
    "Replace each math.exp of f32 (a scalar: the body of a linalg.generic, before vectorization) "
    "by arith ops: Cephes' polynomial expf, within 1 ulp of exp; +inf above ln(FLT_MAX), 0 below "
    "ln(2^-150), NaN for NaN",
)
def approximate_exp(options: dict[str, str]) -> PassBody:
    return f32_ops_replaced("math.exp", exp_f32)


def f32_ops_replaced(name: str, build: Callable) -> PassBody:
    """The body of a pass that replaces each op `name` of one f32 operand and result (a
    scalar: the body of a linalg.generic, before vectorization) by what `build(x, f32, ir)`
    makes of its operand x at its place."""

    def run(op, pass_) -> None:
        from ...mlir_env import ir

        f32 = ir.F32Type.get()
        for found in [o for o in all_ops(op) if o.name == name]:
            if found.results[0].type == f32:
                with ir.InsertionPoint(found), found.location:
                    result = build(found.operands[0], f32, ir)
                found.results[0].replace_all_uses_with(result)
                found.erase()

    return run


def exp_f32(x, f32, ir):
    """exp(x) of an f32 scalar `x` as arith ops at the current insertion point and location
    (the approximation of `mlirpipe-approximate-exp`; other approximations build on it)."""
    from torch_mlir.dialects import arith, math

    i32 = ir.IntegerType.get_signless(32)

    def const(value: float):
        return arith.constant(f32, value)

    clamped = arith.maxnumf(arith.minnumf(x, const(MAX_INPUT)), const(MIN_INPUT))
    k = math.floor(arith.addf(arith.mulf(clamped, const(LOG2E)), const(0.5)))
    r = arith.subf(clamped, arith.mulf(k, const(LN2_HI)))
    r = arith.subf(r, arith.mulf(k, const(LN2_LO)))
    p = const(POLYNOMIAL[0])
    for c in POLYNOMIAL[1:]:
        p = arith.addf(arith.mulf(p, r), const(c))
    y = arith.addf(arith.addf(arith.mulf(p, arith.mulf(r, r)), r), const(1.0))
    # 2^k as 2^(k >> 1) * 2^(k - (k >> 1)): k runs over -150 ... 128 on the clamped range,
    # beyond the exponents of normal floats (-126 ... 127); each half is within them, and
    # the products are exact but for a subnormal result.
    ki = arith.fptosi(i32, k)
    half = arith.shrsi(ki, arith.constant(i32, 1))
    scaled = arith.mulf(
        arith.mulf(y, _power_of_two(half, i32, f32)),
        _power_of_two(arith.subi(ki, half), i32, f32),
    )
    low = arith.cmpf(arith.CmpFPredicate.OLT, x, const(MIN_INPUT))
    high = arith.cmpf(arith.CmpFPredicate.OGT, x, const(MAX_INPUT))
    nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    result = arith.select(low, const(0.0), scaled)
    result = arith.select(high, const(float("inf")), result)
    return arith.select(nan, x, result)


def _power_of_two(n, i32, f32):
    """2^n (n an i32 of -126 ... 127) as a float: n + 127 in the exponent's bits."""
    from torch_mlir.dialects import arith

    biased = arith.addi(n, arith.constant(i32, 127))
    return arith.bitcast(f32, arith.shli(biased, arith.constant(i32, 23)))
