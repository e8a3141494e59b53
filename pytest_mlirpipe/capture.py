"""Capture what a block writes to the process's stdout and stderr, C and C++ code included."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(slots=True)
class Captured:
    """Bytes written to file descriptors 1 and 2 inside `capture_fds()`, known on its exit."""

    stdout: bytes = b""
    stderr: bytes = b""


def _flush_all() -> None:
    """Flush Python's and C stdio's buffers, so nothing written before or inside the block
    lands on the wrong side of a descriptor swap."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is None:  # no console: sys.__stdout__ is None under pythonw
            continue
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        _libc().fflush(None)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None)


@contextlib.contextmanager
def capture_fds() -> Iterator[Captured]:
    """Point descriptors 1 and 2 at anonymous files for the block, then back; what MLIR's C++
    wrote there (`print-op-stats`, `-mlir-timing`, IR dumps, `llvm::errs()`) is in the result.

    Python's `sys.stdout`/`sys.stderr` objects are left alone: a caller that swapped them for
    its own streams keeps what Python code writes."""
    captured = Captured()
    _flush_all()
    # Anonymous (unlinked) files: nothing is left in $TMPDIR whatever happens.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                yield captured
            finally:
                _flush_all()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
        finally:
            for fd in saved:
                os.close(fd)
            # Also when the block raised: what was printed before the error is kept.
            out.seek(0)
            err.seek(0)
            captured.stdout, captured.stderr = out.read(), err.read()
