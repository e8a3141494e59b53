"""Compare native results with torch eager: shape, then dtype, then values by one of five rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from ..native.signature import tensor_as_numpy

if TYPE_CHECKING:
    from .samples import Draws

# Per-dtype (rtol, atol): the floor of the scaled rule, and the whole tolerance when a result has
# no float64 reference. Integers and booleans compare exactly.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-3),
    "bfloat16": (1.6e-2, 1e-3),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
}
# The scaled rule accepts a native error up to this many times torch eager's own worst error.
TORCH_ERROR_FACTOR = 10.0
FIRST_N = 5  # differing indices shown in a report


class Rule(StrEnum):
    """Which rule judged a result's values."""

    EXACT = "exact"  # integers and booleans: equal
    GIVEN = "given"  # the test's rtol/atol (or per_dtype entry), element by element against torch
    PER_DTYPE = "per-dtype"  # no float64 reference: the per-dtype pair against torch
    SCALED = "scaled"  # against the float64 result, scaled by torch's own error
    SAMPLES = "samples"  # a model that draws random numbers: its results judged as samples


@dataclass(frozen=True, slots=True)
class Difference:
    """One differing element: its index, the native value, torch's and the float64 one."""

    index: tuple[int, ...]
    actual: Any
    expected: Any
    exact: Any = None  # the float64 (complex128) value, under the scaled rule


@dataclass(frozen=True, slots=True)
class ResultComparison:
    """How one result compares; `ok` says whether it matched. Plain data (picklable)."""

    name: str
    ok: bool
    kind: str  # "match", "count", "shape", "dtype", "values", "unjudged" (random, too few draws)
    shape: tuple[int, ...] = ()
    expected_shape: tuple[int, ...] = ()
    dtype: str = ""
    expected_dtype: str = ""
    rule: str = Rule.PER_DTYPE.value  # a Rule value, kept a plain str for xdist and JSON
    rtol: float = 0.0
    atol: float = 0.0
    factor: float = 0.0  # the scaled rule's factor on torch's error
    native_error: float = 0.0  # scaled rule: max |native - float64|
    torch_error: float = 0.0  # scaled rule: max |torch - float64|
    why_not_scaled: str = ""  # per-dtype rule: why there is no float64 reference
    total: int = 0
    differing: int = 0
    max_abs: float = 0.0  # against torch's result, whatever the rule
    mean_abs: float = 0.0
    max_rel: float = 0.0
    first: tuple[Difference, ...] = ()
    nan_actual: tuple[tuple[int, ...], ...] = ()  # NaN in the native result, not in torch's
    nan_expected: tuple[tuple[int, ...], ...] = ()  # NaN in torch's result, not in the native
    nan_both: int = 0
    inf_actual: tuple[tuple[int, ...], ...] = ()
    drawn: str = ""  # the sample rule: the random ops and the samples they drew
    by_distribution: bool = False  # the sample rule: values judged by their distribution
    reference: str = "torch"  # what computed the expected values, as the report names it

    def format(self) -> str:
        if self.kind == "unjudged":
            from .samples import MIN_DRAWS

            return (
                f"{self.name}: not judged: its {self.total} value"
                f"{'s' if self.total != 1 else ''} may each be one of the few draws "
                f"({self.drawn}; the sample rule needs {MIN_DRAWS} a value), so only its shape "
                "and dtype were compared (they match)"
            )
        if self.kind == "match":
            line = f"{self.name}: matches ({self.total} elements"
            if self.max_abs:
                line += f", max abs error {self.max_abs:.3g}"
            line += ")"
            if self.nan_both:
                line += f"; NaN at the same {self.nan_both} positions in both"
            return line
        if self.kind == "shape":
            return (
                f"{self.name}: shape {list(self.shape)} differs from {self.reference}'s "
                f"{list(self.expected_shape)}"
            )
        if self.kind == "dtype":
            return (
                f"{self.name}: dtype {self.dtype} differs from {self.reference}'s "
                f"{self.expected_dtype}"
            )
        if self.rule == Rule.SAMPLES:
            return (
                f"{self.name}: differs from {self.reference}'s beyond {self.tolerance()}\n"
                f"  max abs error {self.max_abs:.6g}, mean abs error {self.mean_abs:.6g}"
                + "".join(f"\n{line}" for line in self._nan_inf_lines())
            )
        pct = 100.0 * self.differing / max(self.total, 1)
        lines = [
            f"{self.name}: {self.differing} of {self.total} elements differ ({pct:.2f}%) "
            f"beyond {self.tolerance()}",
            *self._scaled_lines(),
            f"  {f'against {self.reference}: ' if self.rule == Rule.SCALED else ''}"
            f"max abs error {self.max_abs:.6g}, mean abs error {self.mean_abs:.6g}, "
            f"max rel error {self.max_rel:.6g}",
        ]
        lines += self._first_lines() + self._nan_inf_lines()
        return "\n".join(lines)

    def tolerance(self) -> str:
        """The rule that judged the values, with its numbers."""
        pair = f"rtol={self.rtol:g}, atol={self.atol:g}"
        if self.rule == Rule.SCALED:
            return (
                f"the scaled tolerance |native - float64| <= {self.factor:g} x "
                f"{self.reference}'s error "
                f"{self.torch_error:.3g} + rtol={self.rtol:g} x |float64| + atol={self.atol:g}"
            )
        if self.rule == Rule.GIVEN:
            return f"the given {pair}"
        if self.rule == Rule.SAMPLES:
            from .samples import SIGMAS

            head = f"the sample rule for random results ({self.drawn})"
            if not self.by_distribution:
                return (
                    f"{head}: |native - torch| = {self.factor:.3g} > {SIGMAS:g} x "
                    f"max(|torch|, 1) / sqrt(samples) = {self.atol:.3g}"
                )
            return (
                f"{head}: the distributions of their values differ (Kolmogorov-Smirnov "
                f"distance {self.factor:.3g} > {self.atol:.3g})"
            )
        if self.rule == Rule.PER_DTYPE:
            return f"{pair} (the {self.expected_dtype} default: {self.why_not_scaled})"
        return "exact equality"

    def _scaled_lines(self) -> list[str]:
        if self.rule != Rule.SCALED:
            return []
        ratio = self.native_error / self.torch_error if self.torch_error else float("inf")
        return [
            f"  against the float64 result: native max error {self.native_error:.6g}, "
            f"{self.reference}'s {self.torch_error:.6g} (ratio {ratio:.3g})"
        ]

    def _first_lines(self) -> list[str]:
        if not self.first:
            return []
        if self.rule == Rule.SCALED:
            return [
                f"  first differing (index: native vs {self.reference}, float64):",
                *(
                    f"    {list(d.index)}: {d.actual!r} vs {d.expected!r}, {d.exact!r}"
                    for d in self.first
                ),
            ]
        return [
            f"  first differing (index: native vs {self.reference}):",
            *(f"    {list(d.index)}: {d.actual!r} vs {d.expected!r}" for d in self.first),
        ]

    def _nan_inf_lines(self) -> list[str]:
        lines = []
        if self.nan_actual:
            lines.append(
                f"  NaN in the native result where {self.reference} has a number: "
                f"{len(self.nan_actual)} "
                f"positions, first {_indices(self.nan_actual)}"
            )
        if self.nan_expected:
            lines.append(
                f"  NaN in {self.reference}'s result where the native one has a number: "
                f"{len(self.nan_expected)} positions, first {_indices(self.nan_expected)}"
            )
        if self.inf_actual:
            lines.append(
                f"  Inf in the native result: {len(self.inf_actual)} positions, first "
                f"{_indices(self.inf_actual)}"
            )
        return lines


