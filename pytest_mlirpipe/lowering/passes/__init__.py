"""The project's own passes, written in Python on the MLIR bindings and registered by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A pass body: called with (operation, external_pass) like `PassManager.add` expects.
PassBody = Callable[[Any, Any], None]


@dataclass(frozen=True, slots=True)
class PythonPass:
    """A Python-defined pass: its pipeline name, a one-line description and accepted options."""

    argument: str
    description: str
    options: tuple[str, ...]
    factory: Callable[[dict[str, str]], PassBody]


_REGISTRY: dict[str, PythonPass] = {}
_LOADED = False
# Comma-separated modules imported for their passes (modules on PYTHONPATH that call
# `register`): a repository's own passes without packaging them.
PASS_MODULES_ENV = "MLIRPIPE_PASS_MODULES"
_IMPORTED_FROM_ENV: set[str] = set()


def register(
    argument: str, description: str, options: tuple[str, ...] = ()
) -> Callable[[Callable[[dict[str, str]], PassBody]], Callable[[dict[str, str]], PassBody]]:
    """Decorator: register `factory(options) -> pass body` under the pipeline name `argument`."""

    def wrap(factory: Callable[[dict[str, str]], PassBody]) -> Callable[[dict[str, str]], PassBody]:
        _REGISTRY[argument] = PythonPass(argument, description, options, factory)
        return factory

    return wrap


def _load() -> None:
    global _LOADED
    _load_env_modules()
    if _LOADED:
        return
    _LOADED = True
    from importlib.metadata import entry_points

    from . import blas, forbid_ops  # noqa: F401  (register themselves)

    # Other projects ship their own Python passes through this entry-point group.
    for ep in entry_points(group="mlirpipe.passes"):
        ep.load()


def _load_env_modules() -> None:
    """Import the modules named in $MLIRPIPE_PASS_MODULES not imported yet (the variable is
    read on every lookup: a RUN line may set it with `env`). $PYTHONPATH is searched as a
    tool started as a process would, also when this process started without it."""
    import importlib
    import os
    import sys

    from ...errors import PipelineSpecError, Problem

    for name in os.environ.get(PASS_MODULES_ENV, "").split(","):
        name = name.strip()
        if not name or name in _IMPORTED_FROM_ENV:
            continue
        extra = [
            d for d in os.environ.get("PYTHONPATH", "").split(os.pathsep) if d and d not in sys.path
        ]
        sys.path[len(sys.path) :] = extra
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise PipelineSpecError(
                Problem(
                    f"cannot import pass module '{name}' named in ${PASS_MODULES_ENV}: {exc}",
                    hint="put the module's folder on PYTHONPATH, or fix the name "
                    f"(${PASS_MODULES_ENV} is a comma-separated list of module names)",
                )
            ) from None
        finally:
            for d in extra:
                if d in sys.path:
                    sys.path.remove(d)
        _IMPORTED_FROM_ENV.add(name)


def get(argument: str) -> PythonPass | None:
    _load()
    return _REGISTRY.get(argument)


def all_passes() -> dict[str, PythonPass]:
    _load()
    return dict(_REGISTRY)
