"""A model's entry signature (names, shapes, dtypes), read from tensor types before bufferizing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import MlirpipeError, Problem

# MLIR element type -> numpy dtype name. torch's `si64`/`ui8` spellings are mapped first.
NUMPY_DTYPES: dict[str, str] = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "i1": "bool",
    "i8": "int8",
    "ui8": "uint8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
}
# Element types the marshalling supports end to end (numpy <-> memref <-> C).
SUPPORTED_DTYPES = ("f32", "f64", "i1", "i8", "ui8", "i16", "i32", "i64")
_TORCH_SPELLING = {"si8": "i8", "si16": "i16", "si32": "i32", "si64": "i64"}
_VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],\s*([a-z0-9]+)>$")
_TENSOR = re.compile(r"^tensor<(?:((?:[0-9?]+x)*))([a-z0-9]+)>$")


@dataclass(frozen=True, slots=True)
class TensorType:
    """One argument or result: its name, shape (None for a dynamic dimension) and element type."""

    name: str
    shape: tuple[int | None, ...]
    dtype: str  # MLIR spelling: f32, i64, i1, ...

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def numpy_dtype(self) -> str:
        return NUMPY_DTYPES[self.dtype]

    def __str__(self) -> str:
        dims = ["?" if d is None else str(d) for d in self.shape]
        return "x".join([*dims, self.dtype])


@dataclass(frozen=True, slots=True)
class EntrySignature:
    """The function a compiled model exposes: its symbol, its inputs and its results."""

    function: str
    inputs: tuple[TensorType, ...]
    results: tuple[TensorType, ...]

    @property
    def is_static(self) -> bool:
        return all(t.is_static for t in (*self.inputs, *self.results))

    def __str__(self) -> str:
        ins = ", ".join(f"{t.name}: {t}" for t in self.inputs)
        outs = ", ".join(str(t) for t in self.results)
        return f"@{self.function}({ins}) -> ({outs})"


def parse_tensor_type(text: str, name: str, role: str = "input") -> TensorType:
    """`tensor<2x?xf32>` or `!torch.vtensor<[2,-1],f32>` -> TensorType; anything else raises."""
    text = text.strip()
    m = _TENSOR.match(text)
    if m:
        dims = [d for d in (m.group(1) or "").split("x") if d]
        shape = tuple(None if d == "?" else int(d) for d in dims)
        dtype = m.group(2)
    elif (m := _VTENSOR.match(text)) is not None:
        dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
        shape = tuple(None if d in ("-1", "?") else int(d) for d in dims)
        dtype = _TORCH_SPELLING.get(m.group(2), m.group(2))
    else:
        raise MlirpipeError(
            Problem(
                f"{role} '{name}' has type {text}, which is not a ranked tensor",
                hint="execution tests take ranked tensors in and out (a scalar is a 0-d tensor, "
                "tensor<f32>); an unranked or non-tensor value cannot be marshalled",
            )
        )
    if dtype not in SUPPORTED_DTYPES:
        raise MlirpipeError(
            Problem(
                f"{role} '{name}' has element type {dtype}, which execution tests do not support",
                hint=f"supported element types: {', '.join(SUPPORTED_DTYPES)}; "
                "convert the tensor in the model (e.g. .float()) before it crosses the boundary",
            )
        )
    return TensorType(name, shape, dtype)


def entry_signature(
    source: str,
    input_names: Sequence[str] = (),
    result_names: Sequence[str] = (),
) -> EntrySignature:
    """The signature of the one public function of `source` (MLIR on tensors, any front end)."""
    from ..mlir_env import ir, new_context, parse_module

    ctx = new_context()
    module = parse_module(source, "<entry>", ctx)
    with ctx:
        funcs = []
        for op in module.body.operations:
            if op.operation.name != "func.func":
                continue
            attrs = op.operation.attributes
            private = "sym_visibility" in attrs and str(attrs["sym_visibility"]) == '"private"'
            is_decl = len(op.operation.regions[0].blocks) == 0
            if not private and not is_decl:
                funcs.append(op)
        if len(funcs) != 1:
            found = ", ".join("@" + ir.StringAttr(f.attributes["sym_name"]).value for f in funcs)
            raise MlirpipeError(
                Problem(
                    f"the model's MLIR has {len(funcs)} public functions ({found or 'none'}); "
                    "the entry point must be the only one",
                    hint="make helper functions private (func.func private @helper)",
                )
            )
        func = funcs[0]
        name = ir.StringAttr(func.attributes["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        ins = [str(t) for t in ftype.inputs]
        outs = [str(t) for t in ftype.results]
    in_names = list(input_names) + [f"arg{i}" for i in range(len(input_names), len(ins))]
    out_names = list(result_names) + [f"result{i}" for i in range(len(result_names), len(outs))]
    return EntrySignature(
        name,
        tuple(parse_tensor_type(t, n, "input") for t, n in zip(ins, in_names, strict=False)),
        tuple(parse_tensor_type(t, n, "result") for t, n in zip(outs, out_names, strict=False)),
    )
