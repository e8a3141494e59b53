"""Python commands of RUN lines forked from this process, which holds their imports already.

With `--mlirpipe-preload on`, lit's internal shell starts a command that is this interpreter
running a script, `-m MODULE` or `-c CODE` (or a console script whose `#!` line names this
interpreter) by forking this process instead of starting an interpreter: the child is made
into the fresh interpreter the command would have had (preload_child.py) and lit wires,
waits for and times it as the process it would have started. What the commands import from
the interpreter's own path is learned from their runs and imported here once, with the
modules `mlirpipe_preload_modules` names; a command whose environment differs from this
process's in what decides imports (preload_plan.startup_environment) runs as a process.
With `check`, each such command runs both ways; the fresh run's output goes on, and any
difference in stdout, stderr or status fails the file.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import mmap
import os
import shlex
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn

from .preload_child import LEARNED_SIZE, Fresh, become, read_learned, set_tempdir
from .preload_plan import (
    Launch,
    interpreter_traits,
    launch_of,
    stands_for,
    startup_environment,
)

# What a fresh interpreter prints about itself (run with `-c`: sys.path[0] is its own).
_PROBE = (
    inspect.getsource(interpreter_traits)
    + r"""
import faulthandler, json, os, sys, warnings
def hook(h):
    t = h if isinstance(h, type) or type(h).__name__ == "function" else type(h)
    return f"{t.__module__}.{t.__qualname__}"
def text(x):
    return [getattr(x, "pattern", x), hasattr(x, "pattern"), getattr(x, "flags", 0)]
def stream(f):
    buffered = type(f.buffer).__name__ != "FileIO"
    return [f.encoding, f.errors, f.line_buffering, f.write_through, buffered]