def _indices(where: tuple[tuple[int, ...], ...]) -> str:
    return ", ".join(str(list(i)) for i in where[:FIRST_N])


class RandomResultNotJudged(UserWarning):
    """A result of a passing check computed from too few random draws for its values to be
    judged: only its shape and dtype were compared."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """All results of one run against torch."""

    results: tuple[ResultComparison, ...]
    count_problem: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.count_problem is None and all(r.ok for r in self.results)

    @property
    def max_abs(self) -> float:
        return max((r.max_abs for r in self.results), default=0.0)

    @property
    def unjudged(self) -> tuple[ResultComparison, ...]:
        """The random results too few draws made to judge their values (see samples.py)."""
        return tuple(r for r in self.results if r.kind == "unjudged")

    def format(self) -> str:
        lines = [self.count_problem] if self.count_problem else []
        lines += [r.format() for r in self.results]
        return "\n".join(lines)


def as_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return tensor_as_numpy(value)
    return np.asarray(value)


def flatten_results(value: Any) -> list[Any]:
    """torch's output as a flat list: a tensor, or a tuple/list of them (nested allowed)."""
    if isinstance(value, list | tuple):
        out: list[Any] = []
        for v in value:
            out.extend(flatten_results(v))
        return out
    return [value]


def tolerance_for(
    dtype: np.dtype,
    rtol: float | None = None,
    atol: float | None = None,
    per_dtype: Mapping[str, tuple[float, float]] | None = None,
) -> tuple[float, float]:
    table = {**DEFAULT_TOLERANCES, **(per_dtype or {})}
    r, a = table.get(np.dtype(dtype).name, (0.0, 0.0))
    return (r if rtol is None else rtol, a if atol is None else atol)


