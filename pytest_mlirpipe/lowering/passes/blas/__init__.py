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

Option `prefix` goes before the CBLAS names (`scipy_` gives `scipy_cblas_sgemm`); its default,
the same for every caller, is the configured BLAS library's (`symbols.symbol_prefix()`).

The modules: `matching` (which ops are gemms), `aliasing` (what touches a buffer), `folding`
(fills and transposes folded into the call), `layout` (leading dimensions and transpose
flags), `emit` (the helper's MLIR text), `rewrite` (ops replaced by calls).
"""

from __future__ import annotations

import sys

from ..registry import PassBody, register
from .rewrite import Rewriter
from .symbols import PrefixDefault

PASS_NAME = "mlirpipe-matmul-to-blas"


@register(
    PASS_NAME,
    "Rewrite linalg.matmul / batch_matmul / matmul-like generic on f32/f64 buffers into CBLAS "
    "gemm calls; `prefix` is the symbol prefix (default: the configured BLAS library's, "
    "$MLIRPIPE_BLAS_PREFIX or scipy-openblas32's), `debug` reports every op left as it was and why",
    options=("prefix", "debug"),
    defaults=PrefixDefault(),
)
def matmul_to_blas(options: dict[str, str]) -> PassBody:
    # The stage runner fills in `prefix` from the registered defaults when the text omits it.
    prefix = options["prefix"]
    debug = _flag(options.get("debug", "false"))

    def run(op, pass_) -> None:
        Rewriter(op, prefix, _remark if debug else None).run()

    return run


def _flag(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "on", ""):
        return True
    if value in ("false", "0", "off"):
        return False
    raise ValueError(f"{PASS_NAME}: option 'debug' takes true or false, not {text!r}")


def _remark(op, message: str) -> None:
    """The `debug` option's output: straight to the process's stderr, as MLIR's `-debug` writes
    (the one write to a stream in the lowering layer, asked for by the option; the bindings
    cannot emit a remark diagnostic, only an error)."""
    from ....mlir_env import location_of

    loc = location_of(op.location)
    where = f"{loc}: " if loc else ""
    sys.stderr.write(f"{where}remark: {PASS_NAME}: {message}\n")
