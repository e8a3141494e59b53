"""The float64 reference: a torch model or reference function run on upcast inputs."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import first_line
from .compare import as_numpy, flatten_results, is_inexact


@dataclass(frozen=True, slots=True)
class Float64Results:
    """The float64 (complex128) results of a model, in torch's order, or why there are none."""

    results: tuple[np.ndarray, ...] = ()
    why_not: str = ""


def reference_label(fn: Callable[..., Any] | None) -> str:
    """How a report names what computed the expected values: "torch" (the model itself, no
    `reference` given), "the reference NAME" for a named function or module, else "the
    reference" (a lambda)."""
    if fn is None:
        return "torch"
    name = getattr(fn, "__name__", type(fn).__name__ if hasattr(fn, "forward") else "")
    return f"the reference {name}" if name.isidentifier() else "the reference"


def float64_results(
    fn: Callable[..., Any] | None,
    inputs: Sequence[Any],
    expected: Sequence[np.ndarray],
    reference: str = "torch",
) -> Float64Results:
    """`fn` run once more in float64: a module is deep-copied with its floating-point
    parameters and buffers as float64 (complex ones as complex128), floating-point inputs are
    upcast likewise, and torch's default dtype is float64 meanwhile (so `torch.ones(2)` in
    forward() is float64 too). Empty, with the reason, when it cannot run so; `reference` names
    `fn` ("torch": the model)."""
    if fn is None:
        return Float64Results(why_not="no torch model to run in float64")
    if not any(is_inexact(e.dtype) for e in expected):
        return Float64Results(why_not="no floating-point result")
    import torch

    what = "the model" if reference == "torch" else reference
    try:
        model = _upcast_module(fn)
        args = [_upcast(x) for x in inputs]
        with torch.no_grad(), _default_dtype(torch.float64):
            results = tuple(as_numpy(r) for r in flatten_results(model(*args)))
    except Exception as exc:
        return Float64Results(
            why_not=f"{what} does not run in float64 ({type(exc).__name__}: {first_line(exc)})"
        )
    if len(results) != len(expected):
        return Float64Results(
            why_not=f"the float64 run returned {len(results)} results, {reference} {len(expected)}"
        )
    return Float64Results(results)


def _upcast_module(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A deep copy of a torch module with float64/complex128 parameters and buffers."""
    import torch

    if not isinstance(fn, torch.nn.Module):
        return fn
    return copy.deepcopy(fn)._apply(_upcast)


def _upcast(x: Any) -> Any:
    """A tensor or array as float64 (complex128 when complex); others as they are (copied)."""
    import torch

    if isinstance(x, torch.Tensor):
        if x.is_complex():
            return x.to(torch.complex128)
        return x.to(torch.float64) if x.is_floating_point() else x.clone()
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "c":
            return x.astype(np.complex128)
        return x.astype(np.float64) if is_inexact(x.dtype) else x.copy()
    return x


@contextlib.contextmanager
def _default_dtype(dtype: Any) -> Iterator[None]:
    import torch

    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)