@dataclass(frozen=True, slots=True)
class Tolerances:
    """The tolerances a check is given: `rtol`/`atol` for every inexact result, and per dtype
    (`per_dtype`: dtype name -> (rtol, atol)); a result none of them covers is judged by the
    default rule (see rule_for)."""

    rtol: float | None = None
    atol: float | None = None
    per_dtype: Mapping[str, tuple[float, float]] | None = None
    draws: Draws | None = None  # a model that draws random numbers (see samples.py)

    @property
    def uniform(self) -> bool:
        """Whether `rtol` or `atol` was given (then no float64 run is needed)."""
        return self.rtol is not None or self.atol is not None

    def rule(self, dtype: np.dtype, has_exact: bool) -> Rule:
        return rule_for(dtype, self.rtol, self.atol, self.per_dtype, has_exact)

    def of(self, dtype: np.dtype) -> tuple[float, float]:
        """(rtol, atol) for a result of `dtype`."""
        return tolerance_for(dtype, self.rtol, self.atol, self.per_dtype)


NO_TOLERANCES = Tolerances()


def is_inexact(dtype: np.dtype) -> bool:
    """Floating point or complex, numpy's own or ml_dtypes' (bfloat16 is kind 'V')."""
    return dtype.kind in "fc" or dtype.name in DEFAULT_TOLERANCES


def widened(x: np.ndarray) -> np.ndarray:
    """`x` as complex128 when complex, else float64 (bfloat16 and float16 included)."""
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def rule_for(
    dtype: np.dtype,
    rtol: float | None,
    atol: float | None,
    per_dtype: Mapping[str, tuple[float, float]] | None,
    has_exact: bool,
) -> Rule:
    """Integers and booleans: exact; a given tolerance: given; float64 result: scaled."""
    if not is_inexact(dtype):
        return Rule.EXACT
    if rtol is not None or atol is not None or np.dtype(dtype).name in (per_dtype or {}):
        return Rule.GIVEN
    return Rule.SCALED if has_exact else Rule.PER_DTYPE


def compare_one(
    name: str,
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    per_dtype: Mapping[str, tuple[float, float]] | None = None,
    exact: np.ndarray | None = None,
    why_not_scaled: str = "no float64 reference",
) -> ResultComparison:
    """Compare one native result with torch's; `exact` is the float64 (complex128) result."""
    tolerances = Tolerances(rtol, atol, per_dtype)
    return _compare_one(name, actual, expected, tolerances, exact, why_not_scaled)


def _compare_one(
    name: str,
    actual: Any,
    expected: Any,
    tolerances: Tolerances,
    exact: np.ndarray | None,
    why_not_scaled: str,
) -> ResultComparison:
    a, e = as_numpy(actual), as_numpy(expected)
    if a.shape != e.shape:
        return ResultComparison(
            name, False, "shape", shape=a.shape, expected_shape=e.shape, total=e.size
        )
    common: dict[str, Any] = {
        "shape": a.shape,
        "expected_shape": e.shape,
        "dtype": a.dtype.name,
        "expected_dtype": e.dtype.name,
        "total": int(e.size),
    }
    if a.dtype != e.dtype:
        return ResultComparison(name, False, "dtype", **common)
    draws = tolerances.draws
    if (
        draws is not None
        and not tolerances.uniform
        and e.dtype.name not in (tolerances.per_dtype or {})
    ):
        return _compare_samples(name, a, e, draws, common)
    x, why_not = _usable_exact(exact, e, why_not_scaled)
    rule = tolerances.rule(e.dtype, x is not None)
    r, t = tolerances.of(e.dtype)
    common.update(rule=rule.value, rtol=r, atol=t)
    if rule is Rule.SCALED:
        assert x is not None  # the rule is SCALED only with the float64 result
        m, numbers = _scaled_masks(a, e, x, r, t)
        common.update(numbers)
    else:
        m = _masks(a, e, r, t)
        common["why_not_scaled"] = why_not if rule is Rule.PER_DTYPE else ""
    common.update(_errors(m.diff, e))
    n_bad = int(np.count_nonzero(m.bad))
    if not n_bad:
        return ResultComparison(name, True, "match", nan_both=m.nan_both, **common)
    return ResultComparison(
        name,
        False,
        "values",
        differing=n_bad,
        first=_first_differences(a, e, x if rule is Rule.SCALED else None, m.bad),
        nan_actual=_where(m.nan_actual),
        nan_expected=_where(m.nan_expected),
        nan_both=m.nan_both,
        inf_actual=_where(m.inf_actual),
        **common,
    )


