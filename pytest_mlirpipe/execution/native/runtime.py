"""The small C runtime lowered code may call: memrefCopy, and native result consumers."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import subprocess
import tempfile
from pathlib import Path

from ...errors import MlirpipeError
from ..cache import default_cache_dir
from .buffer_pool import POOL_SOURCE
from .c_compiler import find_c_compiler
from .openmp import FALLBACK_SOURCE as OPENMP_FALLBACK_SOURCE

MAX_RESULTS = 16
SLOT_BYTES = 24 + 16 * 8  # a ranked descriptor of rank <= 8
MAX_RANK = 8


# float -> bf16, which LLVM calls for fptrunc and libgcc before GCC 13 lacks; bf16 travels in
# an XMM register like _Float16. Rounds to nearest even; NaN stays a (quiet) NaN.
BF16_SOURCE = r"""
#if defined(__x86_64__) || defined(__aarch64__)
__attribute__((weak, visibility("default"))) _Float16 __truncsfbf2(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t b = (u & 0x7fffffffu) > 0x7f800000u
                   ? (uint16_t)((u >> 16) | 0x40u)
                   : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  _Float16 h;
  memcpy(&h, &b, 2);
  return h;
}
#endif
"""
BF16_SYMBOLS = ("__truncsfbf2",)


def runtime_source() -> str:
    consumers = []
    for n in range(1, MAX_RESULTS + 1):
        params = ", ".join(f"const mlirpipe_unranked *r{i}" for i in range(n))
        body = " ".join(f"take({i}, r{i});" for i in range(n))
        consumers.append(f"void mlirpipe_consume_{n}({params}) {{ {body} }}")
    return (
        r"""/* pytest-mlirpipe runtime: what MLIR's c_runner_utils would give lowered code. */
#include <stdint.h>
#include <string.h>

typedef struct { int64_t rank; void *descriptor; } mlirpipe_unranked;
typedef struct { void *allocated; char *aligned; int64_t offset; int64_t dims[]; } mlirpipe_any;

"""
        + f"char mlirpipe_taken[{MAX_RESULTS}][{SLOT_BYTES}];\n"
        + r"""
/* Keep a result descriptor: RefBackend's consume callbacks, without a Python callback. */
static void take(int i, const mlirpipe_unranked *r) {
  memcpy(mlirpipe_taken[i], r->descriptor, 24 + 16 * (size_t)r->rank);
}

/* memref.copy of any layout, as in MLIR's CRunnerUtils. */
void memrefCopy(int64_t elsize, const mlirpipe_unranked *src, const mlirpipe_unranked *dst) {
  const mlirpipe_any *s = (const mlirpipe_any *)src->descriptor;
  const mlirpipe_any *d = (const mlirpipe_any *)dst->descriptor;
  int64_t rank = src->rank, idx[64] = {0}, total = 1;
  for (int64_t r = 0; r < rank; ++r) total *= s->dims[r];
  if (total == 0) return;
  const char *in = s->aligned + s->offset * elsize;
  char *out = d->aligned + d->offset * elsize;
  for (int64_t n = 0; n < total; ++n) {
    int64_t so = 0, dof = 0;
    for (int64_t r = 0; r < rank; ++r) {
      so += idx[r] * s->dims[rank + r];
      dof += idx[r] * d->dims[rank + r];
    }
    memcpy(out + dof * elsize, in + so * elsize, (size_t)elsize);
    for (int64_t r = rank - 1; r >= 0; --r) { if (++idx[r] < s->dims[r]) break; idx[r] = 0; }
  }
}

"""
        + BF16_SOURCE
        + POOL_SOURCE
        + OPENMP_FALLBACK_SOURCE
        + "\n".join(consumers)
        + "\n"
    )


@functools.cache
def runtime_library() -> ctypes.CDLL | None:
    """The runtime built once per source version (in the artifact cache); None without cc."""

    try:
        cc = find_c_compiler()
    except MlirpipeError:
        return None
    source = runtime_source()
    tag = hashlib.sha256(source.encode()).hexdigest()[:16]
    target_dir = default_cache_dir() / "runtime"
    target = target_dir / f"libmlirpipe_runtime_{tag}.so"
    if target.is_file():
        return ctypes.CDLL(str(target))
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError:  # no cache: build it in a folder removed once the library is loaded
        with tempfile.TemporaryDirectory(prefix="mlirpipe-runtime-") as tmp:
            built = _build(cc, source, Path(tmp) / target.name)
            return ctypes.CDLL(str(built)) if built is not None else None
    with tempfile.TemporaryDirectory(dir=target_dir) as tmp:
        built = _build(cc, source, Path(tmp) / target.name)
        if built is None:
            return None
        built.replace(target)
    return ctypes.CDLL(str(target))


def _build(cc: str, source: str, out: Path) -> Path | None:
    """Compile the runtime's C `source` into the shared library `out` (None if cc fails)."""
    c = out.parent / "runtime.c"
    c.write_text(source)
    proc = subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(c)], capture_output=True, text=True
    )
    return out if proc.returncode == 0 else None


def symbol_address(lib: ctypes.CDLL, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0


def taken_address(lib: ctypes.CDLL, index: int) -> int:
    base = ctypes.addressof(ctypes.c_char.in_dll(lib, "mlirpipe_taken"))
    return base + index * SLOT_BYTES
