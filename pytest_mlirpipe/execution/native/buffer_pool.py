"""Buffers of lowered code served from a pool of freed blocks instead of fresh pages.

A pipeline whose memref lowering uses MLIR's generic allocation functions
(`finalize-memref-to-llvm{use-generic-functions}`) calls `_mlir_memref_to_llvm_alloc(size)` and
`_mlir_memref_to_llvm_free(ptr)` for every `memref.alloc`/`memref.dealloc`. The runtime defines
them here: a block of at least POOL_MIN_BYTES, once freed, is kept (up to POOL_SLOTS blocks and
POOL_MAX_BYTES in all: one pool for all JIT-compiled code of the process, one in each model's
.so; kept until the process ends) and handed to the next allocation it fits, so
that a temporary of a few MB (the packed panels of a matmul) is page-faulted once, not at every
call; glibc would give such a block back to the system at each free. Smaller blocks go to
malloc and free directly. Without a C compiler the two names are libc's malloc and free.
"""

from __future__ import annotations

import ctypes

POOL_SLOTS = 16
POOL_MIN_BYTES = 64 << 10
POOL_MAX_BYTES = 256 << 20
POOL_SYMBOLS = ("_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_free")

# Each block starts with a 64-byte header holding its size: what follows keeps malloc's
# 16-byte alignment, and the lowering asks for more and aligns the pointer itself when a
# memref.alloc has an alignment. The pool is a spin-locked array of (block, size): a lookup
# never reads a block it does not own. A block is reused for a request of at least half its
# size.
POOL_SOURCE = (
    r"""
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
"""
    + f"#define MLIRPIPE_POOL_SLOTS {POOL_SLOTS}\n"
    + f"#define MLIRPIPE_POOL_MIN ((uint64_t){POOL_MIN_BYTES})\n"
    + f"#define MLIRPIPE_POOL_MAX ((uint64_t){POOL_MAX_BYTES})\n"
    + r"""
typedef struct { uint64_t size; char pad[56]; } mlirpipe_block;
static struct { mlirpipe_block *block; uint64_t size; } mlirpipe_pool[MLIRPIPE_POOL_SLOTS];
static uint64_t mlirpipe_pool_bytes;
static atomic_flag mlirpipe_pool_busy = ATOMIC_FLAG_INIT;

static void mlirpipe_pool_lock(void) {
  while (atomic_flag_test_and_set_explicit(&mlirpipe_pool_busy, memory_order_acquire)) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}
static void mlirpipe_pool_unlock(void) {
  atomic_flag_clear_explicit(&mlirpipe_pool_busy, memory_order_release);
}

__attribute__((visibility("default"))) void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  if (size >= MLIRPIPE_POOL_MIN) {
    int best = -1;
    mlirpipe_pool_lock();
    for (int i = 0; i < MLIRPIPE_POOL_SLOTS; ++i) {
      uint64_t s = mlirpipe_pool[i].size;
      if (mlirpipe_pool[i].block && s >= size && s / 2 <= size &&
          (best < 0 || s < mlirpipe_pool[best].size))
        best = i;
    }
    mlirpipe_block *b = best < 0 ? NULL : mlirpipe_pool[best].block;
    if (b) {
      mlirpipe_pool[best].block = NULL;
      mlirpipe_pool_bytes -= b->size;
    }
    mlirpipe_pool_unlock();
    if (b) return b + 1;
  }
  if (size > SIZE_MAX - sizeof(mlirpipe_block)) return NULL;
  mlirpipe_block *b = malloc(sizeof(mlirpipe_block) + size);
  if (!b) return NULL;
  b->size = size;
  return b + 1;
}

__attribute__((visibility("default"))) void _mlir_memref_to_llvm_free(void *p) {
  if (!p) return;
  mlirpipe_block *b = (mlirpipe_block *)p - 1;
  if (b->size >= MLIRPIPE_POOL_MIN) {
    int kept = 0;
    mlirpipe_pool_lock();
    if (mlirpipe_pool_bytes + b->size <= MLIRPIPE_POOL_MAX)
      for (int i = 0; i < MLIRPIPE_POOL_SLOTS && !kept; ++i)
        if (!mlirpipe_pool[i].block) {
          mlirpipe_pool[i].block = b;
          mlirpipe_pool[i].size = b->size;
          mlirpipe_pool_bytes += b->size;
          kept = 1;
        }
    mlirpipe_pool_unlock();
    if (kept) return;
  }
  free(b);
}
"""
)


def uses_pool(llvm_ir: str) -> bool:
    return any(name in llvm_ir for name in POOL_SYMBOLS)


def libc_addresses() -> dict[str, int]:
    """malloc and free under the pool's names (no pool: for machines without a C compiler)."""
    libc = ctypes.CDLL(None)
    return {
        POOL_SYMBOLS[0]: ctypes.cast(libc.malloc, ctypes.c_void_p).value or 0,
        POOL_SYMBOLS[1]: ctypes.cast(libc.free, ctypes.c_void_p).value or 0,
    }
