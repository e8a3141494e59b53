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
    if _LOADED:
        return
    _LOADED = True
    from importlib.metadata import entry_points

    from . import blas, forbid_ops  # noqa: F401  (register themselves)

    # Other projects ship their own Python passes through this entry-point group.
    for ep in entry_points(group="mlirpipe.passes"):
        ep.load()


def get(argument: str) -> PythonPass | None:
    _load()
    return _REGISTRY.get(argument)


def all_passes() -> dict[str, PythonPass]:
    _load()
    return dict(_REGISTRY)