def _compare_samples(
    name: str, a: np.ndarray, e: np.ndarray, draws: Draws, common: dict[str, Any]
) -> ResultComparison:
    """A result of a model that draws random numbers, computed from a draw: one value is a
    statistic of the samples (within SIGMAS x max(|torch|, 1) / sqrt(samples) of torch's);
    several are judged by their distribution (a two-sample Kolmogorov-Smirnov test), or, when
    they are too few for that test to tell anything, each as a statistic; NaN must be where
    torch has NaN, in number."""
    from .samples import MIN_DRAWS, ks_bound, ks_distance, statistic_bound

    af, ef = _as_reals(a), _as_reals(e)
    nan_a, nan_e = np.isnan(af), np.isnan(ef)
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities differ by nothing
        diff = np.abs(np.where(nan_a | nan_e | (af == ef), 0.0, af - ef))
    finite_a, finite_e = af[~nan_a], ef[~nan_e]
    bound = ks_bound(max(finite_a.size, 1), max(finite_e.size, 1))
    by_distribution = e.size > 1 and bound < 1.0
    nan_differs = int(np.count_nonzero(nan_a)) != int(np.count_nonzero(nan_e))
    if not by_distribution and draws.samples < MIN_DRAWS * e.size and not nan_differs:
        # too few values for their distribution, and too few draws for each to be a
        # statistic: each may be a draw of its own, which no rule can judge
        common.update(rule=Rule.SAMPLES.value, drawn=draws.describe())
        return ResultComparison(name, True, "unjudged", **common)
    if not by_distribution:
        statistic, bound = float(diff.max(initial=0.0)), statistic_bound(ef, draws.samples)
    else:
        statistic = ks_distance(finite_a, finite_e) if finite_a.size and finite_e.size else 0.0
    ok = statistic <= bound and not nan_differs
    common.update(rule=Rule.SAMPLES.value, rtol=0.0, atol=bound, factor=statistic)
    common.update(drawn=draws.describe(), by_distribution=by_distribution, **_errors(diff, ef))
    return ResultComparison(
        name,
        ok,
        "match" if ok else "values",
        differing=0 if ok else int(e.size),
        nan_actual=_where(nan_a & ~nan_e) if nan_differs else (),
        nan_expected=_where(nan_e & ~nan_a) if nan_differs else (),
        **common,
    )


def _as_reals(x: np.ndarray) -> np.ndarray:
    """Values as float64; a complex result's real and imaginary parts side by side."""
    if x.dtype.kind == "c":
        return np.concatenate([x.real.ravel(), x.imag.ravel()]).astype(np.float64)
    return widened(x).astype(np.float64)


def _first_differences(
    a: np.ndarray, e: np.ndarray, x: np.ndarray | None, bad: np.ndarray
) -> tuple[Difference, ...]:
    return tuple(
        Difference(
            tuple(int(i) for i in ix),
            _item(a, ix),
            _item(e, ix),
            _item(x, ix) if x is not None else None,
        )
        for ix in np.argwhere(bad)[:FIRST_N]
    )


def _usable_exact(
    exact: np.ndarray | None, e: np.ndarray, why_not: str
) -> tuple[np.ndarray | None, str]:
    """The float64 result when it fits torch's (same shape, the widened dtype), else why not."""
    if exact is None or not is_inexact(e.dtype):
        return None, why_not
    x = as_numpy(exact)
    want = np.dtype(np.complex128 if e.dtype.kind == "c" else np.float64)
    if x.shape != e.shape or x.dtype != want:
        return None, (
            f"the float64 run gave {x.dtype.name} {list(x.shape)}, not {want.name} {list(e.shape)}"
        )
    return x, ""


def _item(x: np.ndarray, ix: Any) -> Any:
    """One element as a Python number: an integer as an int, a boolean as a bool (bfloat16
    as a float)."""
    value = x[tuple(ix)]
    return widened(value).item() if is_inexact(x.dtype) else value.item()


