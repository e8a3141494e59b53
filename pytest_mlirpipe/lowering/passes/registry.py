"""The table of Python-defined passes by pipeline name, filled by `register`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A pass body: called with (operation, external_pass) like `PassManager.add` expects.
PassBody = Callable[[Any, Any], None]
# Makes a pass body from the pass's options (`name{key=value}` in a pipeline, as strings).
PassFactory = Callable[[dict[str, str]], PassBody]


@dataclass(frozen=True, slots=True)
class PythonPass:
    """A Python-defined pass: its pipeline name, a one-line description and accepted options."""

    argument: str
    description: str
    options: tuple[str, ...]
    factory: PassFactory


# Process-wide on purpose: it extends MLIR's pass registry, which is global to the process
# (a pass registered once is usable by name in every pipeline, as the C++ ones are).
_REGISTRY: dict[str, PythonPass] = {}


def register(
    argument: str, description: str, options: tuple[str, ...] = ()
) -> Callable[[PassFactory], PassFactory]:
    """Decorator: register `factory(options) -> pass body` under the pipeline name `argument`."""

    def wrap(factory: PassFactory) -> PassFactory:
        _REGISTRY[argument] = PythonPass(argument, description, options, factory)
        return factory

    return wrap


def registered(argument: str) -> PythonPass | None:
    """The pass registered under `argument`, if any (loads nothing)."""
    return _REGISTRY.get(argument)


def all_registered() -> dict[str, PythonPass]:
    """Every pass registered so far, by name (loads nothing)."""
    return dict(_REGISTRY)
