"""The MLIR text of a gemm helper: a private func.func that calls `<prefix>cblas_?gemm`.

The helper takes the op's three memrefs, reads pointers, sizes and leading dimensions from
them (copying a layout BLAS cannot read into a dense buffer) and makes one row-major CBLAS
call, or one per batch in an `scf.for`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import Layout, layout_of
from .matching import GEMM, Operand, Plan
from .ssa import ir

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
# The CBLAS gemm's signature for element type {t}, in the llvm dialect (32-bit integers).
_SIGNATURE = (
    "(i32, i32, i32, i32, i32, i32, {t}, !llvm.ptr, i32, !llvm.ptr, i32, {t}, !llvm.ptr, i32) -> ()"
)
_ARGS = ("%a", "%b", "%c")


class _Text:
    """Builds a helper's body line by line with fresh SSA names; constants are made once."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.constants: dict[tuple, str] = {}

    def __call__(self, rhs: str, name: str = "v") -> str:
        self.count += 1
        ssa = f"%{name}{self.count}"
        self.lines.append(f"    {ssa} = {rhs}")
        return ssa

    def stmt(self, text: str) -> None:
        self.lines.append(f"    {text}")

    def const(self, value: object, ty: str = "index") -> str:
        key = (value, ty)
        if key not in self.constants:
            self.constants[key] = self(f"arith.constant {value} : {ty}", "c")
        return self.constants[key]

    def i32(self, index_value: str) -> str:
        return self(f"arith.index_cast {index_value} : index to i32", "i")


@dataclass(frozen=True, slots=True)
class _Matrix:
    """One gemm matrix inside the helper (number `i`: A, B, C): how BLAS reads it, the memref
    it reads (the argument, or a dense copy of it) with its static sizes and strides, and the
    aligned pointer; `%off{i}`, `%size{i}#d`, `%stride{i}#d` hold its metadata."""

    i: int
    layout: Layout
    value: str
    type: str
    arg_type: str
    shape: list[int]
    strides: list[int]
    pointer: str

    def size(self, d: int) -> str:
        return f"%size{self.i}#{d}"

    def stride(self, d: int) -> str:
        return f"%stride{self.i}#{d}"


@dataclass(frozen=True, slots=True)
class _Scalars:
    """The gemm's non-pointer arguments, as SSA names."""

    order: str
    trans_a: str
    trans_b: str
    m: str
    n: str
    k: str
    alpha: str
    beta: str
    lds: list[str]
    elem_size: str


def helper_text(plan: Plan, name: str, symbol: str) -> str:
    """The declaration of `symbol` and the helper `name` that calls it for `plan`."""
    t = _Text()
    # (operand, row loop dim, col loop dim) of each logical gemm matrix: A is MxK, B KxN, C MxN
    specs = [(plan.a, plan.m, plan.k), (plan.b, plan.k, plan.n), (plan.c, plan.m, plan.n)]
    matrices = [_matrix(t, plan, i, *spec) for i, spec in enumerate(specs)]
    scalars = _scalars(t, plan, matrices)
    signature = _SIGNATURE.format(t=plan.elem)
    if plan.batch is None:
        _call(t, matrices, scalars, symbol, signature, None)
    else:
        t.stmt(f"scf.for %bi = {t.const(0)} to {matrices[2].size(0)} step {t.const(1)} {{")
        body_start = len(t.lines)
        _call(t, matrices, scalars, symbol, signature, "%bi")
        t.lines[body_start:] = ["  " + ln for ln in t.lines[body_start:]]
        t.stmt("}")
    c = matrices[2]
    if c.layout.copy:
        t.stmt(f"linalg.copy ins({c.value} : {c.type}) outs(%c : {c.arg_type})")
    body = "\n".join(t.lines)
    a_type, b_type, c_type = (m.arg_type for m in matrices)
    return (
        f"  llvm.func @{symbol}{signature.split(' -> ')[0]}\n"
        f"  func.func private @{name}(%a: {a_type}, %b: {b_type}, %c: {c_type}) "
        f"attributes {{mlirpipe.blas_gemm}} {{\n{body}\n    return\n  }}"
    )


def _matrix(t: _Text, plan: Plan, i: int, operand: Operand, row: int, col: int) -> _Matrix:
    """Emit what matrix `i` needs before the call: a dense copy if BLAS cannot read its
    layout, then its strided metadata and aligned pointer."""
    bindings = ir()
    arg, arg_type = _ARGS[i], str(operand.value.type)
    layout = layout_of(operand.value, operand.dims.index(row), operand.dims.index(col))
    value, ty = arg, arg_type
    if layout.copy:
        value, ty = _dense_copy(t, plan, operand, arg, copy_in=i < 2 or plan.beta != 0.0)
    used = bindings.MemRefType(bindings.Type.parse(ty, context=plan.op.context))
    rank, elem = len(plan.c.dims), plan.elem
    idx = ", ".join(["index"] * rank)
    base = f"%base{i}"
    t.stmt(
        f"{base}, %off{i}, %size{i}:{rank}, %stride{i}:{rank} = memref.extract_strided_metadata "
        f"{value} : {ty} -> memref<{elem}>, index, {idx}, {idx}"
    )
    pointer = t(f"memref.extract_aligned_pointer_as_index {base} : memref<{elem}> -> index", "p")
    shape, strides = list(used.shape), used.get_strides_and_offset()[0]
    return _Matrix(i, layout, value, ty, arg_type, shape, strides, pointer)


