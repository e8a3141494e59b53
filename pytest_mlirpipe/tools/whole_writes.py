"""Standard output that writes every byte or raises, also under `python -u` (PYTHONUNBUFFERED)."""

from __future__ import annotations

import io
import sys
from typing import Any


class WholeWrites(io.RawIOBase):
    """A raw stream whose `write` returns only once every byte is written. Unbuffered, Python's
    text stdout writes straight to the raw file and drops what a partial write left: a reader
    that leaves mid-write (`| head -1`) then goes unnoticed, and the tool ends with status 0."""

    def __init__(self, raw: Any):
        super().__init__()
        self._raw = raw

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def isatty(self) -> bool:
        return self._raw.isatty()

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):  # the next write raises what stopped the last one short
            done += self._raw.write(view[done:]) or 0
        return done


def whole_stdout() -> None:
    """Make `sys.stdout` write every byte or raise, when it writes to a raw file unbuffered."""
    stdout = sys.stdout
    raw = getattr(stdout, "buffer", None)
    if not isinstance(stdout, io.TextIOWrapper) or not isinstance(raw, io.RawIOBase):
        return  # buffered: its BufferedWriter already writes every byte or raises
    sys.stdout = io.TextIOWrapper(
        WholeWrites(raw),
        encoding=stdout.encoding,
        errors=stdout.errors,
        line_buffering=stdout.line_buffering,
        write_through=True,
    )
