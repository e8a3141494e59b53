"""A forked child made into the fresh interpreter a Python command would have started."""

from __future__ import annotations

import atexit
import builtins
import contextlib
import faulthandler
import gc
import io
import mmap
import os
import runpy
import signal
import sys
import types
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .preload_plan import Launch

# The test runner's packages, which a command that imports them imports afresh.
_RUNNER_PACKAGES = ("pytest", "pluggy", "iniconfig", "lit", "xdist", "execnet", "pytest_mlirpipe")
# The shared page a child writes the packages it imported to.
LEARNED_SIZE = 1 << 20
# What `sys.exit` of a failed flush of stdout makes of the status, as the interpreter does.
_FLUSH_FAILED = 120


@dataclass(frozen=True, slots=True)
class Fresh:
    """What a fresh interpreter of this Python, started in the preloading process's
    environment, has that a fork must be given back: sys.path after its first entry, its
    standard streams' settings (encoding, errors, line_buffering, write_through, buffered for
    stdin, stdout, stderr on pipes), the variables it adds to its environment, its warning
    filters (action, message as (text, compiled, flags), category module and name, module
    likewise, line), the types of its import hooks, whether faulthandler is on."""

    path: tuple[str, ...]
    safe_path: bool
    dont_write_bytecode: bool
    added_env: tuple[tuple[str, str], ...]
    streams: tuple[tuple, ...]
    warnings: tuple[tuple, ...]
    warnoptions: tuple[str, ...]
    meta_path: tuple[str, ...]
    path_hooks: tuple[str, ...]
    faulthandler: bool


def hook_name(hook: object) -> str:
    """An import hook's kind, the same in every process: its (or its type's) qualified name."""
    named = hook if isinstance(hook, type | types.FunctionType) else type(hook)
    return f"{named.__module__}.{named.__qualname__}"


def become(launch: Launch, env: Mapping[str, str], cwd: str, fresh: Fresh, learned: mmap.mmap):
    """In the forked child, its descriptors wired: run the command as a fresh interpreter would
    and end the process with its status; write the top-level packages it imported from the
    interpreter's own path to the shared page `learned`. Never returns."""
    before = set(sys.modules)
    _reset_process(fresh)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.environ.update(fresh.added_env)
    # tempfile's folder, found on first use in the test process's environment (a lit run
    # gives its tests a lit-tmp-* folder of its own): found again, in the command's
    set_tempdir(None)
    _set_streams(fresh)
    sys.dont_write_bytecode = fresh.dont_write_bytecode
    _drop_foreign_modules(fresh)
    sys.argv = list(launch.argv)
    sys.path[:] = ([] if fresh.safe_path else [launch.path0(cwd)]) + list(fresh.path)
    status, interrupted = _run_main(launch, cwd)
    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()
    atexit._run_exitfuncs()
    status = _flushed(status)
    _learn(before, fresh, learned)
    if interrupted:  # as the interpreter ends on an uncaught KeyboardInterrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status & 0xFF)


def set_tempdir(folder: str | None) -> str | None:
    """Set tempfile's folder (None: found again on first use), if tempfile is imported;
    return the one it had."""
    module = sys.modules.get("tempfile")
    if module is None:
        return None
    before = module.tempdir
    module.tempdir = folder  # type: ignore[attr-defined]
    return before


