"""Run risky work in a forked child: a crash, `exit` or hang there fails one test, not the run.

The child is a fork of the warm test process (MLIR bindings loaded, pipelines validated), so
starting it costs a few milliseconds, not an interpreter start. It leaves progress notes
(`note("stage bufferize")`) as it goes, in memory shared with the parent (no system call, no
wake-up of the parent), so a crash or a timeout can say where it happened.
A child that times out is killed with every process it started (as lit kills a command tree);
the child adopts the orphans of the tools it started, so a tool that exited cannot leave one
behind, and what is still running when the work ends is killed then.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import faulthandler
import mmap
import os
import pickle
import selectors
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

# The tail of a child's notes the parent keeps (a chatty child cannot fill its memory).
_NOTES_KEPT = 1 << 16


class _NoteBoard:
    """A child's progress notes in memory shared with its parent, which reads them once the
    child has ended (the memory outlives a crash or a kill): a ring keeping the last
    _NOTES_KEPT bytes, its first 8 bytes counting all bytes written."""

    def __init__(self) -> None:
        self.memory = mmap.mmap(-1, 8 + _NOTES_KEPT)  # anonymous and shared across fork

    def write(self, data: bytes) -> None:
        data = data[-_NOTES_KEPT:]
        written = int.from_bytes(self.memory[:8], "little")
        start = written % _NOTES_KEPT
        first = min(len(data), _NOTES_KEPT - start)
        self.memory[8 + start : 8 + start + first] = data[:first]
        self.memory[8 : 8 + len(data) - first] = data[first:]
        self.memory[:8] = (written + len(data)).to_bytes(8, "little")

    def read(self) -> bytes:
        written = int.from_bytes(self.memory[:8], "little")
        if written <= _NOTES_KEPT:
            return self.memory[8 : 8 + written]
        start = written % _NOTES_KEPT
        return self.memory[8 + start :] + self.memory[8 : 8 + start]


# Where a contained child leaves its progress notes (unset outside a contained child). A
# context variable, not a parameter: the stage runner and the execution code note progress
# from deep inside, and run_contained sets it only in the child it forks.
_NOTES: contextvars.ContextVar[_NoteBoard | None] = contextvars.ContextVar(
    "mlirpipe_notes", default=None
)


def note(text: str) -> None:
    """Record where the contained work is (no-op outside a contained child)."""
    board = _NOTES.get()
    if board is not None:
        board.write(text.replace("\n", " ").encode("utf-8", "replace") + b"\n")


# What a contained child keeps until it exits (only ever filled in a child, which ends with
# os._exit): a compiled model's JIT engine and MLIR context are not torn down for nothing.
_KEPT: list[Any] = []


def keep_until_exit(value: Any) -> None:
    """In a contained child, keep `value` alive until the child exits, skipping its teardown
    (no-op outside a contained child, where it is freed as usual)."""
    if _NOTES.get() is not None:
        _KEPT.append(value)


def is_available() -> bool:
    return hasattr(os, "fork")


@dataclass(frozen=True, slots=True)
class Contained:
    """How contained work ended: `ok` (with its value), `error` (a Python exception, with its
    traceback text), `crashed` (a signal or an exit status) or `timeout`."""

    kind: str
    value: Any = None
    detail: str = ""
    notes: tuple[str, ...] = ()  # the last progress notes, oldest first
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def run_contained(fn: Callable[[], Any], timeout: float | None = None) -> Contained:
    """Call `fn()` in a forked child and return its picklable result or how it ended."""
    reap()  # the last child, if it is still exiting: never two at once
    result_r, result_w = os.pipe()
    # Never written: it reads as closed once the child has exited (with whatever it started
    # that inherited it), so the wait for the exit keeps the deadline.
    alive_r, alive_w = os.pipe()
    board = _NoteBoard()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    start = time.perf_counter()
    # SIGINT blocked across the fork: a Ctrl-C then cannot land in the child's at-fork hooks
    # (other libraries'), before the child has its quiet handler; it waits until then
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    if pid == 0:  # the child: never returns
        os.close(result_r)
        os.close(alive_r)
        _run_child(fn, result_w, board, mask)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    os.close(result_w)
    os.close(alive_w)
    deadline = None if not timeout else start + timeout
    try:
        payload, timed_out = _collect(pid, result_r, alive_r, deadline)
    finally:
        os.close(result_r)
        os.close(alive_r)
    seconds = time.perf_counter() - start
    if payload is not None:  # the child is exiting, waited for later (_collect)
        status = 0
    else:
        _, status = os.waitpid(pid, 0)
    notes = board.read()
    board.memory.close()
    where = tuple(notes.decode("utf-8", "replace").splitlines()[-20:])
    if timed_out:
        return Contained("timeout", None, f"no result after {timeout:g} s", where, seconds)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return Contained("crashed", None, f"killed by {signal_name(sig)}", where, seconds)
    code = os.WEXITSTATUS(status)
    if code != 0 or payload is None:
        return Contained("crashed", None, f"exited with status {code}", where, seconds)
    kind, value = pickle.loads(payload)
    if kind == "error":
        return Contained("error", None, value, where, seconds)
    return Contained("ok", value, "", where, seconds)


def _run_child(
    fn: Callable[[], Any], result_w: int, board: _NoteBoard, mask: set[int | signal.Signals]
) -> NoReturn:
    """In the forked child: run `fn`, send its pickled result (or traceback), exit. SIGINT,
    blocked across the fork, is let through (`mask`) once its quiet handler is in place."""
    faulthandler.disable()  # the parent reports the signal and where; no stack dump
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    _NOTES.set(board)
    _adopt_orphans()
    try:
        payload = pickle.dumps(("ok", fn()))
    except BaseException:
        payload = pickle.dumps(("error", traceback.format_exc()))
    _end_leftovers()
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        # The result, its length first, is the last thing this child does: once the parent
        # has all of it, only the exit is left.
        with os.fdopen(result_w, "wb") as out:
            out.write(len(payload).to_bytes(8, "little") + payload)
    except BaseException:
        os._exit(70)
    os._exit(0)


def _interrupted(signum: int, frame: object) -> NoReturn:
    """SIGINT in a contained child (Ctrl-C reaches the whole process group): end at once and
    quietly, with whatever the work started; the parent reports the interruption, once."""
    with contextlib.suppress(Exception):
        import psutil

        for child in psutil.Process().children():
            kill_tree(child.pid)
    os._exit(128 + signal.SIGINT)


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while processes are started: they inherit that (across exec too), so a
    Ctrl-C reaches only this process, which ends them (`kill_tree`), not each of them with a
    traceback of its own."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


# prctl(2)'s PR_SET_CHILD_SUBREAPER: orphaned descendants become this process's children.
_PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans() -> None:
    """Make this child the parent of every orphan its descendants leave (Linux): a tool that
    started a process and exited then leaves it in this child's tree, where `kill_tree` and
    `_end_leftovers` find it, not under init."""
    import ctypes

    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _end_leftovers() -> None:
    """Kill and reap whatever the work left running (background processes of its tools, which
    this child adopted): no process outlives the contained work. A wait that finds no child
    costs one system call."""
    killed = False
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if killed else os.WNOHANG)
        except ChildProcessError:  # none left
            return
        if pid == 0:  # some still run
            import psutil

            for child in psutil.Process().children():
                kill_tree(child.pid)
            killed = True


# Children that sent their whole result and are exiting, reaped by `reap`.
_EXITING: list[int] = []


def reap() -> None:
    """Wait for the children that sent their result and are exiting (at the next fork, at the
    end of a session, at exit): no process outlives the run."""
    while _EXITING:
        with contextlib.suppress(ChildProcessError):  # someone else's wait took it
            os.waitpid(_EXITING[-1], 0)
        _EXITING.pop()  # (after the wait: a Ctrl-C during it leaves it for the next)


atexit.register(reap)
os.register_at_fork(after_in_child=_EXITING.clear)  # the parent's children, not the child's


def _whole(data: bytes) -> bytes | None:
    """The result in what a child sent (its length, then its bytes), or None when cut short."""
    if len(data) < 8 or len(data) - 8 != int.from_bytes(data[:8], "little"):
        return None
    return data[8:]


def _collect(
    pid: int, result_r: int, alive_r: int, deadline: float | None
) -> tuple[bytes | None, bool]:
    """(the whole result or None, timed out) read from the child until its whole result has
    come, or it has exited (both pipes closed), or the deadline passes (then the child is
    killed)."""
    chunks: list[bytes] = []
    sel = selectors.DefaultSelector()
    sel.register(result_r, selectors.EVENT_READ)
    sel.register(alive_r, selectors.EVENT_READ)
    try:
        open_fds = 2
        while open_fds:
            wait = None if deadline is None else max(0.0, deadline - time.perf_counter())
            events = sel.select(wait)
            if deadline is not None and time.perf_counter() >= deadline:
                kill_tree(pid)
                return None, True
            for key, _ in events:
                data = os.read(key.fd, 1 << 16)
                if data:
                    chunks.append(data)  # only the result pipe is ever written
                    continue
                sel.unregister(key.fd)
                open_fds -= 1
                if key.fd == result_r and _whole(b"".join(chunks)) is not None:
                    open_fds = 0  # the exit is not waited for (below)
                    break
    except BaseException:  # Ctrl-C: take the child and what it started down with us
        kill_tree(pid)
        os.waitpid(pid, 0)
        raise
    finally:
        sel.close()
    whole = _whole(b"".join(chunks))
    if whole is not None:
        # The whole result came, the child's last act before `os._exit(0)`: its exit (the
        # teardown of its memory takes milliseconds) is waited for later (reap), not here.
        _EXITING.append(pid)
    return whole, False


def kill_tree(pid: int) -> None:
    """Kill process `pid` and all its descendants (the tools a RUN line started, and theirs).
    Each is stopped before its children are listed, so none starts another unseen; then all
    are killed. Like lit's killProcessAndChildren, with psutil."""
    import psutil

    try:
        root = psutil.Process(pid)
        root.suspend()
    except psutil.Error:  # already ended (a zombie to reap), or not ours to list
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return
    found = {pid: root}
    while True:
        try:
            new = [p for p in root.children(recursive=True) if p.pid not in found]
        except psutil.Error:
            break
        if not new:
            break
        for p in new:
            found[p.pid] = p
            with contextlib.suppress(psutil.Error):
                p.suspend()
    for p in found.values():
        with contextlib.suppress(psutil.Error):
            p.kill()


def signal_name(sig: int) -> str:
    """A signal's name and what it usually means, e.g. `SIGSEGV (a segmentation fault)`."""
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
    meaning = {
        "SIGSEGV": "a segmentation fault",
        "SIGABRT": "an abort (failed assertion or LLVM fatal error)",
        "SIGBUS": "a bus error",
        "SIGFPE": "an arithmetic exception",
        "SIGILL": "an illegal instruction",
        "SIGKILL": "a kill",
    }.get(name)
    return f"{name} ({meaning})" if meaning else name
