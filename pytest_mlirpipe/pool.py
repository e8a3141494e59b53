"""--mlirpipe-jobs N: the run's RUN/CHECK files run by N processes forked from this one once
it has collected them, their reports given to pytest's hooks here (the terminal, --junitxml,
the cache) as a serial run gives them. One start-up and one collection for the whole run,
where `pytest -n N` pays both in each of N interpreters and sends every report through a
controller; lit's own workers run the same way (forked after discovery)."""

from __future__ import annotations

import contextlib
import importlib
import mmap
import os
import pickle
import selectors
import signal
import struct
import sys
import threading
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pytest

from . import contain
from .contain import signal_name
from .items import MlirItem

_STOP = -1
_AHEAD = 2  # files a worker holds: the one it runs and the next
_HEADER = struct.Struct("!I")  # the size of a pickled message
_INDEX = struct.Struct("!i")
# Shared with the workers: [0] the parent asks them to take no new file (-x, --maxfail),
# [1 + slot] the file the worker in that slot runs, -1 between files.
_BOARD = struct.Struct("!i")
# Seconds a worker has to end after a Ctrl-C or an error here before it is killed.
_GRACE = 5.0


def register(config: pytest.Config, jobs: int) -> None:
    """The pool, for a run that asks for one and runs its tests in this process (not an
    xdist controller or worker); --mlirpipe-jobs with xdist's -n is a usage error."""
    if jobs <= 1 or hasattr(config, "workerinput"):
        return
    distributing = bool(config.getoption("numprocesses", None)) and (
        config.getoption("dist", "no") != "no"
    )
    if not distributing:
        config.pluginmanager.register(FilePool(config, jobs), "mlirpipe-jobs")
    elif config.getoption("--mlirpipe-jobs", None):
        raise pytest.UsageError(
            "mlirpipe: --mlirpipe-jobs and -n both split the run between processes: use one\n"
            "  hint: --mlirpipe-jobs forks its processes once this one has collected the files; "
            "-n starts interpreters that each collect them"
        )


class FilePool:
    """A pytest plugin object (one per run, registered when --mlirpipe-jobs > 1)."""

    def __init__(self, config: pytest.Config, jobs: int):
        self.config = config
        self.jobs = jobs

    def pytest_report_header(self) -> str:
        return f"mlirpipe: RUN/CHECK files run by {self.jobs} processes forked after collection"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        """The file tests by the pool, then every other test here, in order; None (pytest's
        own loop) where there is nothing to share or this process cannot fork safely."""
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            return None  # pytest's loop stops the run with the collection errors
        if session.config.option.collectonly:
            return None
        files: list[pytest.Item] = [i for i in session.items if isinstance(i, MlirItem)]
        if len(files) < 2:
            return None
        why = _cannot_fork() or _needs_this_process(session.config)
        if why:
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(
                    f"mlirpipe: --mlirpipe-jobs={self.jobs}: {why}; the files run here, "
                    "one at a time"
                )
            return None
        # the other tests, here: those before the first file first (an item that reports
        # the run's broken pipeline files comes first), then the files, then the rest
        first = session.items.index(files[0])
        before = session.items[:first]
        after = [i for i in session.items[first:] if not isinstance(i, MlirItem)]
        _run_here(session, before)
        _Pool(session, files, min(self.jobs, len(files))).run()
        _stop_if_told(session)
        _run_here(session, after)
        return True


def _run_here(session: pytest.Session, items: list[pytest.Item]) -> None:
    for i, item in enumerate(items):
        nextitem = items[i + 1] if i + 1 < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        _stop_if_told(session)


def _stop_if_told(session: pytest.Session) -> None:
    """As pytest's own loop after each test: -x, --maxfail, a plugin's stop."""
    if session.shouldfail:
        raise session.Failed(session.shouldfail)
    if session.shouldstop:
        raise session.Interrupted(session.shouldstop)


def _needs_this_process(config: pytest.Config) -> str | None:
    """Why the files must run in this process, in their order, or None."""
    if config.getoption("usepdb", False):
        return "--pdb needs this terminal"
    if config.getoption("stepwise", False) or config.getoption("stepwise_skip", False):
        return "--sw needs the files in their order"
    return None