def _dense_copy(t: _Text, plan: Plan, operand: Operand, arg: str, copy_in: bool) -> tuple:
    """A row-major buffer shaped like `arg`, with `arg` copied in when `copy_in`."""
    mtype = ir().MemRefType(operand.value.type)
    arg_type = str(operand.value.type)
    dyn_sizes = [
        t(f"memref.dim {arg}, {t.const(d)} : {arg_type}")
        for d in range(len(plan.c.dims))
        if mtype.is_dynamic_dim(d)
    ]
    shape = "x".join("?" if mtype.is_dynamic_dim(d) else str(s) for d, s in enumerate(mtype.shape))
    dense = f"memref<{shape}x{plan.elem}>"
    buf = t(f"memref.alloc({', '.join(dyn_sizes)}) : {dense}", "tmp")
    if copy_in:
        t.stmt(f"linalg.copy ins({arg} : {arg_type}) outs({buf} : {dense})")
    return buf, dense


def _leading_dim(t: _Text, matrix: _Matrix) -> str:
    """The matrix's leading dimension as an i32: its stride, at least its row length and 1."""
    layout = matrix.layout
    cols, ld_stride = matrix.shape[layout.cols_dim], matrix.strides[layout.ld_dim]
    if cols >= 0 and ld_stride != ir().ShapedType.get_dynamic_stride_or_offset():
        return t.const(max(ld_stride, cols, 1), "i32")
    ld = t(f"arith.maxsi {matrix.stride(layout.ld_dim)}, {matrix.size(layout.cols_dim)} : index")
    ld = t(f"arith.maxsi {ld}, {t.const(1)} : index")
    return t.i32(ld)


def _size_i32(t: _Text, matrix: _Matrix, d: int) -> str:
    """A size as an i32 operand: a constant when the type knows it."""
    static = matrix.shape[d]
    return t.const(static, "i32") if static >= 0 else t.i32(matrix.size(d))


def _scalars(t: _Text, plan: Plan, matrices: list[_Matrix]) -> _Scalars:
    lds = [_leading_dim(t, m) for m in matrices]
    a, _, c = matrices
    m = _size_i32(t, c, plan.c.dims.index(plan.m))
    n = _size_i32(t, c, plan.c.dims.index(plan.n))
    k = _size_i32(t, a, plan.a.dims.index(plan.k))
    alpha = t.const("1.0", plan.elem)
    beta = t.const("0.0" if plan.beta == 0.0 else "1.0", plan.elem)
    order = t.const(ROW_MAJOR, "i32")
    elem_size = t.const(GEMM[plan.elem][1])

    def flag(transposed: bool) -> str:
        return t.const(TRANS if transposed else NO_TRANS, "i32")

    trans = [matrix.layout.trans for matrix in matrices]
    if c.layout.trans:  # C is column-major: compute C^T = B^T A^T into its row-major view
        ta, tb = flag(not trans[1]), flag(not trans[0])
    else:
        ta, tb = flag(trans[0]), flag(trans[1])
    return _Scalars(order, ta, tb, m, n, k, alpha, beta, lds, elem_size)


def _address(t: _Text, matrix: _Matrix, elem_size: str, batch_index: str | None) -> str:
    """The matrix's first element (of batch `batch_index`) as an !llvm.ptr."""
    off = f"%off{matrix.i}"
    if batch_index is not None:
        step = t(f"arith.muli {batch_index}, {matrix.stride(0)} : index")
        off = t(f"arith.addi {off}, {step} : index")
    bytes_ = t(f"arith.muli {off}, {elem_size} : index")
    at = t(f"arith.addi {matrix.pointer}, {bytes_} : index")
    as_int = t(f"arith.index_cast {at} : index to i64")
    return t(f"llvm.inttoptr {as_int} : i64 to !llvm.ptr", "ptr")


def _call(
    t: _Text,
    matrices: list[_Matrix],
    s: _Scalars,
    symbol: str,
    signature: str,
    batch_index: str | None,
) -> None:
    pa, pb, pc = (_address(t, m, s.elem_size, batch_index) for m in matrices)
    lda, ldb, ldc = s.lds
    if matrices[2].layout.trans:
        ops = [s.order, s.trans_a, s.trans_b, s.n, s.m, s.k, s.alpha, pb, ldb, pa, lda]
    else:
        ops = [s.order, s.trans_a, s.trans_b, s.m, s.n, s.k, s.alpha, pa, lda, pb, ldb]
    ops += [s.beta, pc, ldc]
    t.stmt(f"llvm.call @{symbol}({', '.join(ops)}) : {signature}")
