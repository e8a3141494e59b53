"""The native callable: a lowered entry point's ABI, numpy marshalling, and the JIT."""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

from ...errors import MlirpipeError, Problem
from . import buffer_pool, openmp, runtime
from .signature import (
    COMPLEX32,
    EntrySignature,
    TensorType,
    from_complex32,
    tensor_as_numpy,
    to_complex32,
)

# RefBackend's result callback: `refbackend_consume_func_return_<types>`, or without a suffix
# for an entry point with no results.
CONSUME_NAME = "refbackend_consume_func_return"
CIFACE = "_mlir_ciface_"
# What memref.get_global puts in a descriptor's `allocated` field: never to be freed.
_GLOBAL_SENTINEL = 0xDEADBEEF


class Abi(StrEnum):
    """How a lowered entry point takes its inputs and hands back its results."""

    # refback-munge-calling-conventions: unranked memref arguments, results passed to a
    # `refbackend_consume_func_return_*` callback; the result buffers are the caller's to free.
    CALLBACK = "refbackend-callback"
    # llvm.emit_c_interface on a function returning memrefs: `_mlir_ciface_f(ret*, in*...)`
    # fills a struct of descriptors; the result buffers are the caller's to free.
    RETURNED = "returned-memrefs"
    # buffer-results-to-out-params: `_mlir_ciface_f(in*..., out*...)` writes into buffers the
    # caller allocated; nothing to free, nothing allocated per call for the results.
    DESTINATION = "destination-passing"


@dataclass(frozen=True, slots=True)
class EntryAbi:
    """The ABI of a lowered entry point, read from its LLVM-dialect module."""

    abi: Abi
    function: str
    consume: str | None = None  # the callback's name (CALLBACK only), without _mlir_ciface_


_LLVM_FUNC = re.compile(r"^\s*llvm\.func\s+(?:private\s+)?@([\w$.]+)\(([^)]*)\)(.*)$", re.M)


def detect_abi(llvm_ir: str, signature: EntrySignature) -> EntryAbi:
    """Which of the three ABIs the lowered module of `signature` uses."""
    funcs = {m.group(1): (m.group(2), m.group(3)) for m in _LLVM_FUNC.finditer(llvm_ir)}
    name = signature.function
    if CIFACE + name not in funcs:
        raise MlirpipeError(
            Problem(
                f"the lowered module has no C interface for @{name} (no @{CIFACE}{name})",
                hint="the pipeline must give the entry point llvm.emit_c_interface: add "
                "func.func(llvm-request-c-wrappers) before convert-func-to-llvm, or "
                "refback-munge-calling-conventions",
            )
        )
    consumers = [
        f for f in funcs if f == CIFACE + CONSUME_NAME or f.startswith(CIFACE + CONSUME_NAME + "_")
    ]
    if consumers:
        return EntryAbi(Abi.CALLBACK, name, consumers[0][len(CIFACE) :])
    params, _ = funcs[CIFACE + name]
    n_params = len([p for p in params.split(",") if p.strip()])
    _, raw_rest = funcs.get(name, ("", ""))
    returns_value = "->" in raw_rest.split("attributes")[0]
    if returns_value and n_params == len(signature.inputs) + 1:
        return EntryAbi(Abi.RETURNED, name)
    if not returns_value and n_params == len(signature.inputs) + len(signature.results):
        return EntryAbi(Abi.DESTINATION, name)
    raise MlirpipeError(
        Problem(
            f"cannot tell how @{CIFACE}{name} takes its {len(signature.inputs)} inputs and "
            f"{len(signature.results)} results: it has {n_params} parameters",
            hint="expected one of: results through refbackend_consume_func_return_* "
            "(refback-munge-calling-conventions), returned memrefs (llvm-request-c-wrappers), "
            "or results as trailing out-params (buffer-results-to-out-params)",
        )
    )


# ---- descriptors ---------------------------------------------------------------------------


