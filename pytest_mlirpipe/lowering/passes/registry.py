"""The table of Python-defined passes by pipeline name, filled by `register`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A pass body: called with (operation, external_pass) like `PassManager.add` expects.
PassBody = Callable[[Any, Any], None]
# Makes a pass body from the pass's options (`name{key=value}` in a pipeline, as strings).
PassFactory = Callable[[dict[str, str]], PassBody]


@dataclass(frozen=True, slots=True)
class PythonPass:
    """A Python-defined pass: its pipeline name, a one-line description, accepted options and
    the defaults of those options (values may be computed on each lookup)."""

    argument: str
    description: str
    options: tuple[str, ...]
    factory: PassFactory
    defaults: Mapping[str, str] = field(default_factory=dict)


# Process-wide on purpose: it extends MLIR's pass registry, which is global to the process
# (a pass registered once is usable by name in every pipeline, as the C++ ones are).
_REGISTRY: dict[str, PythonPass] = {}


def register(
    argument: str,
    description: str,
    options: tuple[str, ...] = (),
    defaults: Mapping[str, str] | None = None,
) -> Callable[[PassFactory], PassFactory]:
    """Decorator: register `factory(options) -> pass body` under the pipeline name `argument`;
    `defaults` are the values of the options a pipeline does not set, whoever runs it."""

    def wrap(factory: PassFactory) -> PassFactory:
        own = {} if defaults is None else defaults
        _REGISTRY[argument] = PythonPass(argument, description, options, factory, own)
        return factory

    return wrap


def registered(argument: str) -> PythonPass | None:
    """The pass registered under `argument`, if any (loads nothing)."""
    return _REGISTRY.get(argument)


def all_registered() -> dict[str, PythonPass]:
    """Every pass registered so far, by name (loads nothing)."""
    return dict(_REGISTRY)
