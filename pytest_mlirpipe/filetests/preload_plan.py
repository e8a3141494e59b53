"""Which RUN-line commands a preloaded fork may run: Python commands of this very interpreter."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Variables an interpreter reads as it starts or that its imports commonly read: a command whose
# environment differs from the preloading process's in one of them runs as a process.
_STARTUP_PREFIXES = ("PYTHON", "LD_", "LC_")
_STARTUP_NAMES = ("LANG",)
# Of those, the ones whose effect a fork is given back: the standard streams, bytecode
# writing, sys.path (the modules imported here are checked against it), the encodings.
_REPRODUCED = (
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPATH",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "PYTHONSAFEPATH",
    "PYTHONIOENCODING",
    "LANG",
)
# sys.flags a fork is given back (the others it keeps from this process).
_REPRODUCED_FLAGS = ("unbuffered", "dont_write_bytecode", "no_user_site", "safe_path")


@dataclass(frozen=True, slots=True)
class Launch:
    """A Python command as the interpreter would run it: `kind` is script, module or code;
    `target` the script's path, the module's name or the code; `argv` sys.argv as the
    interpreter sets it before running `__main__` (`-m` and `-c` stand for what runpy and the
    interpreter put there)."""

    kind: str
    target: str
    argv: tuple[str, ...]

    def path0(self, cwd: str) -> str:
        """sys.path[0] as the interpreter sets it: the script's folder (symlinks resolved),
        the working folder for -m, '' for -c."""
        if self.kind == "script":
            return os.path.dirname(os.path.realpath(os.path.join(cwd, self.target)))
        return cwd if self.kind == "module" else ""


def is_this_python(path: str) -> bool:
    """Whether `path` starts this interpreter with this prefix: sys.executable itself, or a
    name in its folder for the same file (`python3` beside `python`). A venv's python and the
    base python it links to are different interpreters (different sys.path)."""
    if not path or not os.path.isabs(path):
        return False
    if os.path.normpath(path) == os.path.normpath(sys.executable):
        return True
    here = os.path.dirname(sys.executable)
    try:
        same_dir = os.path.samefile(os.path.dirname(path), here)
        return same_dir and os.path.samefile(path, sys.executable)
    except OSError:
        return False


def launch_of(args: Sequence[str], executable: str | None, cwd: str) -> Launch | None:
    """The Launch of a command lit is about to start (`args` as written, `executable` the
    program lit found), or None when it is not a plain Python command of this interpreter."""
    program = executable or (args[0] if args else "")
    if not os.path.isabs(program):
        program = os.path.join(cwd, program)
    if is_this_python(program):
        return _python_args(list(args[1:]))
    interpreter = _shebang(program)
    if interpreter is not None and is_this_python(interpreter):
        return Launch("script", program, (program, *args[1:]))
    return None


def _python_args(rest: list[str]) -> Launch | None:
    """`python script.py ...`, `python -m M ...`, `python -c CODE ...`; None for any other
    option (they change how the interpreter runs) or no program."""
    if not rest:
        return None
    first = rest[0]
    for flag, kind in (("-m", "module"), ("-c", "code")):
        if first == flag and len(rest) >= 2:
            return Launch(kind, rest[1], (flag, *rest[2:]))
        if first.startswith(flag) and len(first) > 2:
            return Launch(kind, first[2:], (flag, *rest[1:]))
    if first.startswith("-"):
        return None
    return Launch("script", first, tuple(rest))


def _shebang(path: str) -> str | None:
    """The interpreter of a `#!INTERPRETER` line with no argument, else None."""
    try:
        with open(path, "rb") as f:
            line = f.readline(512)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].decode("utf-8", "replace").split()
    return words[0] if len(words) == 1 else None


def startup_environment(env: Mapping[str, str], named: Sequence[str] = ()) -> dict[str, str]:
    """The variables of `env` that decide what an interpreter imports: PYTHON*, LD_*, LC_*,
    LANG and those `named` (mlirpipe_preload_env)."""
    return {
        k: v
        for k, v in env.items()
        if k.startswith(_STARTUP_PREFIXES) or k in _STARTUP_NAMES or k in named
    }


def interpreter_traits() -> dict:
    """What an interpreter fixed as it started and a fork keeps: its flags and encodings."""
    import codecs
    import locale
    import sys

    flags = {
        n: getattr(sys.flags, n)
        for n in dir(sys.flags)
        if not n.startswith(("_", "n_")) and n not in ("count", "index")
    }
    getencoding = getattr(locale, "getencoding", None)
    encoding = getencoding() if getencoding else locale.getpreferredencoding(False)
    # UTF-8 mode (which a C locale turns on) and a UTF-8 locale read and write files alike
    utf8 = bool(flags.pop("utf8_mode")) or codecs.lookup(encoding).name == "utf-8"
    return {
        "flags": flags,
        "locale": "utf-8" if utf8 else encoding,
        "filesystem": sys.getfilesystemencoding(),
    }


def stands_for(here: dict, fresh: dict, named: Sequence[str] = ()) -> bool:
    """Whether a fork of this process (`here`: interpreter_traits and "environment") can be
    made into the fresh interpreter `fresh` describes: same flags but those a fork is given
    back, same encodings, same startup variables but those whose effect it is given back."""

    def kept(traits: dict) -> tuple:
        flags = {k: v for k, v in traits["flags"].items() if k not in _REPRODUCED_FLAGS}
        env = startup_environment(traits["environment"], named)
        fixed = {k: v for k, v in env.items() if k not in _REPRODUCED and not k.startswith("LC_")}
        return flags, traits["locale"], traits["filesystem"], fixed

    return kept(here) == kept(fresh)