@functools.cache
def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a ranked memref descriptor (one class per rank, built once)."""
    fields: list[tuple[str, Any]] = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
    ]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}D", (ctypes.Structure,), {"_fields_": fields})


class UnrankedDescriptor(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


@functools.cache
def _libc_free() -> Callable[[int], None]:
    libc = ctypes.CDLL(None)
    free = libc.free
    free.argtypes = [ctypes.c_void_p]
    free.restype = None
    return free


def _fill(desc: ctypes.Structure, array: np.ndarray) -> None:
    """Point `desc` at the contiguous `array`."""
    ptr = array.ctypes.data
    desc.allocated = ptr
    desc.aligned = ptr
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = array.shape
        desc.strides[:] = (
            [s // array.itemsize for s in array.strides] if array.size else [1] * (array.ndim)
        )


def _read(desc: ctypes.Structure, t: TensorType, out: np.ndarray | None) -> np.ndarray:
    """Copy what `desc` points at into `out` (or a fresh array); the memory is not freed here."""
    dtype = np.dtype(t.numpy_dtype)
    shape = tuple(desc.sizes) if t.rank else ()
    strides = tuple(desc.strides) if t.rank else ()
    if out is None or out.shape != shape:
        out = np.empty(shape, dtype)
    if out.size == 0:
        return out
    base = (desc.aligned or 0) + desc.offset * dtype.itemsize
    contiguous = all(
        st == int(np.prod(shape[i + 1 :], dtype=np.int64))
        for i, st in enumerate(strides)
        if shape[i] != 1
    )
    if contiguous:
        ctypes.memmove(out.ctypes.data, base, out.nbytes)
        return out
    span = 1 + sum((n - 1) * st for n, st in zip(shape, strides, strict=True))
    raw = np.ctypeslib.as_array((ctypes.c_byte * (span * dtype.itemsize)).from_address(base))
    view = np.lib.stride_tricks.as_strided(
        raw.view(dtype), shape, tuple(s * dtype.itemsize for s in strides)
    )
    out[...] = view
    return out


# ---- destination-passing out-params --------------------------------------------------------

FIRST_FILL = 0x5A  # the byte integer and boolean out-params start with (floats start as NaN)
SECOND_FILL = 0xA5  # the byte every out-param holds before the second, checking run
# The bytes of the runs that confirm an element of a drawn result kept both fills: a draw of a
# byte or two may happen to equal them (1 in 65536 for an int8 drawn twice); one run more
# for each fill it also equals, until none or 8 runs (1 in 2**64).
CONFIRMING_FILLS = (0x3C, 0xC3, 0x69, 0x96, 0x0F, 0xF0)


def poisoned(t: TensorType) -> np.ndarray:
    """An out-param for `t` that no correct result leaves as it is: NaN, or 0x5A bytes."""
    # destination passing is chosen only for static result shapes
    out = np.empty(cast("tuple[int, ...]", t.shape), t.numpy_dtype)
    if out.dtype.kind in "fcV" or out.dtype.name == "bfloat16":
        out[...] = np.nan
    else:
        out.reshape(-1).view(np.uint8)[...] = FIRST_FILL
    return out


def _unwritten(
    signature: EntrySignature,
    first: Sequence[np.ndarray],
    second: Sequence[np.ndarray],
    drawn: Collection[int],
) -> list[np.ndarray]:
    """For each result, the flat indices of the elements an out-param kept: those that differ
    between two runs with different fills; of a result in `drawn` (computed from random draws,
    which differ between the runs), those where each run left the fill it was given (the
    first one's, then 0xA5 bytes)."""
    found = []
    for i, (t, a, b) in enumerate(zip(signature.results, first, second, strict=True)):
        if a.size == 0:
            found.append(np.zeros(0, np.intp))
            continue
        bytes_a, bytes_b = _element_bytes(a), _element_bytes(b)
        if i in drawn:
            fill = _element_bytes(poisoned(t))
            kept = (bytes_a == fill).all(axis=1) & (bytes_b == SECOND_FILL).all(axis=1)
            found.append(np.flatnonzero(kept))
        else:
            found.append(np.flatnonzero((bytes_a != bytes_b).any(axis=1)))
    return found


def _element_bytes(a: np.ndarray) -> np.ndarray:
    """`a`'s bytes, a row per element."""
    return a.reshape(-1).view(np.uint8).reshape(a.size, a.itemsize)


def _report_unwritten(signature: EntrySignature, unwritten: Sequence[np.ndarray]) -> None:
    for i, (t, found) in enumerate(zip(signature.results, unwritten, strict=True)):
        if found.size:
            shape = cast("tuple[int, ...]", t.shape)
            size = int(np.prod(shape, dtype=np.int64))
            where = ", ".join(str([int(x) for x in np.unravel_index(k, shape)]) for k in found[:5])
            raise MlirpipeError(
                Problem(
                    f"result {i} ('{t.name}'): @{signature.function} did not write "
                    f"{found.size} of {size} elements of its out-param (first at "
                    f"{where}); they kept the fill the caller put there",
                    hint="destination passing must write every element of each out-param: "
                    "`mlirpipe stages FILE --pipeline P` shows the stage that dropped the write",
                )
            )


# ---- marshalling ---------------------------------------------------------------------------


def to_numpy(value: Any, t: TensorType, position: int) -> np.ndarray:
    """An input as a contiguous numpy array of the signature's dtype (copied if non-contiguous)."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch.Tensor
        value = tensor_as_numpy(value)
    array = np.asarray(value)
    want = np.dtype(t.numpy_dtype)
    if want == COMPLEX32 and array.dtype.kind == "c":
        array = to_complex32(array)
    if array.dtype != want:
        raise MlirpipeError(
            Problem(
                f"input {position} ('{t.name}') is {array.dtype}, but the compiled function "
                f"takes {t.dtype} ({want})",
                hint=f"pass a {want} array, e.g. x.astype(np.{want}) or tensor.to(torch.{want})",
            )
        )
    if array.ndim != t.rank or any(
        d is not None and d != n for d, n in zip(t.shape, array.shape, strict=False)
    ):
        raise MlirpipeError(
            Problem(
                f"input {position} ('{t.name}') has shape {list(array.shape)}, but the compiled "
                f"function takes {t}",
                hint="compile again with example inputs of this shape, or mark the dimension "
                "dynamic ('?') in the MLIR",
            )
        )
    # Copied when strided (np.ascontiguousarray would also turn a 0-d array into 1-d).
    return array if array.flags.c_contiguous else array.copy(order="C")


class NativeFunction:
    """A compiled entry point called with numpy arrays; ctypes objects are built once here."""

    def __init__(
        self,
        signature: EntrySignature,
        abi: EntryAbi,
        entry: Callable[[], Callable[[int], None] | None],
        keepalive: Sequence[object] = (),
        register_consumer: Callable[[str, int], None] | None = None,
        kind: str = "jit",
        runtime_lib: ctypes.CDLL | None = None,
        free_result: Callable[[int], None] | None = None,
    ):
        self.signature = signature
        # How the caller frees a result buffer the code allocated: as the code allocates.
        self._free_result = free_result or _libc_free()
        self.abi = abi
        self.kind = kind
        self.native_abi = abi.abi  # the lowered code's own ABI (an AOT shim wraps it)
        self.blas: Any = None  # the BlasLibrary the code calls into, if any
        self.openmp: Any = None  # the OpenMpRuntime its parallel loops use, if it has any
        self._keepalive = list(keepalive)
        sig = signature
        if abi.abi is Abi.DESTINATION and not all(r.is_static for r in sig.results):
            raise MlirpipeError(
                Problem(
                    f"@{sig.function} passes results as out-params, but result shapes "
                    f"{', '.join(str(r) for r in sig.results)} are not all static",
                    hint="destination passing needs the caller to allocate each result; use a "
                    "pipeline that returns results (e.g. refbackend) for dynamic result shapes",
                )
            )
        self._in_desc = [descriptor_type(t.rank)() for t in sig.inputs]
        self._out_desc = [descriptor_type(t.rank)() for t in sig.results]
        self._native_consumer = False
        if abi.abi is Abi.CALLBACK:
            assert register_consumer is not None and abi.consume is not None
            pointers = self._callback_pointers(abi.consume, register_consumer, runtime_lib)
        elif abi.abi is Abi.RETURNED:
            pointers = self._returned_pointers()
        else:
            pointers = [ctypes.c_void_p(ctypes.addressof(d)) for d in self._in_desc] + [
                ctypes.c_void_p(ctypes.addressof(d)) for d in self._out_desc
            ]
        self._pointers = pointers
        # Looked up after the consumer is registered: the lookup resolves every symbol.
        found = entry()
        if not found:
            raise MlirpipeError(
                Problem(
                    f"the JIT could not compile @{sig.function}: a symbol it calls is missing "
                    "(the JIT printed which one above)",
                    hint="lowered code may call only libc, libm, memrefCopy and CBLAS (the "
                    "configured BLAS library); lower the op that needs another runtime function "
                    "inside the pipeline",
                )
            )
        self._entry = found
        self._packed = (ctypes.c_void_p * len(pointers))(*[ctypes.addressof(p) for p in pointers])
        self._packed_address = ctypes.addressof(self._packed)
        self._inputs: list[np.ndarray] = []
        self._outputs: list[np.ndarray | None] = [None] * len(sig.results)

    def _callback_pointers(
        self,
        consume: str,
        register_consumer: Callable[[str, int], None],
        runtime_lib: ctypes.CDLL | None,
    ) -> list[ctypes.c_void_p]:
        """CALLBACK: unranked inputs; the results arrive through the registered consumer."""
        sig = self.signature
        self._unranked = [
            UnrankedDescriptor(t.rank, ctypes.addressof(d))
            for t, d in zip(sig.inputs, self._in_desc, strict=True)
        ]
        lib = runtime_lib
        if (
            lib is not None
            and 0 < len(sig.results) <= runtime.MAX_RESULTS
            and all(t.rank <= runtime.MAX_RANK for t in sig.results)
        ):
            # A C consumer keeps the descriptors; Python copies and frees after the call.
            self._native_consumer = True
            self._out_desc = [
                descriptor_type(t.rank).from_address(runtime.taken_address(lib, i))
                for i, t in enumerate(sig.results)
            ]
            address = runtime.symbol_address(lib, f"mlirpipe_consume_{len(sig.results)}")
            register_consumer(CIFACE + consume, address)
        else:
            self._consumer = self._make_consumer()
            register_consumer(
                CIFACE + consume, ctypes.cast(self._consumer, ctypes.c_void_p).value or 0
            )
        return [ctypes.c_void_p(ctypes.addressof(u)) for u in self._unranked]

    def _returned_pointers(self) -> list[ctypes.c_void_p]:
        """RETURNED: a struct of result descriptors the callee fills, then the inputs."""
        fields = [(f"r{i}", type(d)) for i, d in enumerate(self._out_desc)]
        self._ret = type("Results", (ctypes.Structure,), {"_fields_": fields})()
        self._ret_ptr = ctypes.c_void_p(ctypes.addressof(self._ret))
        # Views into the struct the callee fills (ctypes shares the memory).
        self._out_desc = [getattr(self._ret, f"r{i}") for i in range(len(self.signature.results))]
        return [self._ret_ptr] + [ctypes.c_void_p(ctypes.addressof(d)) for d in self._in_desc]

    # The callback is created once per compiled function: per call it copies and frees.
    def _make_consumer(self) -> CFuncPtr:
        n = len(self.signature.results)
        proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * n))
        results = self.signature.results
        out_desc = self._out_desc

        def consume(*unranked_ptrs: int) -> None:
            for i, p in enumerate(unranked_ptrs):
                u = UnrankedDescriptor.from_address(p)
                ctypes.memmove(
                    ctypes.addressof(out_desc[i]), u.descriptor, ctypes.sizeof(out_desc[i])
                )
            self._collect(results)

        return proto(consume)

    def _collect(self, results: Sequence[TensorType]) -> None:
        """Copy each result out of the callee's buffer, then free the buffers it allocated."""
        owned = {d.allocated for d in self._in_desc}
        freed: set[int] = set()
        for i, t in enumerate(results):
            d = self._out_desc[i]
            self._outputs[i] = _read(d, t, self._outputs[i])
        free = self._free_result
        for d in self._out_desc:
            ptr = d.allocated
            if ptr and ptr != _GLOBAL_SENTINEL and ptr not in owned and ptr not in freed:
                free(ptr)
                freed.add(ptr)

    def bind(self, *inputs: Any) -> Callable[[], None]:
        """A zero-argument call with `inputs` marshalled once (for timing); results land in
        `self.outputs()`. Destination passing writes into buffers allocated here."""
        sig = self.signature
        if len(inputs) != len(sig.inputs):
            raise MlirpipeError(
                Problem(
                    f"@{sig.function} takes {len(sig.inputs)} inputs "
                    f"({', '.join(str(t) for t in sig.inputs)}), got {len(inputs)}",
                    hint="pass one array per argument of the model's forward()",
                )
            )
        self._inputs = [
            to_numpy(v, t, i) for i, (v, t) in enumerate(zip(inputs, sig.inputs, strict=True))
        ]
        for d, a in zip(self._in_desc, self._inputs, strict=True):
            _fill(d, a)
        if self.abi.abi is Abi.DESTINATION:
            outputs = [poisoned(t) for t in sig.results]
            for d, a in zip(self._out_desc, outputs, strict=True):
                _fill(d, a)
            self._outputs = list(outputs)
            bound = functools.partial(self._entry, self._packed_address)
            bound.owner = self  # type: ignore[attr-defined]  # keeps the engine or library alive
            return bound
        if self.abi.abi is Abi.RETURNED or self._native_consumer:
            entry, address, collect = self._entry, self._packed_address, self._collect

            def call() -> None:
                entry(address)
                collect(sig.results)

            return call
        bound = functools.partial(self._entry, self._packed_address)
        bound.owner = self  # type: ignore[attr-defined]
        return bound

    def outputs(self) -> list[np.ndarray]:
        return [o for o in self._outputs if o is not None]

    def __call__(self, *inputs: Any) -> list[np.ndarray]:
        """Run once; fresh result arrays each call (a scalar result as a numpy scalar)."""
        self._outputs = [None] * len(self.signature.results)
        self.bind(*inputs)()
        return self._take_outputs()

    def checked_call(self, *inputs: Any, drawn: Collection[int] = ()) -> list[np.ndarray]:
        """Like a call, but lowered destination-passing code runs twice: into out-params
        filled first with NaN (integers: 0x5A bytes), then with 0xA5 bytes. An element it
        never writes differs between the runs and is reported, whatever the reference holds;
        `drawn`: the results computed from random draws, whose values differ between the runs
        (an element of those is reported where each run left its fill, a few runs more when
        a draw could have equalled the fills)."""
        self._outputs = [None] * len(self.signature.results)
        call = self.bind(*inputs)
        call()
        if self.native_abi is Abi.DESTINATION:
            first = [o.copy() for o in self.outputs()]
            for out in self.outputs():
                out.reshape(-1).view(np.uint8)[...] = SECOND_FILL
            call()
            unwritten = _unwritten(self.signature, first, self.outputs(), drawn)
            for fill in CONFIRMING_FILLS:
                left = [i for i in drawn if unwritten[i].size]
                if not left:
                    break
                for out in self.outputs():
                    out.reshape(-1).view(np.uint8)[...] = fill
                call()
                outputs = self.outputs()
                for i in left:
                    kept = (_element_bytes(outputs[i])[unwritten[i]] == fill).all(axis=1)
                    unwritten[i] = unwritten[i][kept]
            _report_unwritten(self.signature, unwritten)
        return self._take_outputs()

    def _take_outputs(self) -> list[np.ndarray]:
        results = self.signature.results
        outs = [
            from_complex32(o) if o.dtype == COMPLEX32 else o[()] if t.scalar else o
            for o, t in zip(self.outputs(), results, strict=True)
        ]
        self._outputs = [None] * len(results)
        return outs


def jit(
    llvm_ir: str,
    signature: EntrySignature,
    *,
    opt_level: int = 3,
    shared_libs: Sequence[str] = (),
) -> NativeFunction:
    """JIT-compile an LLVM-dialect module with MLIR's ExecutionEngine.

    A module that calls CBLAS functions (`mlirpipe-matmul-to-blas`) gets the configured BLAS
    library (blas_library.find_blas_library) loaded next to `shared_libs`.
    """
    from torch_mlir.execution_engine import ExecutionEngine

    from ...mlir_env import new_context, parse_module
    from .blas_library import library_for

    abi = detect_abi(llvm_ir, signature)
    libs = list(shared_libs)
    blas = library_for(llvm_ir)
    if blas is not None and str(blas.path) not in libs:
        libs.append(str(blas.path))
    lib = runtime.runtime_library()
    omp = _openmp_for(llvm_ir, signature, lib)
    if omp is not None and omp.path is not None:
        libs.append(str(omp.path))
    ctx = new_context()
    module = parse_module(llvm_ir, "<lowered>", ctx)
    with ctx:
        engine = ExecutionEngine(module, opt_level=opt_level, shared_libs=libs)
    keep: list[object] = [ctx, module, engine]

    def register(name: str, address: int) -> None:
        engine.raw_register_runtime(name, ctypes.c_void_p(address))

    keep += _register_runtime(llvm_ir, lib, register)
    if omp is not None and omp.path is None and lib is not None:  # blocks in turn, one core
        for name in openmp.OPENMP_SYMBOLS:
            register(name, runtime.symbol_address(lib, name))

    def entry() -> Callable[[int], None] | None:
        address = engine.raw_lookup(CIFACE + signature.function)
        return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address) if address else None

    fn = NativeFunction(
        signature,
        abi,
        entry,
        keepalive=keep,
        register_consumer=register,
        kind="jit",
        runtime_lib=lib,
        free_result=_pool_free(lib) if buffer_pool.uses_pool(llvm_ir) else None,
    )
    fn.blas = blas
    fn.openmp = omp
    return fn


