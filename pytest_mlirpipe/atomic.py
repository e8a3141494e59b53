"""Write files whole or not at all: a uniquely named temporary file, then one rename — but
only onto a regular file; a device, FIFO or socket is written in place, never replaced."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def is_special(path: str | os.PathLike) -> bool:
    """True when `path` exists (through symlinks) and is not a regular file or a folder:
    a character or block device (`/dev/null`), a FIFO or a socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def write_atomic(path: str | os.PathLike, text: str | bytes, make_parents: bool = False) -> None:
    """Replace `path` with `text` (UTF-8; bytes are written as they are) in one step.

    The temporary file sits next to `path` (a rename never crosses file systems) under a name
    no other process, thread or xdist worker can pick; a failure or Ctrl-C between the first
    byte and the rename removes it, so readers see the old content or the new one, never half.
    Only a regular file (or a new path) is replaced so: a device, FIFO or socket (`-o
    /dev/null`) is opened and written in place, and a symlink is written through, to the
    file it names, so the link stays a link.
    Raises OSError when the folder cannot be written (or is missing, unless `make_parents`).
    """
    target = Path(path)
    if is_special(target):
        _write_in_place(target, text)
        return
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as f:
                f.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        with contextlib.suppress(OSError):  # keep the permissions a plain open() would give
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_in_place(target: Path, text: str | bytes) -> None:
    if isinstance(text, bytes):
        with open(target, "wb") as f:
            f.write(text)
    else:
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(text)