def _cannot_fork() -> str | None:
    """Why this process may not fork workers, or None."""
    if not hasattr(os, "fork"):
        return "this platform cannot fork"
    threads = threading.active_count()
    if threads > 1:  # a thread holding a lock at the fork leaves it held in the child
        return f"this process runs {threads} Python threads (a fork copies one)"
    return None


@dataclass
class _Worker:
    pid: int
    slot: int  # its place on the board
    tasks: int  # fd: indexes to run, _STOP to end
    results: int  # fd: a length-prefixed pickled message per file
    given: deque[int] = field(default_factory=deque)  # indexes sent, not yet reported
    told_to_stop: bool = False
    buffer: bytearray = field(default_factory=bytearray)


class _Pool:
    """The workers of one run and the loop that hands them files and reports what they send."""

    def __init__(self, session: pytest.Session, files: list[pytest.Item], size: int):
        self.session = session
        self.config = session.config
        self.files = files
        self.size = size
        self.pending = deque(range(len(files)))
        self.workers: dict[int, _Worker] = {}  # by its results fd
        self.selector = selectors.DefaultSelector()
        self.board = mmap.mmap(-1, _BOARD.size * (1 + size))

    def _running(self, slot: int) -> int:
        return _BOARD.unpack_from(self.board, _BOARD.size * (1 + slot))[0]

    def run(self) -> None:
        try:
            for slot in range(self.size):
                self._start(slot)
            while self.workers:
                for key, _ in self.selector.select():
                    if key.fd in self.workers:  # not ended by an earlier event of this round
                        self._read(self.workers[key.fd])
        finally:
            self._end_all()
            self.selector.close()
            self.board.close()

    # ------------------------------------------------------------------ workers

    def _start(self, slot: int) -> None:
        tasks_r, tasks_w = os.pipe()
        results_r, results_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            with contextlib.suppress(Exception):
                stream.flush()
        _BOARD.pack_into(self.board, _BOARD.size * (1 + slot), -1)
        # SIGINT blocked across the fork, until the worker is known here (a Ctrl-C then ends
        # it with the others) and in the child until it can take one
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            with warnings.catch_warnings():  # 3.12+: a fork beside native threads
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for fd in (tasks_r, tasks_w, results_r, results_w):
                os.close(fd)
            raise
        if pid == 0:  # never returns
            # a process group of its own, which the parent ends whole (a terminal's Ctrl-C
            # reaches the parent alone, and nothing the file started outlives the run)
            os.setpgid(0, 0)
            inherited = [fd for w in self.workers.values() for fd in (w.tasks, w.results)]
            for fd in (tasks_w, results_r, *inherited):
                os.close(fd)
            _worker_main(self.config, self.files, tasks_r, results_w, mask, self.board, slot)
        try:
            with contextlib.suppress(OSError):  # the child's own call may have come first
                os.setpgid(pid, pid)
            os.close(tasks_r)
            os.close(results_w)
            worker = _Worker(pid, slot, tasks_w, results_r)
            self.workers[results_r] = worker
            self.selector.register(results_r, selectors.EVENT_READ)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self._top_up(worker)

    def _top_up(self, worker: _Worker) -> None:
        """Two files given at a time, the one running and the next, as lit's workers take
        them: a worker never waits for this process to report a file before its next."""
        while len(worker.given) < _AHEAD and not worker.told_to_stop:
            stop = self.session.shouldfail or self.session.shouldstop
            if stop:  # the files a worker holds but has not started stay unstarted
                _BOARD.pack_into(self.board, 0, 1)
            if stop or not self.pending:
                index = _STOP
                worker.told_to_stop = True
            else:
                index = self.pending.popleft()
                worker.given.append(index)
            with contextlib.suppress(OSError):  # it died: its results' end says so
                os.write(worker.tasks, _INDEX.pack(index))

    def _read(self, worker: _Worker) -> None:
        try:
            data = os.read(worker.results, 1 << 16)
        except OSError:
            data = b""
        if not data:
            self._ended(worker)
            return
        worker.buffer += data
        while len(worker.buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(worker.buffer)
            if len(worker.buffer) < _HEADER.size + size:
                return
            message = pickle.loads(worker.buffer[_HEADER.size : _HEADER.size + size])
            del worker.buffer[: _HEADER.size + size]
            if "exit" in message:  # pytest.exit() in a file's hooks: the run ends, as here
                reason, code = message["exit"]
                pytest.exit(reason, code)
            if message.get("interrupted"):  # a KeyboardInterrupt raised in a file's hooks
                raise KeyboardInterrupt
            done = worker.given.popleft()
            assert done == message["index"], (done, message["index"])
            self._report(self.files[done], message)
            self._top_up(worker)

    def _ended(self, worker: _Worker) -> None:
        """A worker's results closed: it ended when told, or died (in a file, or between)."""
        self.selector.unregister(worker.results)
        del self.workers[worker.results]
        os.close(worker.results)
        os.close(worker.tasks)
        if worker.given:  # what it ran when it died, before its group's id can be reused
            _kill_group(worker.pid)
        _, status = os.waitpid(worker.pid, 0)
        if not worker.given:
            return
        running = self._running(worker.slot)
        if running in worker.given:
            worker.given.remove(running)
            self._report_death(self.files[running], status)
        self.pending.extendleft(reversed(worker.given))  # not started: for the others
        if self.pending and not (self.session.shouldfail or self.session.shouldstop):
            self._start(worker.slot)

    def _end_all(self) -> None:
        """Every worker still alive (a Ctrl-C or an error here) ends, and is waited for; a
        second Ctrl-C meanwhile waits until then."""
        if not self.workers:
            return
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for worker in self.workers.values():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(worker.pid, signal.SIGINT)
                self.selector.unregister(worker.results)
                os.close(worker.results)
                os.close(worker.tasks)
            _wait_or_kill([w.pid for w in self.workers.values()])
            self.workers.clear()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    # ------------------------------------------------------------------ reports

    def _report(self, item: pytest.Item, message: dict[str, Any]) -> None:
        """A worker's file, to pytest's hooks here as if it had run here."""
        for seen in message["warnings"]:
            self.config.hook.pytest_warning_recorded.call_historic(
                kwargs={
                    "warning_message": _warning_from(seen),
                    "when": "runtest",
                    "nodeid": item.nodeid,
                    "location": None,
                }
            )
        hook = self.config.hook
        _log(
            item,
            [
                hook.pytest_report_from_serializable(config=self.config, data=data)
                for data in message["reports"]
            ],
        )

    def _report_death(self, item: pytest.Item, status: int) -> None:
        if os.WIFSIGNALED(status):
            how = f"was killed by {signal_name(os.WTERMSIG(status))}"
        else:
            how = f"exited with status {os.WEXITSTATUS(status)}"
        report = pytest.TestReport(
            nodeid=item.nodeid,
            location=item.location,
            keywords={k: 1 for k in item.keywords},
            outcome="failed",
            longrepr=(
                f"mlirpipe: the --mlirpipe-jobs process running {item.nodeid} {how}\n"
                "  hint: run the file alone, without --mlirpipe-jobs, to see where"
            ),
            when="call",
        )
        _log(item, [report])


def _log(item: pytest.Item, reports: list) -> None:
    """A file's reports through pytest's hooks here, between its start and its finish."""
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in reports:
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _wait_or_kill(pids: list[int]) -> None:
    """Wait for the workers `pids` to end, for _GRACE seconds in all; then kill whatever is
    left of their process groups (before reaping them: a group's id is free once its
    leader is reaped) and reap them."""
    deadline = time.monotonic() + _GRACE
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {p for p in alive if not _has_ended(p)}
        if alive:
            time.sleep(0.02)
    for pid in pids:
        _kill_group(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def _has_ended(pid: int) -> bool:
    """Whether child `pid` has ended, leaving it unreaped."""
    if not hasattr(os, "waitid"):
        return False
    ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return ended is not None


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# ---------------------------------------------------------------------- the worker side


class _Forwarder:
    """In a worker: what pytest's hooks report of the file being run, kept to send."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.reports: list[dict] = []
        self.warnings: list[dict] = []
        self.listening = False  # registering replays the warnings recorded before the fork

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.append(
            self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        )

    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage) -> None:
        if self.listening:
            self.warnings.append(_plain_warning(warning_message))

    def taken(self, index: int) -> bytes:
        message = {"index": index, "reports": self.reports, "warnings": self.warnings}
        self.reports, self.warnings = [], []
        return _message(message)


def _message(message: dict[str, Any]) -> bytes:
    # pickle, not JSON: a skip's longrepr is a tuple, and pytest's hooks want it one
    data = pickle.dumps(message)
    return _HEADER.pack(len(data)) + data


def _end_own_group(signum, frame) -> None:
    """The worker and whatever its file started, at once (pytest's group was signalled, or
    pytest is gone)."""
    os.killpg(0, signal.SIGKILL)


def _end_with_parent() -> None:
    """Linux: a SIGTERM to this worker when pytest ends by any means; it may have already."""
    parent = os.getppid()
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        _end_own_group(signal.SIGTERM, None)


def _own_capture(config: pytest.Config) -> None:
    """Temporary files of its own for pytest's output capture: the parent's are shared with
    every worker, one file offset for all, and their output would mix."""
    capman = config.pluginmanager.get_plugin("capturemanager")
    shared = getattr(capman, "_global_capturing", None)
    if capman is None or shared is None:
        return
    capman._global_capturing = None
    with contextlib.suppress(Exception):  # closes this process's descriptors of them only
        shared.stop_capturing()
    capman.start_global_capturing()
    capman.suspend_global_capture()


def _worker_main(
    config: pytest.Config,
    files: list[pytest.Item],
    tasks: int,
    results: int,
    mask,
    board: mmap.mmap,
    slot: int,
):
    """A forked worker: runs the files it is given until told to stop; never returns."""
    status = 0
    place = _BOARD.size * (1 + slot)
    try:
        signal.signal(signal.SIGINT, _quiet_interrupt)
        for ending in (signal.SIGTERM, signal.SIGHUP):  # to pytest's group, or pytest gone
            signal.signal(ending, _end_own_group)
        _end_with_parent()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _own_capture(config)
        # the terminal is the parent's: its reporter here would print every file a second time
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)
        forwarder = _Forwarder(config)
        config.pluginmanager.register(forwarder, "mlirpipe-jobs-worker")
        forwarder.listening = True
        while True:
            index = _read_index(tasks)
            if index == _STOP or _BOARD.unpack_from(board, 0)[0]:
                break
            item = files[index]
            _BOARD.pack_into(board, place, index)
            try:
                item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
            except pytest.exit.Exception as exit:
                _write_all(results, _message({"exit": (exit.msg, exit.returncode)}))
                break
            except KeyboardInterrupt:
                with contextlib.suppress(OSError):  # the parent may be ending it already
                    _write_all(results, _message({"interrupted": True}))
                raise
            _BOARD.pack_into(board, place, -1)
            _write_all(results, forwarder.taken(index))
            if item.session.shouldfail or item.session.shouldstop:
                break  # its own failures reached --maxfail: it takes no other file
    except KeyboardInterrupt:
        status = 130
    except OSError:  # a pipe to the parent closed: it is gone
        _end_own_group(signal.SIGTERM, None)
    except BaseException:  # a bug here: say so, and the parent reports the file
        import traceback

        with contextlib.suppress(Exception):
            traceback.print_exc()
        status = 70
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        with contextlib.suppress(BaseException):  # (a Ctrl-C during the wait: still _exit)
            contain.reap()  # its last contained child, if still exiting (no atexit after _exit)
        os._exit(status)


def _quiet_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _read_index(fd: int) -> int:
    data = b""
    while len(data) < _INDEX.size:
        chunk = os.read(fd, _INDEX.size - len(data))
        if not chunk:  # the parent is gone
            return _STOP
        data += chunk
    return _INDEX.unpack(data)[0]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _plain_warning(message: warnings.WarningMessage) -> dict[str, Any]:
    category = message.category
    return {
        "message": str(message.message),
        "category": f"{category.__module__}:{category.__qualname__}",
        "filename": message.filename,
        "lineno": message.lineno,
    }


def _warning_from(seen: dict[str, Any]) -> warnings.WarningMessage:
    """A worker's warning, as pytest's warnings plugin recorded it there."""
    module, _, name = str(seen["category"]).partition(":")
    category: type[Warning] = UserWarning
    with contextlib.suppress(Exception):
        found = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        if isinstance(found, type) and issubclass(found, Warning):
            category = found
    try:
        warning = category(seen["message"])
    except Exception:
        warning = UserWarning(seen["message"])
    return warnings.WarningMessage(warning, category, seen["filename"], seen["lineno"])