def _openmp_for(
    llvm_ir: str, signature: EntrySignature, lib: ctypes.CDLL | None
) -> openmp.OpenMpRuntime | None:
    """The OpenMP runtime of parallel code (None for serial code); raise if there is none and
    no runtime library to bring the one-core stand-in."""
    if not openmp.uses_openmp(llvm_ir):
        return None
    omp = openmp.openmp_runtime()
    if omp.path is None and lib is None:
        raise MlirpipeError(
            Problem(
                f"@{signature.function} runs parallel loops (OpenMP) and no OpenMP runtime can "
                f"be loaded: {omp.note}; the one-core stand-in needs a C compiler (cc), "
                "none was found",
                hint=openmp.INSTALL_HINT + ", or install a C compiler",
            )
        )
    return omp


def _register_runtime(
    llvm_ir: str, lib: ctypes.CDLL | None, register: Callable[[str, int], None]
) -> list[object]:
    """Give the JIT the runtime functions `llvm_ir` calls; returns what must stay alive."""
    keep: list[object] = []
    if "memrefCopy" in llvm_ir:
        if lib is not None:
            register("memrefCopy", runtime.symbol_address(lib, "memrefCopy"))
        else:
            copy = _python_memref_copy()
            keep.append(copy)
            register("memrefCopy", ctypes.cast(copy, ctypes.c_void_p).value or 0)
    if "bf16" in llvm_ir and lib is not None:  # float -> bf16 rounding (not in older libgcc)
        for name in runtime.BF16_SYMBOLS:
            register(name, runtime.symbol_address(lib, name))
    if buffer_pool.uses_pool(llvm_ir):  # memref.alloc/dealloc through the pool of freed blocks
        for name, address in (
            {n: runtime.symbol_address(lib, n) for n in buffer_pool.POOL_SYMBOLS}
            if lib is not None
            else buffer_pool.libc_addresses()
        ).items():
            register(name, address)
    return keep


