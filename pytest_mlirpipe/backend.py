"""A torch.compile backend: FX graphs through a pipeline, run as native code."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from .errors import MlirpipeError

PIPELINE_ENV = "MLIRPIPE_TORCH_PIPELINE"


def mlirpipe_backend(
    gm: Any, example_inputs: Sequence[Any], pipeline: str | None = None, mode: str = "jit"
) -> Callable[..., Any]:
    """`torch.compile(model, backend="mlirpipe")`: compile each FX graph through `pipeline`
    (default $MLIRPIPE_TORCH_PIPELINE or refbackend) and call the native code.

    Pick a pipeline with `torch.compile(model, backend=make_backend("tosa"))`. Graphs whose
    inputs are not all tensors (symbolic sizes) are not handled: compile with dynamic=False.
    """
    import torch

    from .execution.check import ModelChecker

    chosen = pipeline or os.environ.get(PIPELINE_ENV, "refbackend")
    tensors = [x for x in example_inputs if isinstance(x, torch.Tensor)]
    if len(tensors) != len(example_inputs):
        raise MlirpipeError(
            _problem(
                "the graph takes non-tensor inputs (symbolic sizes from dynamic shapes)",
                "compile with torch.compile(model, backend='mlirpipe', dynamic=False)",
            )
        )
    with torch.no_grad():
        sample = gm(*[t.clone() for t in tensors])
    as_tuple = isinstance(sample, tuple | list)
    compiled = ModelChecker().compile(gm, *tensors, pipeline=chosen, mode=mode)
    function = compiled.function

    def run(*args: Any) -> Any:
        outs = [torch.from_numpy(o) for o in function(*args)]
        return tuple(outs) if as_tuple else outs[0]

    run.compiled = compiled  # type: ignore[attr-defined]
    return run


def make_backend(pipeline: str, mode: str = "jit") -> Callable[..., Any]:
    """A backend bound to one pipeline: `torch.compile(m, backend=make_backend("tosa"))`."""

    def backend(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        return mlirpipe_backend(gm, example_inputs, pipeline=pipeline, mode=mode)

    return backend


def _problem(message: str, hint: str):
    from .errors import Problem

    return Problem(message, hint=hint)
