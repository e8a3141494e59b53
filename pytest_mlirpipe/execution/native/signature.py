"""A model's entry signature (names, shapes, dtypes), read from tensor types before bufferizing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import MlirpipeError, Problem

# MLIR element type -> numpy dtype name (bfloat16 is ml_dtypes'). `ui*` spellings come from
# the torch side: MLIR's integer types are signless, torch's uint8 is not.
NUMPY_DTYPES: dict[str, str] = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "complex<f32>": "complex64",
    "complex<f64>": "complex128",
    "i1": "bool",
    "i8": "int8",
    "ui8": "uint8",
    "i16": "int16",
    "ui16": "uint16",
    "i32": "int32",
    "ui32": "uint32",
    "i64": "int64",
    "ui64": "uint64",
    "complex<f16>": "complex32",  # torch.complex32: see COMPLEX32
}
# Element types the marshalling supports end to end (numpy <-> memref <-> C).
SUPPORTED_DTYPES = tuple(NUMPY_DTYPES)
# torch's spellings at the torch-dialect level; its scalar types (a Python float, int, bool).
_TORCH_SPELLING = {"si8": "i8", "si16": "i16", "si32": "i32", "si64": "i64"}
_TORCH_SCALARS = {"!torch.float": "f64", "!torch.int": "i64", "!torch.bool": "i1"}
# Scalar results a model may return (from .item(), int(), float(), bool()).
SCALAR_DTYPES = ("f64", "f32", "i64", "i32", "i1")
# A torch dtype at the boundary -> the unsigned spelling it keeps (MLIR says iN).
_UNSIGNED = {"torch.uint8": "ui8", "torch.uint16": "ui16", "torch.uint32": "ui32"}
_UNSIGNED.update({"torch.uint64": "ui64"})
_ELEMENT = r"([A-Za-z0-9]+|complex<[a-z0-9]+>)"
_VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\],\s*" + _ELEMENT + ">$")
_TENSOR = re.compile(r"^tensor<(?:((?:[0-9?]+x)*))" + _ELEMENT + ">$")


# complex<f16> (torch.complex32) in memory: numpy has no such complex type. Compiled code
# reads and writes these pairs; everywhere else the values are complex64 (they widen exactly).
COMPLEX32 = np.dtype([("real", np.float16), ("imag", np.float16)])


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of an MLIR element type as compiled code holds it (complex<f16>: a
    pair of float16); bf16 needs the ml_dtypes package."""
    name = NUMPY_DTYPES[dtype]
    if name == "complex32":
        return COMPLEX32
    if name != "bfloat16":
        return np.dtype(name)
    try:
        import ml_dtypes
    except ImportError:
        raise MlirpipeError(
            Problem(
                "bf16 tensors need the ml_dtypes package (numpy has no bfloat16)",
                hint="pip install ml_dtypes (onnx installs it too)",
            )
        ) from None
    return np.dtype(ml_dtypes.bfloat16)


class BoundaryError(MlirpipeError):
    """A torch tensor that cannot cross to compiled code: sparse, or no numpy dtype."""


def tensor_as_numpy(tensor: Any) -> np.ndarray:
    """A torch tensor's values as a numpy array (bfloat16 through ml_dtypes, bit for bit;
    complex32 as complex64)."""
    layout = str(getattr(tensor, "layout", "strided")).removeprefix("torch.")
    if layout != "strided":
        raise BoundaryError(
            Problem(
                f"a {layout} tensor cannot cross to compiled code: execution tests pass and "
                "compare dense (strided) tensors only",
                hint="give the model dense inputs and results (tensor.to_dense()); sparse "
                "tensors need torch-mlir's sparse compiler and its own runtime",
            )
        )
    t = tensor.detach().cpu().resolve_conj().resolve_neg()
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype == "bfloat16":
        import torch

        return t.view(torch.int16).numpy().view(numpy_dtype("bf16"))
    if dtype == "complex32":  # as complex64, exactly: numpy has no complex32
        import torch

        return t.to(torch.complex64).numpy()
    try:
        return t.numpy()
    except TypeError:
        raise BoundaryError(
            Problem(
                f"a torch.{dtype} tensor has no numpy counterpart, so execution tests cannot "
                "pass it to compiled code or compare it",
                hint=f"supported element types: {', '.join(SUPPORTED_DTYPES)}; convert the "
                "tensor (e.g. .float()) before it crosses the boundary",
            )
        ) from None


@dataclass(frozen=True, slots=True)
class TensorType:
    """One argument or result: its name, shape (None for a dynamic dimension) and element
    type; `scalar` marks a Python scalar result, returned by the compiled code as a 0-d tensor."""

    name: str
    shape: tuple[int | None, ...]
    dtype: str  # MLIR spelling: f32, i64, i1, complex<f32>, ... (ui8: unsigned on torch's side)
    scalar: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def numpy_dtype(self) -> np.dtype:
        return numpy_dtype(self.dtype)

    def __str__(self) -> str:
        if self.scalar:
            return self.dtype
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