def _reset_process(fresh: Fresh) -> None:
    """Undo what the test process set that an interpreter starts without: signal handlers,
    faulthandler, exit handlers, hooks, tracing, warning filters, logging handlers, import
    hooks; and set its objects aside from the collector (their finalizers must not run here)."""
    gc.freeze()
    gc.enable()
    atexit._clear()
    # weakref.finalize's exit hook went with atexit's; the test process's finalizers are not
    # the command's (they would run at its exit), and its own register the hook again
    weakref.finalize._registry.clear()  # type: ignore[attr-defined]
    weakref.finalize._registered_with_atexit = False  # type: ignore[attr-defined]
    for sig in signal.valid_signals():
        try:
            if callable(signal.getsignal(sig)):  # exec resets caught signals; ignored stay so
                signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # what the interpreter does as it starts
        signal.signal(sig, signal.SIG_IGN)
    if signal.getsignal(signal.SIGINT) == signal.SIG_DFL:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    faulthandler.cancel_dump_traceback_later()
    faulthandler.disable()
    sys.settrace(None)
    sys.setprofile(None)
    if "threading" in sys.modules:
        threading = sys.modules["threading"]
        threading.settrace(None)
        threading.setprofile(None)
        threading.excepthook = threading.__excepthook__  # type: ignore[attr-defined]
    sys.excepthook = sys.__excepthook__
    sys.displayhook = sys.__displayhook__
    sys.unraisablehook = sys.__unraisablehook__
    sys.breakpointhook = sys.__breakpointhook__
    sys.meta_path[:] = [h for h in sys.meta_path if hook_name(h) in fresh.meta_path]
    sys.path_hooks[:] = [h for h in sys.path_hooks if hook_name(h) in fresh.path_hooks]
    sys.path_importer_cache.clear()
    _reset_warnings(fresh)
    if "logging" in sys.modules:
        logging = sys.modules["logging"]
        logging.root.handlers.clear()
        logging.root.setLevel(logging.WARNING)
        logging.disable(logging.NOTSET)


def _drop_foreign_modules(fresh: Fresh) -> None:
    """Forget the packages this process imported from outside the fresh interpreter's path
    (a test folder's), which the command would not find or find elsewhere, and the test
    runner's own (pytest, lit, this plugin), which it would import afresh. A package with a
    compiled extension loaded stays (it cannot be loaded twice)."""
    roots = tuple(os.path.join(p, "") for p in fresh.path if p)
    groups: dict[str, list[str]] = {}
    for name in list(sys.modules):
        groups.setdefault(name.partition(".")[0], []).append(name)
    for top, names in groups.items():
        file = getattr(sys.modules.get(top), "__file__", None)
        runner = top in _RUNNER_PACKAGES or top.startswith(("pytest_", "_pytest"))
        if not file or top == "__main__" or (file.startswith(roots) and not runner):
            continue
        files = (getattr(sys.modules.get(n), "__file__", None) or "" for n in names)
        if any(f.endswith((".so", ".pyd")) for f in files):
            continue
        for name in names:
            del sys.modules[name]


def _reset_warnings(fresh: Fresh) -> None:
    """The fresh interpreter's warning filters, and warnings printed to stderr (pytest records
    them while a test runs)."""
    import importlib
    import warnings

    filters = []
    for entry in fresh.warnings:
        action, lineno = entry[0], entry[9]
        message, (cat_module, cat_name), module = entry[1:4], entry[4:6], entry[6:9]
        category = importlib.import_module(cat_module)
        for part in cat_name.split("."):
            category = getattr(category, part)
        filters.append((action, _pattern(*message), category, _pattern(*module), lineno))
    warnings.filters[:] = filters  # type: ignore[index]
    warnings._filters_mutated()  # type: ignore[attr-defined]
    sys.warnoptions[:] = list(fresh.warnoptions)
    warnings.showwarning = warnings._showwarning_orig  # type: ignore[attr-defined]
    warnings._showwarnmsg_impl = _showwarnmsg_impl  # type: ignore[attr-defined]


def _pattern(text: str | None, compiled: bool, flags: int):
    """A filter's message or module as the fresh interpreter holds it: text or a regex."""
    import re

    return re.compile(text, flags) if compiled and text is not None else text


def _showwarnmsg_impl(msg) -> None:
    """The standard library's way to print a warning (warnings._showwarnmsg_impl)."""
    import warnings

    file = msg.file if msg.file is not None else sys.stderr
    if file is None:
        return
    with contextlib.suppress(OSError):
        file.write(warnings._formatwarnmsg(msg))  # type: ignore[attr-defined]