print(json.dumps({
    "path": sys.path if sys.flags.safe_path else sys.path[1:],
    "safe_path": bool(sys.flags.safe_path),
    "traits": interpreter_traits(),
    "streams": [stream(sys.stdin), stream(sys.stdout), stream(sys.stderr)],
    "warnings": [[a, *text(m), c.__module__, c.__qualname__, *text(mod), n]
                 for a, m, c, mod, n in warnings.filters],
    "warnoptions": sys.warnoptions,
    "meta_path": [hook(h) for h in sys.meta_path],
    "path_hooks": [hook(h) for h in sys.path_hooks],
    "faulthandler": faulthandler.is_enabled(),
    "environment": dict(os.environ),
}))
"""
)


class Preloader:
    """One per test process: what a fresh interpreter has in each startup environment
    (probed once each), the modules imported here for commands, and the check mode's
    differences for the current file."""

    def __init__(self, mode: str, modules: Sequence[str] = (), env_names: Sequence[str] = ()):
        self.mode = mode
        self.env_names = tuple(env_names)
        self._wanted: dict[str, dict[str, str]] = {m: dict(os.environ) for m in modules}
        self._tried: set[str] = set()
        self._fresh: dict[tuple, Fresh | None] = {}  # startup environment -> its interpreter
        self._resolved: dict[tuple, bool] = {}  # (startup environment, module) -> same file
        self._learning: list[tuple[mmap.mmap, subprocess.Popen, dict[str, str]]] = []
        self.differences: list[str] = []
        self.forked = 0  # commands forked (in check mode: run both ways)
        self.fallback = 0  # commands of this interpreter that ran as processes nonetheless

    def fresh(self, env: dict[str, str]) -> Fresh | None:
        """What a fresh interpreter started in `env` has, or None when a fork of this process
        cannot stand for it (preload_plan.stands_for)."""
        key = tuple(sorted(startup_environment(env, self.env_names).items()))
        if key not in self._fresh:
            self._fresh[key] = self._probe(env)
        return self._fresh[key]

    def _probe(self, env: dict[str, str]) -> Fresh | None:
        try:
            ran = subprocess.run(
                [sys.executable, "-c", _PROBE], capture_output=True, check=True, cwd="/", env=env
            )
            probe = json.loads(ran.stdout)
        except (OSError, subprocess.CalledProcessError, ValueError):
            return None
        here = {**interpreter_traits(), "environment": dict(os.environ)}
        if not stands_for(here, {**probe["traits"], "environment": env}, self.env_names):
            return None
        return Fresh(
            path=tuple(probe["path"]),
            safe_path=probe["safe_path"],
            dont_write_bytecode=bool(probe["traits"]["flags"]["dont_write_bytecode"]),
            # what the interpreter sets as it starts (LC_CTYPE when it coerces a C locale)
            added_env=tuple((k, v) for k, v in probe["environment"].items() if env.get(k) != v),
            streams=tuple(tuple(s) for s in probe["streams"]),
            warnings=tuple(tuple(w) for w in probe["warnings"]),
            warnoptions=tuple(probe["warnoptions"]),
            meta_path=tuple(probe["meta_path"]),
            path_hooks=tuple(probe["path_hooks"]),
            faulthandler=probe["faulthandler"],
        )

    def launch(self, args, executable, env, cwd) -> tuple[Launch, Fresh] | None:
        """The command's Launch and interpreter when it may run forked from here, else None."""
        if not isinstance(args, list | tuple) or not all(isinstance(a, str) for a in args):
            return None
        launch = launch_of(args, executable, cwd or os.getcwd())
        if launch is None:
            return None
        env = dict(os.environ if env is None else env)
        fresh = self.fresh(env)
        if fresh is None or not self._imports_resolve(env, fresh):
            self.fallback += 1
            return None
        return launch, fresh

    def _imports_resolve(self, env: dict[str, str], fresh: Fresh) -> bool:
        """Whether each module imported here for commands is the file a fresh interpreter
        in `env` would import for its name."""
        from importlib.machinery import PathFinder

        key = tuple(sorted(startup_environment(env, self.env_names).items()))
        for name in self._tried:
            module = sys.modules.get(name)
            if (
                module is None
                or "." in name
                or name.startswith("__")
                or (key, name) in self._resolved
            ):
                continue  # a package's modules are found through it
            spec = PathFinder.find_spec(name, list(fresh.path))
            origin = spec.origin if spec is not None else None
            self._resolved[key, name] = origin == getattr(module, "__file__", None)
        return all(ok for (k, _), ok in self._resolved.items() if k == key)

    def import_wanted(self, fresh: Fresh) -> None:
        """Import, once, the modules named or learned so far, as a fresh interpreter would
        find them (its path, the environment of the command that imported them)."""
        self._read_learned()
        # a package before its modules
        pending = sorted(
            m
            for m in self._wanted
            if m not in self._tried
            and m not in sys.modules
            and "__main__" not in m
            and not m.startswith("__")
        )
        if not pending:
            return
        saved_path, saved_env = list(sys.path), dict(os.environ)
        saved_tempdir = set_tempdir(None)
        try:
            for name in pending:
                self._tried.add(name)
                sys.path[:] = list(fresh.path)
                os.environ.clear()
                os.environ.update(self._wanted[name])
                # the temporary folder too is found in the command's environment (lit's own
                # lit-tmp-*): torch._dynamo makes its cache folder there as it is imported
                set_tempdir(None)
                with contextlib.suppress(Exception):
                    importlib.import_module(name)
        finally:
            sys.path[:] = saved_path
            os.environ.clear()
            os.environ.update(saved_env)
            set_tempdir(saved_tempdir)

    def _read_learned(self) -> None:
        """Take in what ended children wrote (a child still running keeps its page)."""
        still = []
        for page, popen, env in self._learning:
            if popen.poll() is None:
                still.append((page, popen, env))
                continue
            for name in read_learned(page):
                self._wanted.setdefault(name, env)
            page.close()
        self._learning = still

    def popen(self, args, **kwargs) -> subprocess.Popen:
        """lit's `subprocess.Popen(args, ...)`: forked when the command may be, else a process."""
        env, cwd = kwargs.get("env"), kwargs.get("cwd")
        found = self.launch(args, kwargs.get("executable"), env, cwd)
        if found is None:
            return subprocess.Popen(args, **kwargs)
        env = dict(os.environ if env is None else env)
        cwd = os.path.abspath(cwd or os.getcwd())
        if self.mode == "check":
            return self._checked(args, found, env, cwd, kwargs)
        return self.forked_popen(found, env, cwd, args, kwargs)

    def forked_popen(self, found, env, cwd: str, args, kwargs) -> subprocess.Popen:
        launch, fresh = found
        self.import_wanted(fresh)
        # The child writes what it imported to a shared page: no descriptor it could see.
        page = mmap.mmap(-1, LEARNED_SIZE)
        popen = ForkedPopen(lambda: become(launch, env, cwd, fresh, page), args, **kwargs)
        self._learning.append((page, popen, env))
        self.forked += 1
        return popen

    def _checked(self, args, found, env, cwd: str, kwargs) -> subprocess.Popen:
        """Run the command fresh and forked on the same stdin; note any difference; hand lit
        a child that replays the fresh run's output and status where lit wired them."""
        from .preload_check import compare, read_stdin, replay

        data = read_stdin(kwargs.get("stdin"))
        merged = kwargs.get("stderr") == subprocess.STDOUT
        pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        pipes["stderr"] = subprocess.STDOUT if merged else subprocess.PIPE
        plain = {k: v for k, v in kwargs.items() if k in ("executable", "close_fds", "env")}
        plain.update(cwd=cwd, env=env, **pipes)
        fresh_run = subprocess.Popen(args, **plain)
        fresh_out = fresh_run.communicate(data)
        forked = self.forked_popen(found, env, cwd, args, plain)
        forked_out = forked.communicate(data)
        difference = compare(
            (fresh_out[0], fresh_out[1] or b"", fresh_run.returncode),
            (forked_out[0], forked_out[1] or b"", forked.returncode),
        )
        if difference:
            self.differences.append(f"{shlex.join(args)}\n{difference}")
        if kwargs.get("stdin") != subprocess.PIPE:  # what it gave is read: lit closes a pipe
            kwargs = {**kwargs, "stdin": subprocess.DEVNULL}
        out, err = fresh_out[0], fresh_out[1] or b""
        return ForkedPopen(lambda: replay(out, err, fresh_run.returncode), args, **kwargs)


