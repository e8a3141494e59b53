"""The table of Python-defined passes by pipeline name, filled by `register`."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import PipelineSpecError, Problem

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
    `defaults` are the values of the options a pipeline does not set, whoever runs it. A name
    another module registered (a built-in pass's, say) is refused with a PipelineSpecError."""

    def wrap(factory: PassFactory) -> PassFactory:
        taken = _REGISTRY.get(argument)
        # The module that registered the name registers it again when it is imported again
        # (a reload, or an import after sys.modules was restored): that replaces its pass.
        if taken is not None and taken.factory.__module__ != factory.__module__:
            raise _shadowing(argument, taken.factory, factory)
        own = {} if defaults is None else defaults
        _REGISTRY[argument] = PythonPass(argument, description, options, factory, own)
        return factory

    return wrap


_BUILT_IN = __name__.rsplit(".", 1)[0] + "."  # the package of the project's own passes


def _shadowing(argument: str, taken: PassFactory, new: PassFactory) -> PipelineSpecError:
    """The error for a pass name registered by two modules, blaming the one that is not built-in
    (the new one when neither or both are)."""
    built_in = taken.__module__.startswith(_BUILT_IN)
    culprit, holder = (new, taken)
    if new.__module__.startswith(_BUILT_IN) and not built_in:
        culprit, holder, built_in = taken, new, True
    kind = "the built-in pass" if built_in else "the pass"
    return PipelineSpecError(
        Problem(
            f"pass '{argument}' of {_source(culprit)} would shadow {kind} of "
            f"{_source(holder)}, registered under the same name",
            hint=f"register the pass of {culprit.__module__} under another name (one starting "
            "with its project's name, say); a pipeline names each pass by one name",
        )
    )


def _source(factory: PassFactory) -> str:
    """`module (file)` of a pass factory, or the module alone when it has no file."""
    module = sys.modules.get(factory.__module__)
    path = getattr(module, "__file__", None)
    if path is None:
        try:
            path = inspect.getsourcefile(factory)
        except TypeError:
            path = None
    return f"{factory.__module__} ({path})" if path else factory.__module__


def registered(argument: str) -> PythonPass | None:
    """The pass registered under `argument`, if any (loads nothing)."""
    return _REGISTRY.get(argument)


def all_registered() -> dict[str, PythonPass]:
    """Every pass registered so far, by name (loads nothing)."""
    return dict(_REGISTRY)
