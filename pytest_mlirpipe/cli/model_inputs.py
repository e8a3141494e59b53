"""What `mlirpipe import` and `mlirpipe run` share: the model named and its inputs."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

from ..errors import Problem, UsageError
from ..model import Location


def refuse_inputs_for_onnx(args: argparse.Namespace) -> None:
    if args.inputs is not None:
        raise UsageError(
            Problem(
                "--inputs is for a PyTorch model; an ONNX model declares its inputs",
                Location(args.model),
                "drop --inputs",
            )
        )


def torch_model(
    args: argparse.Namespace, purpose: str, example: str
) -> tuple[torch.nn.Module, list]:
    """The PyTorch model FILE.py::Name and seeded inputs of the shapes --inputs gives."""
    from ..execution import model_file

    if args.inputs is None:
        raise UsageError(
            Problem(
                f"a PyTorch model needs --inputs, the shapes to {purpose}",
                Location(args.model),
                f"e.g. --inputs {example} (one item per argument of forward)",
            )
        )
    specs = model_file.parse_input_spec(args.inputs)
    model = model_file.load_model(args.model)
    _check_input_count(model, len(specs), args.model)
    return model, model_file.example_inputs(specs, seed=args.seed)


def _check_input_count(model, given: int, ref: str) -> None:
    """--inputs gives as many items as forward() takes: a count that cannot fit is a usage
    error before the model is traced."""
    import inspect

    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):  # a forward inspect cannot read: tracing will tell
        return
    kinds = inspect.Parameter
    if any(p.kind in (kinds.VAR_POSITIONAL, kinds.KEYWORD_ONLY) for p in params):
        return
    positional = [p for p in params if p.kind != kinds.VAR_KEYWORD]
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    if len(required) <= given <= len(positional):
        return
    takes = len(required) if given < len(required) else len(positional)
    names = ", ".join(p.name for p in positional) or "no arguments"
    raise UsageError(
        Problem(
            f"--inputs gives {given} input{'s' * (given != 1)}, but forward() of the model "
            f"takes {'at least ' if given < len(required) < len(positional) else ''}"
            f"{'at most ' if given > len(positional) > len(required) else ''}{takes} "
            f"({names})",
            Location(ref),
            "give one item per argument of forward, e.g. --inputs 64x64xf32,64x64xf32",
        )
    )