def _integer_distance(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """|a - e| of two integer (or boolean) arrays, exact before it becomes float64: the
    difference is taken in uint64, where it neither overflows nor rounds."""
    au, eu = a.astype(np.uint64), e.astype(np.uint64)
    return np.where(a >= e, au - eu, eu - au).astype(np.float64)


@dataclass(frozen=True, slots=True)
class _Masks:
    """Where two same-shaped, same-dtype arrays differ, element by element."""

    bad: np.ndarray  # beyond the tolerances
    diff: np.ndarray  # absolute difference as float64; 0 where NaN or the same Inf
    nan_actual: np.ndarray  # NaN only in the native result
    nan_expected: np.ndarray  # NaN only in torch's
    nan_both: int
    inf_actual: np.ndarray  # Inf in the native result where torch has none


def _masks(a: np.ndarray, e: np.ndarray, rtol: float, atol: float) -> _Masks:
    if not is_inexact(e.dtype):  # integers and booleans compare exactly
        none = np.zeros(a.shape, bool)
        return _Masks(a != e, _integer_distance(a, e), none, none, 0, np.zeros(a.shape, bool))
    a64, e64 = widened(a), widened(e)
    nan_a, nan_e = np.isnan(a64), np.isnan(e64)
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    with np.errstate(invalid="ignore"):
        diff = np.where(nan_a | nan_e, 0.0, np.abs(a64 - e64))
        diff = np.where(np.isinf(a64) & np.isinf(e64) & (a64 == e64), 0.0, diff)
    return _Masks(
        ~close,
        diff,
        nan_a & ~nan_e,
        nan_e & ~nan_a,
        int(np.count_nonzero(nan_a & nan_e)),
        np.isinf(a64) & ~np.isinf(e64),
    )


def _scaled_masks(
    a: np.ndarray, e: np.ndarray, x: np.ndarray, rtol: float, atol: float
) -> tuple[_Masks, dict[str, float]]:
    """The scaled rule where torch's and the float64 result are finite: |native - float64| <=
    factor * (torch's worst |torch - float64|) + rtol * |float64| + atol; elsewhere (NaN, Inf)
    the native result must match torch's as the per-dtype rule says."""
    base = _masks(a, e, rtol, atol)
    finite = np.isfinite(widened(e)) & np.isfinite(x)
    with np.errstate(invalid="ignore", over="ignore"):
        torch_err = np.where(finite, np.abs(widened(e) - x), 0.0)
        native_err = np.where(finite, np.abs(widened(a) - x), 0.0)
        torch_error = float(torch_err.max()) if torch_err.size else 0.0
        bound = TORCH_ERROR_FACTOR * torch_error + rtol * np.abs(x) + atol
        bad = np.where(finite, ~(native_err <= bound), base.bad)
    numbers = {
        "factor": TORCH_ERROR_FACTOR,
        "torch_error": torch_error,
        "native_error": float(native_err.max()) if native_err.size else 0.0,
    }
    return _Masks(
        bad, base.diff, base.nan_actual, base.nan_expected, base.nan_both, base.inf_actual
    ), numbers


def _errors(diff: np.ndarray, e: np.ndarray) -> dict[str, float]:
    """max abs (inf when one side is inf), mean abs of the finite differences, max rel."""
    finite = np.isfinite(diff)
    max_abs = float(diff.max()) if diff.size else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.abs(widened(e))
        rel = np.where(denom > 0, diff / np.where(denom > 0, denom, 1.0), 0.0)
    rel_finite = rel[np.isfinite(rel)]
    return {
        "max_abs": max_abs,
        "mean_abs": float(diff[finite].mean()) if finite.any() else 0.0,
        "max_rel": float(rel_finite.max()) if rel_finite.size else 0.0,
    }


def _where(mask: np.ndarray) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(i) for i in ix) for ix in np.argwhere(mask)[:100])


def compare(
    actual: Sequence[Any],
    expected: Sequence[Any],
    names: Sequence[str] = (),
    tolerances: Tolerances = NO_TOLERANCES,
    exact: Sequence[np.ndarray | None] = (),
    why_not_scaled: str = "no float64 reference",
    reference: str = "torch",
) -> Comparison:
    """Compare each native result with torch's (`reference` names what computed `expected`),
    in order; `exact` holds the float64 (complex128) results when the model could run so (see
    `reference.float64_results`)."""
    names = list(names) + [f"result {i}" for i in range(len(names), len(expected))]
    count_problem = None
    if len(actual) != len(expected):
        count_problem = (
            f"the native code returned {len(actual)} results, {reference} returned {len(expected)}"
        )
    exacts = list(exact) + [None] * (len(expected) - len(exact))
    draws = tolerances.draws
    results = tuple(
        _compare_one(
            n,
            a,
            e,
            tolerances
            if draws is None
            else replace(tolerances, draws=draws.of_result(i) if draws.covers(i) else None),
            x,
            why_not_scaled,
        )
        for i, (n, a, e, x) in enumerate(zip(names, actual, expected, exacts, strict=False))
    )
    return Comparison(tuple(replace(r, reference=reference) for r in results), count_problem)
