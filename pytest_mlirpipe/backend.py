"""A torch.compile backend: FX graphs through a pipeline, run as native code."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

PIPELINE_ENV = "MLIRPIPE_TORCH_PIPELINE"

GRADIENTS_FALLBACK = (
    "mlirpipe: this graph runs in torch eager, not natively: an input requires grad and grad "
    "mode is on, and compiled code returns no gradients (run inference under torch.no_grad())"
)


def mlirpipe_backend(
    gm: Any, example_inputs: Sequence[Any], pipeline: str | None = None, mode: str = "jit"
) -> Callable[..., Any]:
    """`torch.compile(model, backend="mlirpipe")`: compile each FX graph through `pipeline`
    (default $MLIRPIPE_TORCH_PIPELINE or refbackend) and call the native code.

    Pick a pipeline with `torch.compile(model, backend=make_backend("tosa"))`. A graph is
    compiled once per set of input shapes (and values of its symbolic sizes), on the first
    call with them. A graph that needs gradients runs in torch eager, with a warning.
    """
    import torch

    if torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs
    ):
        warnings.warn(GRADIENTS_FALLBACK, UserWarning, stacklevel=2)
        return gm.forward
    chosen = pipeline or os.environ.get(PIPELINE_ENV, "refbackend")
    by_shape: dict[tuple, Callable[[list[Any]], Any]] = {}

    def run(*args: Any) -> Any:
        key = tuple(
            (tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else ("value", a) for a in args
        )
        if key not in by_shape:
            by_shape[key] = _compile_for(gm, args, chosen, mode)
        return by_shape[key]([a for a in args if isinstance(a, torch.Tensor)])

    run.compiled_by_shape = by_shape  # type: ignore[attr-defined]
    return run


def _compile_for(gm: Any, args: Sequence[Any], pipeline: str, mode: str) -> Callable[..., Any]:
    """The native code of `gm` for these arguments: tensors stay inputs (static shapes), the
    other arguments (symbolic sizes from dynamic shapes) are fixed to their values."""
    import torch

    from .execution.check import ModelChecker

    fixed = _fixed_module(gm, args)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    with torch.no_grad():
        sample = fixed(*[t.clone() for t in tensors])
    as_tuple = isinstance(sample, tuple | list)
    function = ModelChecker().compile(fixed, *tensors, pipeline=pipeline, mode=mode).function

    def call(inputs: list[Any]) -> Any:
        outs = [torch.from_numpy(o) for o in function(*inputs)]
        return tuple(outs) if as_tuple else outs[0]

    return call


def _fixed_module(gm: Any, args: Sequence[Any]) -> Any:
    """A module calling `gm` with its tensor arguments, the others fixed to their values."""
    import torch

    template = [None if isinstance(a, torch.Tensor) else a for a in args]

    class FixedArguments(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gm = gm

        def forward(self, *tensors: Any) -> Any:
            given = iter(tensors)
            return self.gm(*[next(given) if t is None else t for t in template])

    return FixedArguments()


def make_backend(pipeline: str, mode: str = "jit") -> Callable[..., Any]:
    """A backend bound to one pipeline: `torch.compile(m, backend=make_backend("tosa"))`."""

    def backend(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        return mlirpipe_backend(gm, example_inputs, pipeline=pipeline, mode=mode)

    return backend
