"""The check mode of preloaded commands: the same command fresh and forked, told apart."""

from __future__ import annotations

import difflib
import os
import signal
import subprocess
from typing import NoReturn

# (stdout, stderr, exit status) of one run
Ran = tuple[bytes, bytes, int]

# Lines of a differing output shown in the report.
_SHOWN = 20


def read_stdin(stdin) -> bytes:
    """The bytes lit gives the command on stdin: none for a pipe lit closes at once, else all
    of the file or the previous command's output."""
    if stdin is None or stdin == subprocess.PIPE or stdin == subprocess.DEVNULL:
        return b""
    fd = stdin if isinstance(stdin, int) else stdin.fileno()
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def compare(fresh: Ran, forked: Ran) -> str:
    """'' when both runs did the same, else what differs: the status, then a diff of each
    output that differs (fresh first)."""
    found = []
    if fresh[2] != forked[2]:
        found.append(f"exit status: {_status(fresh[2])} fresh, {_status(forked[2])} preloaded")
    for name, a, b in (("stdout", fresh[0], forked[0]), ("stderr", fresh[1], forked[1])):
        if a != b:
            diff = difflib.unified_diff(
                a.decode("utf-8", "replace").splitlines(),
                b.decode("utf-8", "replace").splitlines(),
                f"{name} (fresh)",
                f"{name} (preloaded)",
                lineterm="",
            )
            lines = list(diff)
            more = len(lines) - _SHOWN
            tail = [f"... {more} more lines"] if more > 0 else []
            found.append("\n".join([*lines[:_SHOWN], *tail]) or f"{name}: differs")
    return "\n".join(found)


def _status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return str(code)


def replay(stdout: bytes, stderr: bytes, status: int) -> NoReturn:
    """In a forked child wired as lit asked: write a run's output and end as it ended."""
    for fd, data in ((1, stdout), (2, stderr)):
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except OSError:
                break
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status & 0xFF)


def differs_report(differences: list[str]) -> str:
    """The FAIL line and details of a file whose preloaded commands did not do what their
    fresh runs did (the first difference; how many there were)."""
    more = f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""
    return (
        f"a preloaded command did not do what its fresh run did{more} "
        f"(--mlirpipe-preload=check): {differences[0]}"
    )
