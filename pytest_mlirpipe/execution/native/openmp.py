"""The OpenMP runtime parallel lowered code calls: libomp when found, else a one-core stand-in."""

from __future__ import annotations

import ctypes
import functools
import glob
import os
from dataclasses import dataclass
from pathlib import Path

# A path to the OpenMP runtime to load, or "none" to run parallel loops on one core.
OPENMP_ENV = "MLIRPIPE_OPENMP_LIBRARY"
# What MLIR's OpenMP translation calls (omp.parallel + omp.wsloop with a static schedule).
OPENMP_SYMBOLS = (
    "__kmpc_fork_call",
    "__kmpc_global_thread_num",
    "__kmpc_for_static_init_8u",
    "__kmpc_for_static_fini",
    "__kmpc_barrier",
)
# Where Debian/Ubuntu's libomp5-* / libomp-*-dev put it, newest LLVM first.
_SEARCH = (
    "/usr/lib/llvm-*/lib/libomp.so.5",
    "/usr/lib/x86_64-linux-gnu/libomp.so.5",
    "/usr/lib/aarch64-linux-gnu/libomp.so.5",
    "/usr/local/lib/libomp.so*",
)
INSTALL_HINT = (
    "install LLVM's OpenMP runtime (Debian/Ubuntu: apt-get install libomp-22-dev) or name it "
    f"with ${OPENMP_ENV}=/path/to/libomp.so"
)
MAX_FORK_ARGS = 16

# The one-core stand-in: each parallel region runs once, on the calling thread, and its
# worksharing loop gets the whole iteration space (what libomp does with one thread).
FALLBACK_SOURCE = r"""
#include <stdarg.h>
#include <stdint.h>
typedef void (*mlirpipe_microtask)(int32_t *, int32_t *, ...);
__attribute__((visibility("default"))) int32_t __kmpc_global_thread_num(void *loc) {
  (void)loc;
  return 0;
}
__attribute__((visibility("default"))) void __kmpc_barrier(void *loc, int32_t gtid) {
  (void)loc; (void)gtid;
}
__attribute__((visibility("default"))) void __kmpc_for_static_fini(void *loc, int32_t gtid) {
  (void)loc; (void)gtid;
}
__attribute__((visibility("default"))) void __kmpc_for_static_init_8u(
    void *loc, int32_t gtid, int32_t sched, int32_t *last, uint64_t *lower, uint64_t *upper,
    int64_t *stride, int64_t incr, int64_t chunk) {
  (void)loc; (void)gtid; (void)sched; (void)incr; (void)chunk;
  if (last) *last = 1;
  *stride = (int64_t)(*upper - *lower) + 1;
}
__attribute__((visibility("default"))) void __kmpc_fork_call(
    void *loc, int32_t argc, mlirpipe_microtask task, ...) {
  (void)loc;
  void *a[MAX_FORK_ARGS] = {0};
  va_list ap;
  va_start(ap, task);
  for (int32_t i = 0; i < argc && i < MAX_FORK_ARGS; ++i) a[i] = va_arg(ap, void *);
  va_end(ap);
  int32_t gtid = 0, btid = 0;
  task(&gtid, &btid, ARGS);
}
""".replace("MAX_FORK_ARGS", str(MAX_FORK_ARGS)).replace(
    "ARGS", ", ".join(f"a[{i}]" for i in range(MAX_FORK_ARGS))
)


@dataclass(frozen=True, slots=True)
class OpenMpRuntime:
    """The OpenMP runtime parallel code gets: a loadable libomp, or None and why not."""

    path: Path | None
    note: str  # one line: which runtime, or why the loops run on one core and what to do

    @property
    def identity(self) -> str:
        """What native code built against this runtime depends on (for cache keys)."""
        return f"openmp {self.path}" if self.path is not None else "openmp one-core stand-in"


def uses_openmp(llvm_ir: str) -> bool:
    """Whether a lowered (LLVM-dialect) module has parallel regions."""
    return "omp.parallel" in llvm_ir


def openmp_runtime() -> OpenMpRuntime:
    """The runtime for parallel code: $MLIRPIPE_OPENMP_LIBRARY, else the first libomp found."""
    return _runtime(os.environ.get(OPENMP_ENV, "").strip())


@functools.cache
def _runtime(setting: str) -> OpenMpRuntime:
    if setting.lower() in ("none", "off", "0"):
        return OpenMpRuntime(None, f"parallel loops run on one core (${OPENMP_ENV}={setting})")
    if setting:
        problem = _unloadable(Path(setting))
        if problem is None:
            return OpenMpRuntime(Path(setting), f"OpenMP runtime {setting} (${OPENMP_ENV})")
        return OpenMpRuntime(
            None,
            f"parallel loops run on one core: ${OPENMP_ENV}={setting} {problem}; "
            "give a libomp.so that defines __kmpc_fork_call",
        )
    candidates = sorted({p for pattern in _SEARCH for p in glob.glob(pattern)}, reverse=True)
    for candidate in candidates:
        if _unloadable(Path(candidate)) is None:
            return OpenMpRuntime(Path(candidate), f"OpenMP runtime {candidate}")
    looked = ", ".join(_SEARCH)
    return OpenMpRuntime(
        None,
        f"parallel loops run on one core: no OpenMP runtime found (looked for {looked}); "
        + INSTALL_HINT,
    )


def _unloadable(path: Path) -> str | None:
    """Why `path` is no usable OpenMP runtime, or None if it is one."""
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        return f"cannot be loaded ({exc})"
    missing = [s for s in OPENMP_SYMBOLS if not hasattr(lib, s)]
    if missing:
        return f"lacks {', '.join(missing)} (GNU libgomp has no __kmpc_* entry points)"
    return None


def set_openmp_threads(threads: int) -> bool:
    """Threads for the next parallel regions started from this thread; False without libomp."""
    rt = openmp_runtime()
    if rt.path is None:
        return False
    ctypes.CDLL(str(rt.path)).omp_set_num_threads(ctypes.c_int(threads))
    return True