def parse_tensor_type(
    text: str, name: str, role: str = "input", torch_dtype: str | None = None
) -> TensorType:
    """`tensor<2x?xf32>`, `!torch.vtensor<[2,-1],f32>` or a scalar result (`f64`,
    `!torch.int`) -> TensorType; anything else raises. `torch_dtype` is the torch side's
    dtype (`str(tensor.dtype)`), which keeps an unsigned type unsigned."""
    text = text.strip()
    scalar = role == "result" and (text in SCALAR_DTYPES or text in _TORCH_SCALARS)
    shape: tuple[int | None, ...]
    if scalar:
        shape, dtype = (), _TORCH_SCALARS.get(text, text)
    elif (m := _TENSOR.match(text)) is not None:
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
                f"{role} '{name}' has type {text}, which is not a ranked tensor"
                + (" or a scalar" if role == "result" else ""),
                hint="execution tests take ranked tensors in and give ranked tensors or "
                f"scalars ({', '.join(SCALAR_DTYPES)}) back (a scalar input is a 0-d tensor, "
                "tensor<f32>); an unranked or non-tensor value cannot be marshalled",
            )
        )
    unsigned = _UNSIGNED.get(torch_dtype or "")
    if unsigned is not None and unsigned[1:] == dtype:
        dtype = unsigned
    if dtype not in SUPPORTED_DTYPES:
        raise MlirpipeError(
            Problem(
                f"{role} '{name}' has element type {dtype}, which execution tests do not support",
                hint=f"supported element types: {', '.join(SUPPORTED_DTYPES)}; "
                "convert the tensor in the model (e.g. .float()) before it crosses the boundary",
            )
        )
    return TensorType(name, shape, dtype, scalar)


def entry_signature(
    source: str,
    input_names: Sequence[str] = (),
    result_names: Sequence[str] = (),
    torch_dtypes: tuple[Sequence[str], Sequence[str]] = ((), ()),
) -> EntrySignature:
    """The signature of the one public function of `source` (MLIR on tensors, any front end).

    `torch_dtypes` gives the torch side's input and result dtypes (`str(t.dtype)`), where a
    front end knows them: torch.uint8 becomes ui8 where MLIR says i8.
    """
    from ...mlir_env import ir, new_context, parse_module

    ctx = new_context()
    module = parse_module(source, "<entry>", ctx)
    with ctx:
        func = _entry_function(module)
        name = ir.StringAttr(func.attributes["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        ins = [str(t) for t in ftype.inputs]
        outs = [str(t) for t in ftype.results]
    in_names = list(input_names) + [f"arg{i}" for i in range(len(input_names), len(ins))]
    out_names = list(result_names) + [f"result{i}" for i in range(len(result_names), len(outs))]
    in_torch = list(torch_dtypes[0]) + [""] * len(ins)
    # Results align only when torch returns as many (not with mutated inputs returned too).
    out_torch = list(torch_dtypes[1]) if len(torch_dtypes[1]) == len(outs) else [""] * len(outs)
    return EntrySignature(
        name,
        tuple(map(parse_tensor_type, ins, in_names, ["input"] * len(ins), in_torch)),
        tuple(map(parse_tensor_type, outs, out_names, ["result"] * len(outs), out_torch)),
    )


def _entry_function(module: Any) -> Any:
    """The one public func.func with a body in `module` (inside its context)."""
    from ...mlir_env import ir

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
    return funcs[0]


# A scalar result type -> the op that puts it in a 0-d tensor, and that tensor's type.
_TO_TENSOR = {
    "!torch.float": ("torch.prim.NumToTensor.Scalar", "!torch.vtensor<[],f64>"),
    "!torch.int": ("torch.prim.NumToTensor.Scalar", "!torch.vtensor<[],si64>"),
    "!torch.bool": ("torch.prim.NumToTensor.Scalar", "!torch.vtensor<[],i1>"),
}
_TO_TENSOR.update({t: ("tensor.from_elements", f"tensor<{t}>") for t in SCALAR_DTYPES})


def scalar_results_as_tensors(source: str, signature: EntrySignature) -> str:
    """`source` with the entry's scalar results returned as 0-d tensors, which every
    pipeline's calling convention passes as memrefs; unchanged when it has none."""
    if not any(t.scalar for t in signature.results):
        return source
    from ...mlir_env import ir, new_context, parse_module, print_ir

    ctx = new_context()
    module = parse_module(source, "<entry>", ctx)
    with ctx, ir.Location.unknown():
        func = _entry_function(module)
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        wraps = {i: _TO_TENSOR[str(t)] for i, t in enumerate(ftype.results) if str(t) in _TO_TENSOR}
        for block in func.regions[0].blocks:
            ret = block.operations[len(block.operations) - 1]
            if ret.operation.name != "func.return":
                continue
            for i, (op_name, tensor) in wraps.items():
                with ir.InsertionPoint(ret):
                    wrap = ir.Operation.create(
                        op_name, results=[ir.Type.parse(tensor)], operands=[ret.operands[i]]
                    )
                ret.operands[i] = wrap.result
        results = [
            ir.Type.parse(wraps[i][1]) if i in wraps else t for i, t in enumerate(ftype.results)
        ]
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs), results)
        )
    return print_ir(module.operation)


def to_complex32(array: np.ndarray) -> np.ndarray:
    """Complex values as complex<f16> pairs, the memory compiled code takes."""
    out = np.empty(array.shape, COMPLEX32)
    out["real"], out["imag"] = array.real, array.imag
    return out


def from_complex32(array: np.ndarray) -> np.ndarray:
    """complex<f16> pairs as complex64 (exact)."""
    return array["real"].astype(np.float32) + 1j * array["imag"].astype(np.float32)