def _set_streams(fresh: Fresh) -> None:
    """sys.stdin, sys.stdout and sys.stderr on descriptors 0, 1 and 2, as the interpreter makes
    them (a terminal makes stdin and stdout line-buffered)."""
    made = []
    for fd, (mode, name), spec in zip(
        (0, 1, 2),
        (("r", "<stdin>"), ("w", "<stdout>"), ("w", "<stderr>")),
        fresh.streams,
        strict=True,
    ):
        encoding, errors, line_buffering, write_through, is_buffered = spec
        raw = io.FileIO(fd, mode, closefd=False)
        raw.name = name
        buffered: Any = raw  # PYTHONUNBUFFERED, -u
        if is_buffered:
            buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        tty = fd < 2 and os.isatty(fd)
        stream = io.TextIOWrapper(
            buffered,
            encoding=encoding,
            errors=errors,
            line_buffering=line_buffering or tty,
            write_through=write_through,
        )
        stream.mode = mode  # type: ignore[misc]
        made.append(stream)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]
    if fresh.faulthandler:
        faulthandler.enable()


def _run_main(launch: Launch, cwd: str) -> tuple[int, bool]:
    """(exit status, ended by KeyboardInterrupt) of the command's `__main__`."""
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    main.__annotations__ = {}
    sys.modules["__main__"] = main
    try:
        if launch.kind == "module":
            runpy._run_module_as_main(launch.target, alter_argv=True)  # type: ignore[attr-defined]
        else:
            _exec_in(main, launch, cwd)
    except SystemExit as exc:
        return _exit_status(exc), False
    except BaseException as exc:
        tb = _user_frames(exc.__traceback__, launch)
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        return 1, isinstance(exc, KeyboardInterrupt)
    return 0, False


def _exec_in(main: types.ModuleType, launch: Launch, cwd: str) -> None:
    """Run a script (compiled under its path joined to the working folder, as the interpreter
    names it: `..` stays) or `-c`
    code in `main`'s namespace."""
    if launch.kind == "code":
        code = compile(launch.target, "<string>", "exec", dont_inherit=True)
    else:
        from importlib.machinery import SourceFileLoader

        path = os.path.join(cwd, launch.target)  # made absolute, not normalized
        main.__file__ = path
        main.__cached__ = None  # type: ignore[attr-defined]
        main.__loader__ = SourceFileLoader("__main__", path)
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
    exec(code, main.__dict__)


def _user_frames(tb, launch: Launch):
    """The traceback from the command's own first frame on (for -m: runpy's, which the
    interpreter shows too)."""
    first = tb
    while first is not None:
        code = first.tb_frame.f_code
        if launch.kind == "module" and code.co_name == "_run_module_as_main":
            return first
        if launch.kind != "module" and code.co_name == "<module>":
            return first
        first = first.tb_next
    return tb


def _exit_status(exc: SystemExit) -> int:
    """The status `sys.exit(code)` ends the interpreter with; a code that is not a number is
    printed to stderr and makes it 1."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{code}\n")
    return 1


def _flushed(status: int) -> int:
    """Flush stdout and stderr as the interpreter does at exit: a failed flush of stdout is
    reported and makes the status 120."""
    try:
        sys.stdout.flush()
    except Exception as exc:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"Exception ignored in: {sys.stdout!r}\n")
            sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        status = status or _FLUSH_FAILED
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    return status


def _learn(before: set[str], fresh: Fresh, page: mmap.mmap) -> None:
    """Write the new modules the command imported from packages on the interpreter's own path
    (not from its folder or the working folder): what a preload can import for it."""
    roots = tuple(os.path.join(p, "") for p in fresh.path if p)
    names = set()
    for name in set(sys.modules) - before:
        if name.startswith("__"):  # `__main__`, multiprocessing's `__mp_main__`: no module
            continue
        file = getattr(sys.modules.get(name.partition(".")[0]), "__file__", None) or ""
        if file.startswith(roots):
            names.add(name)
    data = "\n".join(sorted(names)).encode()[: LEARNED_SIZE - 4]
    page[: 4 + len(data)] = len(data).to_bytes(4, "little") + data


def read_learned(page: mmap.mmap) -> list[str]:
    """The names an ended child wrote to its page."""
    size = int.from_bytes(page[:4], "little")
    return page[4 : 4 + size].decode("utf-8", "replace").split()
