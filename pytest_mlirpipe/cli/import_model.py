"""`mlirpipe import`: a PyTorch or ONNX model as MLIR at an import level."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..errors import Problem, UsageError
from ..model import IMPORT_TARGETS, Location
from ..tools.common import (
    write_output,
)
from .model_inputs import refuse_inputs_for_onnx, torch_model
from .stages import ending_newline


def add_import(sub) -> None:
    im = sub.add_parser(
        "import",
        help="import a PyTorch or ONNX model to MLIR",
        description="Import a PyTorch model (FILE.py::Name, traced by "
        "torch.export with random inputs) or an ONNX model (FILE.onnx) to MLIR.",
    )
    im.add_argument("model", metavar="MODEL", help="FILE.py::Name or FILE.onnx")
    im.add_argument(
        "--to",
        required=True,
        choices=[*IMPORT_TARGETS, "onnx"],
        help="torch: the torch dialect as imported (input of torch-to-linalg); "
        "linalg: linalg-on-tensors; tosa: TOSA; onnx: an ONNX model's torch.operator "
        "ops (input of onnx-linalg)",
    )
    im.add_argument(
        "--inputs",
        metavar="SPEC",
        help="a PyTorch model's inputs, e.g. 2x3xf32,10xi64,f32 (element types: "
        "f32 f64 f16 bf16 i1 i8 i32 i64)",
    )
    im.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    im.add_argument(
        "-o", dest="output", metavar="OUT", help="write the MLIR to OUT (default stdout)"
    )
    im.set_defaults(body=_import)


def _import(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..execution import frontends

    source = args.model
    if source.endswith(".onnx"):
        if args.to != "onnx":
            raise UsageError(
                Problem(
                    f"an ONNX model imports only with --to onnx, not --to {args.to}",
                    Location(source),
                    "then lower it with `mlirpipe stages OUT --pipeline onnx-linalg`",
                )
            )
        refuse_inputs_for_onnx(args)
        text = frontends.import_onnx(source)
    else:
        if args.to == "onnx":
            raise UsageError(
                Problem(
                    "--to onnx needs an ONNX model file (MODEL.onnx)",
                    Location(source),
                    "a PyTorch model imports with --to torch, --to linalg or --to tosa",
                )
            )
        model, inputs = torch_model(args, "trace it with", "2x3xf32,10xi64")
        text = frontends.import_torch(model, inputs, args.to)
    write_output(args.output, ending_newline(text), stdout)
    return 0
