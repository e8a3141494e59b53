"""The commands a failure prints, written so that a shell runs them as they ran here."""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..lowering.passes import PASS_MODULES_ENV


@dataclass(frozen=True, slots=True)
class CommandContext:
    """What a printed `mlirpipe-opt` or `mlirpipe run` needs besides its own words to find
    what this run found: the pipeline folders (`--pipelines-dir`, from the ini's
    mlirpipe_pipelines or the flags) and the environment that loaded Python pass modules
    ($MLIRPIPE_PASS_MODULES, with PYTHONPATH when a shell would not find them)."""

    pipeline_dirs: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    @classmethod
    def here(cls, pipeline_dirs: Sequence[str | Path] = ()) -> CommandContext:
        """The context of this process: `pipeline_dirs` made absolute, its pass modules."""
        return cls(tuple(os.path.abspath(d) for d in pipeline_dirs), _pass_module_env())

    def line(self, *words: str | Path, cwd: Path | None = None) -> str:
        """`words` (a tool and its arguments) with this context's `--pipelines-dir` flags,
        quoted for a POSIX shell, after the environment it needs and `cd cwd &&`."""
        argv = [str(w) for w in words]
        for folder in self.pipeline_dirs:
            argv += ["--pipelines-dir", folder]
        env = [f"{name}={shlex.quote(value)}" for name, value in self.env]
        command = " ".join([*env, shlex.join(argv)])
        return f"cd {shlex.quote(str(cwd))} && {command}" if cwd is not None else command


# A context with nothing to add: the words of a command alone.
PLAIN = CommandContext()


def _pass_module_env() -> tuple[tuple[str, str], ...]:
    """$MLIRPIPE_PASS_MODULES as set here and, when a module is not installed, PYTHONPATH with
    the folder it is imported from: pytest puts a test's folder on sys.path, a console script
    does not, and a PYTHONPATH given to one command only is not in the shell that pastes the
    next (so it is printed even when this process has it)."""
    names = [n.strip() for n in os.environ.get(PASS_MODULES_ENV, "").split(",") if n.strip()]
    if not names:
        return ()
    installed = _installed_dirs()
    roots = [r for r in map(_import_root, names) if r is not None and r not in installed]
    env = [(PASS_MODULES_ENV, ",".join(names))]
    if roots:
        given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        path = dict.fromkeys([*roots, *given])  # in order, once each
        env.append(("PYTHONPATH", os.pathsep.join(path)))
    return tuple(env)


def _import_root(name: str) -> str | None:
    """The sys.path folder module `name` is imported from (here, or in the forked child that
    lowered a model), when it is a file."""
    file = getattr(sys.modules.get(name), "__file__", None)
    if file is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        file = spec.origin if spec is not None and spec.has_location else None
    if not file:
        return None
    folder = Path(os.path.abspath(file)).parent
    if Path(file).name == "__init__.py":
        folder = folder.parent
    for _ in name.split(".")[1:]:
        folder = folder.parent
    return str(folder)


def _installed_dirs() -> set[str]:
    """The folders every Python process of this installation imports from."""
    paths = sysconfig.get_paths()
    return {os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
