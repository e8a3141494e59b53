"""--mlirpipe-jobs N: the run's RUN/CHECK files run by N processes forked from this one once
it has collected them, their reports given to pytest's hooks here (the terminal, --junitxml,
the cache) as a serial run gives them. One start-up and one collection for the whole run,
where `pytest -n N` pays both in each of N interpreters and sends every report through a
controller; lit's own workers run the same way (forked after discovery)."""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import selectors
import signal
import struct
import sys
import threading
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pytest

from .items import MlirItem

_STOP = -1
_AHEAD = 2  # files a worker holds: the one it runs and the next
_HEADER = struct.Struct("!I")  # the size of a pickled message
_INDEX = struct.Struct("!i")
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
        why = _cannot_fork() or (
            "--pdb needs this terminal" if session.config.getoption("usepdb", False) else None
        )
        if why:
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(
                    f"mlirpipe: --mlirpipe-jobs={self.jobs}: {why}; the files run here, "
                    "one at a time"
                )
            return None
        _Pool(session, files, min(self.jobs, len(files))).run()
        _stop_if_told(session)
        others = [i for i in session.items if not isinstance(i, MlirItem)]
        for i, item in enumerate(others):
            nextitem = others[i + 1] if i + 1 < len(others) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            _stop_if_told(session)
        return True


def _stop_if_told(session: pytest.Session) -> None:
    """As pytest's own loop after each test: -x, --maxfail, a plugin's stop."""
    if session.shouldfail:
        raise session.Failed(session.shouldfail)
    if session.shouldstop:
        raise session.Interrupted(session.shouldstop)


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

    def run(self) -> None:
        try:
            for _ in range(self.size):
                self._start()
            while self.workers:
                for key, _ in self.selector.select():
                    self._read(self.workers[key.fd])
        finally:
            self._end_all()
            self.selector.close()

    # ------------------------------------------------------------------ workers

    def _start(self) -> None:
        tasks_r, tasks_w = os.pipe()
        results_r, results_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            with contextlib.suppress(Exception):
                stream.flush()
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
            _worker_main(self.config, self.files, tasks_r, results_w, mask)
        try:
            with contextlib.suppress(OSError):  # the child's own call may have come first
                os.setpgid(pid, pid)
            os.close(tasks_r)
            os.close(results_w)
            worker = _Worker(pid, tasks_w, results_r)
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
            done = worker.given.popleft()
            assert done == message["index"], (done, message["index"])
            self._report(self.files[done], message)
            self._top_up(worker)

    def _ended(self, worker: _Worker) -> None:
        """A worker's results closed: it ended when told, or died in a file."""
        self.selector.unregister(worker.results)
        del self.workers[worker.results]
        os.close(worker.results)
        os.close(worker.tasks)
        _, status = os.waitpid(worker.pid, 0)
        if not worker.given:
            return
        _kill_group(worker.pid)  # what it was running when it died
        died_in = worker.given.popleft()
        self.pending.extendleft(reversed(worker.given))  # not started: for the others
        self._report_death(self.files[died_in], status)
        if self.pending and not (self.session.shouldfail or self.session.shouldstop):
            self._start()

    def _end_all(self) -> None:
        """Every worker still alive (a Ctrl-C or an error here) ends, and is waited for; a
        second Ctrl-C meanwhile waits until then."""
        if not self.workers:
            return
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            for worker in list(self.workers.values()):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(worker.pid, signal.SIGINT)
            for worker in list(self.workers.values()):
                self.selector.unregister(worker.results)
                os.close(worker.results)
                os.close(worker.tasks)
                _wait_or_kill(worker.pid)
            self.workers.clear()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    # ------------------------------------------------------------------ reports

    def _report(self, item: pytest.Item, message: dict[str, Any]) -> None:
        """A worker's file, to pytest's hooks here as if it had run here."""
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for seen in message["warnings"]:
            self.config.hook.pytest_warning_recorded.call_historic(
                kwargs={
                    "warning_message": _warning_from(seen),
                    "when": "runtest",
                    "nodeid": item.nodeid,
                    "location": None,
                }
            )
        for data in message["reports"]:
            report = self.config.hook.pytest_report_from_serializable(config=self.config, data=data)
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)

    def _report_death(self, item: pytest.Item, status: int) -> None:
        if os.WIFSIGNALED(status):
            how = f"was killed by signal {os.WTERMSIG(status)}"
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
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _wait_or_kill(pid: int) -> None:
    """Wait for worker `pid` to end, killing it after _GRACE seconds; then whatever is left
    of its process group."""
    import time

    deadline = time.monotonic() + _GRACE
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.02)
    else:
        _kill_group(pid)
        os.waitpid(pid, 0)
    _kill_group(pid)


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
        # pickle, not JSON: a skip's longrepr is a tuple, and pytest's hooks want it one
        data = pickle.dumps(message)
        return _HEADER.pack(len(data)) + data


def _worker_main(config: pytest.Config, files: list[pytest.Item], tasks: int, results: int, mask):
    """A forked worker: runs the files it is given until told to stop; never returns."""
    status = 0
    try:
        signal.signal(signal.SIGINT, _quiet_interrupt)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        # the terminal is the parent's: its reporter here would print every file a second time
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)
        forwarder = _Forwarder(config)
        config.pluginmanager.register(forwarder, "mlirpipe-jobs-worker")
        forwarder.listening = True
        while True:
            index = _read_index(tasks)
            if index == _STOP:
                break
            item = files[index]
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
            _write_all(results, forwarder.taken(index))
    except KeyboardInterrupt:
        status = 130
    except BaseException:  # a bug here: say so, and the parent reports the file
        import traceback

        with contextlib.suppress(Exception):
            traceback.print_exc()
        status = 70
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
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
