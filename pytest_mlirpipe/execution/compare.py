"""Compare native results with torch eager: shape, then dtype, then allclose; reports as data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .signature import tensor_as_numpy

# Per-dtype (rtol, atol) used when a test gives none. Integers and booleans compare exactly.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-3),
    "bfloat16": (1.6e-2, 1e-3),  # 8 bits of mantissa (ml_dtypes' bfloat16)
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
}
FIRST_N = 5  # differing indices shown in a report


@dataclass(frozen=True, slots=True)
class Difference:
    """One differing element: its index, the native value and torch's."""

    index: tuple[int, ...]
    actual: float
    expected: float


@dataclass(frozen=True, slots=True)
class ResultComparison:
    """How one result compares; `ok` says whether it matched. Plain data (picklable)."""

    name: str
    ok: bool
    kind: str  # "match", "count", "shape", "dtype", "values"
    shape: tuple[int, ...] = ()
    expected_shape: tuple[int, ...] = ()
    dtype: str = ""
    expected_dtype: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    total: int = 0
    differing: int = 0
    max_abs: float = 0.0
    mean_abs: float = 0.0
    max_rel: float = 0.0
    first: tuple[Difference, ...] = ()
    nan_actual: tuple[tuple[int, ...], ...] = ()  # NaN in the native result, not in torch's
    nan_expected: tuple[tuple[int, ...], ...] = ()  # NaN in torch's result, not in the native
    nan_both: int = 0
    inf_actual: tuple[tuple[int, ...], ...] = ()

    def format(self) -> str:
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
                f"{self.name}: shape {list(self.shape)} differs from torch's "
                f"{list(self.expected_shape)}"
            )
        if self.kind == "dtype":
            return f"{self.name}: dtype {self.dtype} differs from torch's {self.expected_dtype}"
        pct = 100.0 * self.differing / max(self.total, 1)
        lines = [
            f"{self.name}: {self.differing} of {self.total} elements differ ({pct:.2f}%) "
            f"beyond rtol={self.rtol:g}, atol={self.atol:g}",
            f"  max abs error {self.max_abs:.6g}, mean abs error {self.mean_abs:.6g}, "
            f"max rel error {self.max_rel:.6g}",
        ]
        if self.first:
            lines.append("  first differing (index: native vs torch):")
            lines.extend(f"    {list(d.index)}: {d.actual!r} vs {d.expected!r}" for d in self.first)
        if self.nan_actual:
            lines.append(
                f"  NaN in the native result where torch has a number: {len(self.nan_actual)} "
                f"positions, first {', '.join(str(list(i)) for i in self.nan_actual[:FIRST_N])}"
            )
        if self.nan_expected:
            lines.append(
                f"  NaN in torch's result where the native one has a number: "
                f"{len(self.nan_expected)} positions, first "
                f"{', '.join(str(list(i)) for i in self.nan_expected[:FIRST_N])}"
            )
        if self.inf_actual:
            lines.append(
                f"  Inf in the native result: {len(self.inf_actual)} positions, first "
                f"{', '.join(str(list(i)) for i in self.inf_actual[:FIRST_N])}"
            )
        return "\n".join(lines)


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


def compare_one(
    name: str,
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    per_dtype: Mapping[str, tuple[float, float]] | None = None,
) -> ResultComparison:
    a, e = as_numpy(actual), as_numpy(expected)
    if a.shape != e.shape:
        return ResultComparison(
            name, False, "shape", shape=a.shape, expected_shape=e.shape, total=e.size
        )
    if a.dtype != e.dtype:
        return ResultComparison(
            name,
            False,
            "dtype",
            shape=a.shape,
            expected_shape=e.shape,
            dtype=a.dtype.name,
            expected_dtype=e.dtype.name,
            total=e.size,
        )
    r, t = tolerance_for(e.dtype, rtol, atol, per_dtype)
    common = {
        "shape": a.shape,
        "expected_shape": e.shape,
        "dtype": a.dtype.name,
        "expected_dtype": e.dtype.name,
        "rtol": r,
        "atol": t,
        "total": int(e.size),
    }
    m = _masks(a, e, r, t)
    errors = _errors(m.diff, e)
    n_bad = int(np.count_nonzero(m.bad))
    if not n_bad:
        return ResultComparison(name, True, "match", nan_both=m.nan_both, **errors, **common)
    first = tuple(
        Difference(tuple(int(i) for i in ix), a[tuple(ix)].item(), e[tuple(ix)].item())
        for ix in np.argwhere(m.bad)[:FIRST_N]
    )
    return ResultComparison(
        name,
        False,
        "values",
        differing=n_bad,
        first=first,
        nan_actual=_where(m.nan_actual),
        nan_expected=_where(m.nan_expected),
        nan_both=m.nan_both,
        inf_actual=_where(m.inf_actual),
        **errors,
        **common,
    )


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
    if e.dtype.kind in "biu":  # integers and booleans compare exactly
        none = np.zeros(a.shape, bool)
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        return _Masks(a != e, diff, none, none, 0, np.zeros(a.shape, bool))
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    a64, e64 = a.astype(wide), e.astype(wide)
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


def _errors(diff: np.ndarray, e: np.ndarray) -> dict[str, float]:
    """max abs (inf when one side is inf), mean abs of the finite differences, max rel."""
    finite = np.isfinite(diff)
    max_abs = float(diff.max()) if diff.size else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.abs(e.astype(np.complex128 if e.dtype.kind == "c" else np.float64))
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
    rtol: float | None = None,
    atol: float | None = None,
    per_dtype: Mapping[str, tuple[float, float]] | None = None,
) -> Comparison:
    """Compare each native result with torch's, in order."""
    names = list(names) + [f"result {i}" for i in range(len(names), len(expected))]
    count_problem = None
    if len(actual) != len(expected):
        count_problem = (
            f"the native code returned {len(actual)} results, torch returned {len(expected)}"
        )
    results = tuple(
        compare_one(n, a, e, rtol, atol, per_dtype)
        for n, a, e in zip(names, actual, expected, strict=False)
    )
    return Comparison(results, count_problem)