# The parameters of Popen._execute_child after `self`, in order (they differ between Pythons).
_CHILD_PARAMS = tuple(
    inspect.signature(subprocess.Popen._execute_child).parameters  # type: ignore[attr-defined]
)[1:]


class ForkedPopen(subprocess.Popen):
    """A Popen whose child is this process forked, with its descriptors wired as the Popen
    arguments ask, running `child` (which never returns) in a process group of its own."""

    def __init__(self, child: Callable[[], NoReturn], *args, **kwargs):
        self._forked_child = child
        super().__init__(*args, **kwargs)

    def _execute_child(self, *args) -> None:
        given = dict(zip(_CHILD_PARAMS, args, strict=True))
        ends = (given["p2cwrite"], given["c2pread"], given["errread"])
        fds = (given["p2cread"], given["c2pwrite"], given["errwrite"])
        keep = set(given["pass_fds"])
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.setpgid(0, 0)
                _wire(fds, ends, keep)
                if given.get("umask", -1) >= 0:
                    os.umask(given["umask"])
                self._forked_child()
            except BaseException:
                with contextlib.suppress(Exception):
                    os.write(2, ("mlirpipe preload: " + traceback.format_exc()).encode())
            os._exit(70)
        self.pid = pid
        self._child_created = True
        devnull = getattr(self, "_devnull", None)
        for child_end, own_end in zip(fds, ends, strict=True):
            if child_end != -1 and own_end != -1 and child_end != devnull:
                os.close(child_end)
        if devnull is not None:
            os.close(devnull)
        self._closed_child_pipe_fds = True


def _wire(fds: tuple[int, int, int], ends: tuple[int, int, int], keep: set[int]) -> None:
    """In the child: descriptors 0, 1 and 2 as Popen's child gets them; every other one closed
    but `keep` (as close_fds does: a pipe end left open would keep a reader waiting)."""
    p2cread, c2pwrite, errwrite = fds
    for fd in ends:
        if fd != -1:
            os.close(fd)
    if c2pwrite == 0:
        c2pwrite = os.dup(c2pwrite)
    while errwrite in (0, 1):
        errwrite = os.dup(errwrite)
    for source, target in ((p2cread, 0), (c2pwrite, 1), (errwrite, 2)):
        if source == target:
            os.set_inheritable(target, True)
        elif source != -1:
            os.dup2(source, target)
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


class _Subprocess:
    """The `subprocess` module as lit's shell sees it in a preloading scope: Popen forks."""

    def __init__(self, preloader: Preloader):
        self._preloader = preloader

    def __getattr__(self, name: str):
        return getattr(subprocess, name)

    def Popen(self, args, **kwargs):
        return self._preloader.popen(args, **kwargs)


@contextlib.contextmanager
def preloaded_commands(preloader: Preloader) -> Iterator[Preloader]:
    """Within this scope, lit's internal shell forks the Python commands it may."""
    import lit.TestRunner as TestRunner

    original = TestRunner.subprocess
    TestRunner.subprocess = _Subprocess(preloader)
    preloader.differences = []
    try:
        yield preloader
    finally:
        TestRunner.subprocess = original