def _pool_free(lib: ctypes.CDLL | None) -> Callable[[int], None] | None:
    """The pool's free (None without the runtime: then the pool's names are malloc and free)."""
    if lib is None:
        return None
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        runtime.symbol_address(lib, buffer_pool.POOL_SYMBOLS[1])
    )


def _python_memref_copy() -> CFuncPtr:
    """memrefCopy for machines without a C compiler (slow: a Python call per copy)."""

    def copy(elsize: int, src: int, dst: int) -> None:
        s, d = UnrankedDescriptor.from_address(src), UnrankedDescriptor.from_address(dst)
        sd = descriptor_type(s.rank).from_address(s.descriptor)
        dd = descriptor_type(d.rank).from_address(d.descriptor)
        shape = tuple(sd.sizes) if s.rank else ()
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return
        dtype = np.dtype(f"V{elsize}")

        def view(desc, rank):
            strides = tuple(desc.strides) if rank else ()
            span = 1 + sum((k - 1) * st for k, st in zip(shape, strides, strict=True))
            base = desc.aligned + desc.offset * elsize
            raw = np.ctypeslib.as_array((ctypes.c_byte * (span * elsize)).from_address(base))
            return np.lib.stride_tricks.as_strided(
                raw.view(dtype), shape, tuple(st * elsize for st in strides)
            )

        view(dd, d.rank)[...] = view(sd, s.rank)

    return ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)(copy)
