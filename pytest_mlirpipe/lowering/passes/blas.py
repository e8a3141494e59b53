"""`mlirpipe-matmul-to-blas`: matmuls on buffers become CBLAS gemm calls (OpenBLAS, BLIS, MKL).

Each rewritten op becomes a `func.call` of a private helper (one per operand types and flags)
that reads pointers, sizes and leading dimensions from the memrefs and calls
`<prefix>cblas_sgemm` / `<prefix>cblas_dgemm` (row-major CBLAS ABI, 32-bit integers). The call
keeps the memrefs as operands, so deallocation passes see them live until the call returns.

Forms: `linalg.matmul` (any operand maps, i.e. transposed variants), `linalg.batch_matmul` (one
gemm per batch), and `linalg.generic` that is a matmul with permuted maps. Around the op:
- an input written by `linalg.transpose` into a buffer only this op reads is replaced by the
  transpose's source with the BLAS transpose flag (transpose and buffer dropped);
- an output zero-filled just before (directly, or through the copy One-Shot Bufferize's
  `copy-before-write` inserts) gives beta = 0, and the fill/copy/temporary are dropped; any
  other output contents (a bias copied or broadcast into it) give beta = 1, as linalg.matmul
  accumulates;
- strided or offset layouts pass their strides as leading dimensions (either dimension may be the
  unit-stride one: that is a transpose flag); only a layout without a unit stride is copied.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from .registry import PassBody, register

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
_GEMM = {"f32": ("cblas_sgemm", 4), "f64": ("cblas_dgemm", 8)}
_NAMED = ("linalg.matmul", "linalg.batch_matmul", "linalg.generic")
# Ops that only create or view buffers; they read and write no memory.
_NO_ACCESS = frozenset(
    {
        "memref.alloc",
        "memref.alloca",
        "memref.get_global",
        "memref.subview",
        "memref.cast",
        "memref.reinterpret_cast",
        "memref.expand_shape",
        "memref.collapse_shape",
        "memref.transpose",
        "memref.view",
        "memref.dim",
        "memref.extract_strided_metadata",
    }
)
_VIEWS = _NO_ACCESS - {"memref.alloc", "memref.alloca", "memref.get_global", "memref.dim"}
_FRESH = ("memref.alloc", "memref.alloca")
PASS_NAME = "mlirpipe-matmul-to-blas"


class Refused(Exception):
    """The op cannot be rewritten; the message says why (shown with `debug`)."""


@register(
    PASS_NAME,
    "Rewrite linalg.matmul / batch_matmul / matmul-like generic on f32/f64 buffers into CBLAS "
    "gemm calls; `prefix` is the symbol prefix (default: the configured BLAS library's), "
    "`debug` reports every op left as it was and why",
    options=("prefix", "debug"),
)
def matmul_to_blas(options: dict[str, str]) -> PassBody:
    prefix = options.get("prefix")
    if prefix is None:
        from ...execution.blas_library import symbol_prefix

        prefix = symbol_prefix()
    debug = _flag(options.get("debug", "false"))

    def run(op, pass_) -> None:
        _Rewriter(op, prefix, debug).run()

    return run


def _flag(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "on", ""):
        return True
    if value in ("false", "0", "off"):
        return False
    raise ValueError(f"{PASS_NAME}: option 'debug' takes true or false, not {text!r}")


# ---------------------------------------------------------------------------------------------
# Matching


@dataclass(frozen=True, slots=True)
class _Operand:
    """A gemm operand: the memref, the loop dims indexing its dimensions (from the op's map)."""

    value: object  # ir.Value
    dims: tuple[int, ...]


@dataclass(slots=True)
class _Plan:
    op: object
    a: _Operand
    b: _Operand
    c: _Operand
    m: int
    n: int
    k: int
    batch: int | None
    elem: str
    beta: float = 1.0
    dead: tuple = ()  # ops to erase with the op (fill, copy, transpose, allocs), in order
    forward: tuple | None = None  # (writer, copy): the writer is to write the output directly


def _ir():
    from ...mlir_env import ir

    return ir


def _defining_op(value):
    ir = _ir()
    if isinstance(value, ir.OpResult):
        return value.owner.operation
    return None


def _name(op) -> str | None:
    return None if op is None else op.name


def _users(value) -> list:
    return [use.owner.operation for use in value.uses]


def _maps(op) -> list[tuple[int, ...]]:
    ir = _ir()
    maps = []
    for attr in ir.ArrayAttr(op.attributes["indexing_maps"]):
        amap = ir.AffineMapAttr(attr).value
        dims = []
        for expr in amap.results:
            if not isinstance(expr, ir.AffineDimExpr):
                raise Refused(f"indexing map {amap} is not a projection of loop dims")
            dims.append(expr.position)
        maps.append(tuple(dims))
    return maps


def _check_body(op) -> None:
    """The region must compute `out + in0 * in1` (in either operand order)."""
    block = op.regions[0].blocks[0]
    a, b, c = (block.arguments[i] for i in range(3))
    body = list(block.operations)
    if [o.name for o in body] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        names = ", ".join(o.name for o in body)
        raise Refused(f"its body ({names}) is not a multiply-accumulate (mulf, addf, yield)")
    mul, add, yld = body
    if not _same(mul.operands, [a, b]):
        raise Refused("its body does not multiply the two inputs")
    if not _same(add.operands, [c, mul.result]):
        raise Refused("its body does not add the product to the output")
    if not _same(yld.operands, [add.result]):
        raise Refused("its body does not yield the sum")


def _same(values, expected) -> bool:
    """The same values in any order (ir.Value compares by equality only, it does not hash)."""
    values = list(values)
    if len(values) != len(expected):
        return False
    rest = list(expected)
    for v in values:
        hit = next((i for i, e in enumerate(rest) if e == v), None)
        if hit is None:
            return False
        rest.pop(hit)
    return True


def _match(op) -> _Plan:
    ir = _ir()
    ins = [o for o in op.operands]
    if len(ins) != 3 or len(op.results) != 0:
        if any(isinstance(v.type, ir.RankedTensorType) for v in ins):
            raise Refused("its operands are tensors; run it after bufferization")
        raise Refused("it does not have exactly two inputs and one output on memrefs")
    for v in ins:
        if not isinstance(v.type, ir.MemRefType):
            raise Refused(f"operand type {v.type} is not a memref")
        if ir.MemRefType(v.type).memory_space is not None:
            raise Refused(f"operand type {v.type} is not in the default memory space")
    types = {str(ir.MemRefType(v.type).element_type) for v in ins}
    if len(types) != 1:
        raise Refused(f"mixed element types ({', '.join(sorted(types))}) have no BLAS gemm")
    (elem,) = types
    if elem not in _GEMM:
        raise Refused(
            f"element type {elem} has no BLAS gemm (f32 -> cblas_sgemm, f64 -> cblas_dgemm)"
        )
    if op.name == "linalg.generic" and any(
        "reduction" not in str(t) and "parallel" not in str(t)
        for t in ir.ArrayAttr(op.attributes["iterator_types"])
    ):
        raise Refused("unknown iterator types")
    _check_body(op)
    amap, bmap, cmap = _maps(op)
    n_loops = len({*amap, *bmap, *cmap})
    if op.name == "linalg.generic":
        kinds = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
        reductions = [i for i, t in enumerate(kinds) if "reduction" in t]
    else:
        reductions = [i for i in range(n_loops) if i not in cmap]
    if len(cmap) == 2 and len(amap) == 2 and len(bmap) == 2 and n_loops == 3:
        batch = None
        m, n = cmap
    elif len(cmap) == 3 and len(amap) == 3 and len(bmap) == 3 and n_loops == 4:
        batch, m, n = cmap
        if amap[0] != batch or bmap[0] != batch:
            raise Refused("the batch dimension is not the outermost of every operand")
    else:
        raise Refused("its indexing maps are not those of a matmul or batch matmul")
    ks = [d for d in range(n_loops) if d not in cmap]
    if len(ks) != 1 or reductions != ks or len(set(cmap)) != len(cmap):
        raise Refused("its indexing maps are not those of a matmul or batch matmul")
    (k,) = ks
    core_a = set(amap[1:] if batch is not None else amap)
    core_b = set(bmap[1:] if batch is not None else bmap)
    if core_a != {m, k} or core_b != {k, n}:
        raise Refused("its indexing maps are not those of a matmul or batch matmul")
    a, b, c = (_Operand(v, d) for v, d in zip(ins, (amap, bmap, cmap), strict=True))
    if c.value == a.value or c.value == b.value:
        raise Refused("its output is also one of its inputs")
    return _Plan(op, a, b, c, m, n, k, batch, elem)


# ---------------------------------------------------------------------------------------------
# Aliasing, just enough to know that nothing between two ops touches a buffer


def _root(value):
    seen = 0
    while seen < 64:
        owner = _defining_op(value)
        if owner is None or owner.name not in _VIEWS:
            return value
        value = owner.operands[0]
        seen += 1
    return value


def _may_alias(x, y) -> bool:
    rx, ry = _root(x), _root(y)
    if rx == ry:
        return True
    ox, oy = _defining_op(rx), _defining_op(ry)
    if _name(ox) in _FRESH or _name(oy) in _FRESH:
        return False
    if _name(ox) == _name(oy) == "memref.get_global":
        return str(ox.attributes["name"]) == str(oy.attributes["name"])
    return True


def _memref_operands(op) -> list:
    ir = _ir()
    found = []

    def visit(inner):
        found.extend(v for v in inner.operands if isinstance(v.type, ir.MemRefType))
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _between(first, last) -> list:
    """The ops strictly between `first` and `last` of one block (None if not in one block)."""
    block = first.block
    if block != last.block:
        return None
    ops = list(block.operations)
    i = next(i for i, o in enumerate(ops) if o == first)
    j = next(i for i, o in enumerate(ops) if o == last)
    return ops[i + 1 : j] if i < j else None


def _untouched(value, first, last, allowed=()) -> bool:
    """No op strictly between `first` and `last` may read or write `value` (others allowed)."""
    between = _between(first, last)
    if between is None:
        return False
    for op in between:
        if op.name in _NO_ACCESS or any(op == a for a in allowed):
            continue
        if any(_may_alias(v, value) for v in _memref_operands(op)):
            return False
    return True


def _is_zero(value) -> bool:
    ir = _ir()
    owner = _defining_op(value)
    if _name(owner) != "arith.constant":
        return False
    attr = owner.attributes["value"]
    return isinstance(attr, ir.FloatAttr) and attr.value == 0.0


def _zero_fill_of(value):
    """The op `linalg.fill ins(0.0) outs(value)`, when it is `value`'s only writer."""
    fills = [
        u
        for u in _users(value)
        if u.name == "linalg.fill" and u.operands[1] == value and _is_zero(u.operands[0])
    ]
    return fills[0] if len(fills) == 1 else None


def _fold_output(plan: _Plan) -> None:
    """beta = 0 when the output is known zero right before the op, dropping what made it zero;
    otherwise beta = 1 (linalg.matmul accumulates), with a copied-in initial value written
    straight into the output when the copy's source is a temporary made only for it."""
    op, c = plan.op, plan.c.value
    previous = [
        u for u in _users(c) if u != op and u.block == op.block and u.is_before_in_block(op)
    ]
    if not previous:
        return
    init = max_by_position(previous)
    if init.name == "linalg.fill" and init.operands[1] == c and _is_zero(init.operands[0]):
        if _untouched(c, init, op):
            plan.beta, plan.dead = 0.0, (init,)
        return
    if init.name != "memref.copy" or init.operands[1] != c or not _untouched(c, init, op):
        return
    src = init.operands[0]
    root = _root(src)
    if _name(_defining_op(root)) not in _FRESH:
        return
    fill = _zero_fill_of(root)
    if (
        fill is not None
        and fill.block == init.block
        and fill.is_before_in_block(init)
        and _untouched(root, fill, init)
    ):
        dead = [init]
        if src == root and len(_users(root)) == 2:  # only this copy reads the zeros
            dead += [fill, _defining_op(root)]
        plan.beta, plan.dead = 0.0, tuple(dead)
        return
    plan.forward = _forwardable(src, init, c, previous)


def _forwardable(src, copy, c, c_users_before: list):
    """(writer, copy): `writer` fills a temporary that is only copied into the output; it can
    write the output itself when the output is a fresh buffer nothing else touched before."""
    users = _users(src)
    alloc, c_alloc = _defining_op(src), _defining_op(c)
    if src != _root(src) or _name(alloc) not in _FRESH or len(users) != 2:
        return None
    if _name(c_alloc) not in _FRESH or len(c_alloc.operands) or len(c_users_before) != 1:
        return None
    (writer,) = [u for u in users if u != copy]
    operands = list(writer.operands)
    if (
        not writer.name.startswith("linalg.")
        or len(writer.results)
        or writer.block != copy.block
        or not writer.is_before_in_block(copy)
        or operands[-1] != src
        or sum(v == src for v in operands) != 1
        or c_alloc.block != writer.block
    ):
        return None
    return (writer, copy)


def max_by_position(ops: list):
    last = ops[0]
    for o in ops[1:]:
        if last.is_before_in_block(o):
            last = o
    return last


def _fold_transposes(plan: _Plan) -> None:
    """An input that is a fresh buffer a `linalg.transpose` wrote only for this op becomes the
    transpose's source with permuted dims: a transpose flag instead of a copy."""
    dead = list(plan.dead)
    for field_name in ("a", "b"):
        operand: _Operand = getattr(plan, field_name)
        value = operand.value
        alloc = _defining_op(value)
        if _name(alloc) not in _FRESH:
            continue
        users = _users(value)
        writers = [u for u in users if u.name == "linalg.transpose" and u.operands[1] == value]
        if len(writers) != 1 or len(users) != 2 or not any(u == plan.op for u in users):
            continue
        (tr,) = writers
        if tr.block != plan.op.block or not tr.is_before_in_block(plan.op):
            continue
        source = tr.operands[0]
        if not _untouched(source, tr, plan.op, allowed=dead):
            continue
        perm = list(_ir().DenseI64ArrayAttr(tr.attributes["permutation"]))
        dims = [0] * len(perm)
        for i, p in enumerate(perm):
            dims[p] = operand.dims[i]
        if plan.batch is not None and dims[0] != plan.batch:
            continue
        setattr(plan, field_name, _Operand(source, tuple(dims)))
        dead += [tr, alloc]
    plan.dead = tuple(dead)


# ---------------------------------------------------------------------------------------------
# Emitting


@dataclass(frozen=True, slots=True)
class _Layout:
    """How one gemm matrix reads from its memref: transposed?, which dim gives ld, copy first?"""

    trans: bool
    ld_dim: int  # memref dimension whose stride is the leading dimension
    cols_dim: int  # memref dimension whose size the leading dimension must cover
    copy: bool


def _layout(value, row_dim: int, col_dim: int) -> _Layout:
    ir = _ir()
    mtype = ir.MemRefType(value.type)
    strides, _ = mtype.get_strides_and_offset()
    copy = strides[col_dim] != 1 and strides[row_dim] != 1
    if copy:  # a contiguous row-major copy: the last dim has the unit stride
        strides = [0] * (mtype.rank - 1) + [1]
    if strides[col_dim] == 1:
        layout = _Layout(False, row_dim, col_dim, copy)
    else:
        layout = _Layout(True, col_dim, row_dim, copy)
    ld, shape = strides[layout.ld_dim], mtype.shape
    dyn = ir.ShapedType.get_dynamic_size()
    if (
        not copy
        and ld != ir.ShapedType.get_dynamic_stride_or_offset()
        and shape[layout.cols_dim] != dyn
        and shape[layout.ld_dim] != dyn
        and shape[layout.ld_dim] > 1
        and ld < shape[layout.cols_dim]
    ):
        raise Refused(
            f"operand {mtype} has overlapping rows (stride {ld} < {shape[layout.cols_dim]}), "
            "which BLAS cannot express"
        )
    return _Layout(layout.trans, layout.ld_dim, layout.cols_dim, copy)


class _Text:
    """Builds a helper's body line by line with fresh SSA names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def __call__(self, rhs: str, name: str = "v") -> str:
        self.count += 1
        ssa = f"%{name}{self.count}"
        self.lines.append(f"    {ssa} = {rhs}")
        return ssa

    def stmt(self, text: str) -> None:
        self.lines.append(f"    {text}")


def _helper_text(plan: _Plan, name: str, symbol: str) -> str:
    ir = _ir()
    elem = plan.elem
    esize = _GEMM[elem][1]
    tys = [str(o.value.type) for o in (plan.a, plan.b, plan.c)]
    rank = len(plan.c.dims)
    t = _Text()
    c_ = {}

    def const(value, ty="index"):
        key = (value, ty)
        if key not in c_:
            c_[key] = t(f"arith.constant {value} : {ty}", "c")
        return c_[key]

    # (operand, row loop dim, col loop dim) of each logical gemm matrix: A is MxK, B KxN, C MxN
    specs = [(plan.a, plan.m, plan.k), (plan.b, plan.k, plan.n), (plan.c, plan.m, plan.n)]
    args = ["%a", "%b", "%c"]
    layouts, meta, statics = [], [], []
    for i, (operand, row, col) in enumerate(specs):
        layout = _layout(operand.value, operand.dims.index(row), operand.dims.index(col))
        arg = args[i]
        if layout.copy:
            mtype = ir.MemRefType(operand.value.type)
            dyn_sizes = [
                t(f"memref.dim {arg}, {const(d)} : {tys[i]}")
                for d in range(rank)
                if mtype.is_dynamic_dim(d)
            ]
            shape = "x".join(
                "?" if mtype.is_dynamic_dim(d) else str(s) for d, s in enumerate(mtype.shape)
            )
            dense = f"memref<{shape}x{elem}>"
            buf = t(f"memref.alloc({', '.join(dyn_sizes)}) : {dense}", "tmp")
            if i < 2 or plan.beta != 0.0:
                t.stmt(f"linalg.copy ins({arg} : {tys[i]}) outs({buf} : {dense})")
            layouts.append((layout, buf, dense, arg))
        else:
            layouts.append((layout, arg, tys[i], arg))
        _, value, ty, _ = layouts[-1]
        used = ir.MemRefType(ir.Type.parse(ty, context=plan.op.context))
        statics.append((list(used.shape), used.get_strides_and_offset()[0]))
        idx = ", ".join(["index"] * rank)
        base = f"%base{i}"
        names = f"{base}, %off{i}, %size{i}:{rank}, %stride{i}:{rank}"
        t.stmt(
            f"{names} = memref.extract_strided_metadata {value} : {ty} -> "
            f"memref<{elem}>, index, {idx}, {idx}"
        )
        ptr = t(f"memref.extract_aligned_pointer_as_index {base} : memref<{elem}> -> index", "p")
        meta.append((ptr, i))

    def i32(index_value: str) -> str:
        return t(f"arith.index_cast {index_value} : index to i32", "i")

    def dim(i: int, d: int) -> str:
        return f"%size{i}#{d}"

    def stride(i: int, d: int) -> str:
        return f"%stride{i}#{d}"

    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()

    def size_i32(i: int, d: int) -> str:
        """A size as an i32 operand: a constant when the type knows it."""
        static = statics[i][0][d]
        return const(static, "i32") if static >= 0 else i32(dim(i, d))

    trans, lds = [], []
    for i, (layout, *_rest) in enumerate(layouts):
        shape, strides = statics[i]
        cols, ld_stride = shape[layout.cols_dim], strides[layout.ld_dim]
        if cols >= 0 and ld_stride != dynamic:
            lds.append(const(max(ld_stride, cols, 1), "i32"))
        else:
            ld = t(f"arith.maxsi {stride(i, layout.ld_dim)}, {dim(i, layout.cols_dim)} : index")
            ld = t(f"arith.maxsi {ld}, {const(1)} : index")
            lds.append(i32(ld))
        trans.append(layout.trans)
    c_layout = layouts[2][0]
    a_dims, c_dims = plan.a.dims, plan.c.dims
    m = size_i32(2, c_dims.index(plan.m))
    n = size_i32(2, c_dims.index(plan.n))
    k = size_i32(0, a_dims.index(plan.k))
    ftype = elem
    alpha = const("1.0", ftype)
    beta = const("0.0" if plan.beta == 0.0 else "1.0", ftype)
    order = const(ROW_MAJOR, "i32")

    def flag(transposed: bool) -> str:
        return const(TRANS if transposed else NO_TRANS, "i32")

    esize_c = const(esize)
    if c_layout.trans:  # C is column-major: compute C^T = B^T A^T into its row-major view
        ta, tb = flag(not trans[1]), flag(not trans[0])
    else:
        ta, tb = flag(trans[0]), flag(trans[1])

    def addr(i: int, batch_index: str | None) -> str:
        off = f"%off{i}"
        if batch_index is not None:
            step = t(f"arith.muli {batch_index}, {stride(i, 0)} : index")
            off = t(f"arith.addi {off}, {step} : index")
        bytes_ = t(f"arith.muli {off}, {esize_c} : index")
        at = t(f"arith.addi {meta[i][0]}, {bytes_} : index")
        as_int = t(f"arith.index_cast {at} : index to i64")
        return t(f"llvm.inttoptr {as_int} : i64 to !llvm.ptr", "ptr")

    sig = (
        f"(i32, i32, i32, i32, i32, i32, {ftype}, !llvm.ptr, i32, !llvm.ptr, i32, {ftype}, "
        "!llvm.ptr, i32) -> ()"
    )

    def call(batch_index: str | None) -> None:
        pa, pb, pc = (addr(i, batch_index) for i in range(3))
        if c_layout.trans:
            ops = [order, ta, tb, n, m, k, alpha, pb, lds[1], pa, lds[0], beta, pc, lds[2]]
        else:
            ops = [order, ta, tb, m, n, k, alpha, pa, lds[0], pb, lds[1], beta, pc, lds[2]]
        t.stmt(f"llvm.call @{symbol}({', '.join(ops)}) : {sig}")

    if plan.batch is None:
        call(None)
    else:
        count = dim(2, 0)
        t.stmt(f"scf.for %bi = {const(0)} to {count} step {const(1)} {{")
        body_start = len(t.lines)
        call("%bi")
        t.lines[body_start:] = ["  " + ln for ln in t.lines[body_start:]]
        t.stmt("}")
    for i, (layout, buf, dense, arg) in enumerate(layouts):
        if layout.copy and i == 2:
            t.stmt(f"linalg.copy ins({buf} : {dense}) outs({arg} : {tys[2]})")
    body = "\n".join(t.lines)
    return (
        f"  llvm.func @{symbol}{sig.split(' -> ')[0]}\n"
        f"  func.func private @{name}(%a: {tys[0]}, %b: {tys[1]}, %c: {tys[2]}) "
        f"attributes {{mlirpipe.blas_gemm}} {{\n{body}\n    return\n  }}"
    )


class _Rewriter:
    def __init__(self, module_op, prefix: str, debug: bool):
        self.module = module_op
        self.prefix = prefix
        self.debug = debug
        self.helpers: dict[str, str] = {}  # helper text (with a placeholder name) -> name
        self.symbols = set()

    def run(self) -> None:
        ir = _ir()
        candidates = []

        def visit(op):
            if op.name in _NAMED:
                candidates.append(op.operation)
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        self.module.walk(visit)
        body = self.module.regions[0].blocks[0]
        self.symbols = {
            ir.StringAttr(o.attributes["sym_name"]).value
            for o in body.operations
            if "sym_name" in o.attributes
        }
        for op in candidates:
            try:
                plan = _match(op)
                _fold_output(plan)
                _fold_transposes(plan)
                self._rewrite(plan)
            except Refused as why:
                if self.debug and (op.name != "linalg.generic" or _looks_like(op)):
                    self._remark(op, f"'{op.name}' left as it was: {why}")

    def _rewrite(self, plan: _Plan) -> None:
        ir = _ir()
        symbol = f"{self.prefix}{_GEMM[plan.elem][0]}"
        text = _helper_text(plan, "@@NAME@@", symbol)
        name = self.helpers.get(text)
        if name is None:
            name = self._fresh(f"mlirpipe_blas_{plan.elem}_gemm")
            self.helpers[text] = name
            self._insert(text.replace("@@NAME@@", name), symbol)
        op = plan.op
        with op.location, ir.InsertionPoint(op):
            ir.Operation.create(
                "func.call",
                results=[],
                operands=[plan.a.value, plan.b.value, plan.c.value],
                attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
            )
        op.erase()
        for dead in plan.dead:
            scalar = dead.operands[0] if dead.name == "linalg.fill" else None
            dead.erase()
            if scalar is not None and not list(scalar.uses):
                _defining_op(scalar).erase()  # the zero constant, when nothing else uses it
        if plan.forward is not None:
            writer, copy = plan.forward
            temp = copy.operands[0]
            _defining_op(plan.c.value).move_before(writer)
            writer.operands[len(writer.operands) - 1] = plan.c.value
            copy.erase()
            _defining_op(temp).erase()

    def _fresh(self, base: str) -> str:
        name, i = base, 0
        while name in self.symbols:
            i += 1
            name = f"{base}_{i}"
        self.symbols.add(name)
        return name

    def _insert(self, text: str, symbol: str) -> None:
        ir = _ir()
        with self.module.context, ir.Location.unknown():
            parsed = ir.Module.parse(f"module {{\n{text}\n}}")
        body = self.module.regions[0].blocks[0]
        for op in list(parsed.body.operations):
            sym = ir.StringAttr(op.attributes["sym_name"]).value
            if sym == symbol and symbol in self.symbols:
                continue
            self.symbols.add(sym)
            op.detach_from_parent()
            body.append(op)

    def _remark(self, op, message: str) -> None:
        from ...mlir_env import location_of

        loc = location_of(op.location)
        where = f"{loc}: " if loc else ""
        sys.stderr.write(f"{where}remark: {PASS_NAME}: {message}\n")


def _looks_like(op) -> bool:
    """A linalg.generic worth a remark: two inputs, one output and a mulf in its body."""
    if len(op.operands) != 3:
        return False
    return any(o.name == "arith.mulf" for o in op.regions[0].blocks[0].operations)
