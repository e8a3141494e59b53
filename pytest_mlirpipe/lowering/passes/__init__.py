"""The project's own passes, written in Python on the MLIR bindings: load them, look them up."""

from __future__ import annotations

import functools
import importlib
import os
import sys

from ...errors import PipelineSpecError, Problem
from .registry import PassBody, PythonPass, register, registered
from .registry import all_registered as _all_registered

__all__ = ["PASS_MODULES_ENV", "PassBody", "PythonPass", "all_passes", "get", "register"]

# Comma-separated modules imported for their passes (modules on PYTHONPATH that call
# `register`): a repository's own passes without packaging them.
PASS_MODULES_ENV = "MLIRPIPE_PASS_MODULES"


def get(argument: str) -> PythonPass | None:
    """The Python pass named `argument`: built-in, from an entry point or $MLIRPIPE_PASS_MODULES."""
    _load()
    return registered(argument)


def all_passes() -> dict[str, PythonPass]:
    """Every Python pass by name, once all of them are loaded."""
    _load()
    return _all_registered()


def _load() -> None:
    _load_env_modules()
    _load_installed()


@functools.cache
def _load_installed() -> None:
    """Import the built-in pass modules and those of the `mlirpipe.passes` entry points, once."""
    from importlib.metadata import entry_points

    from . import (  # noqa: F401  (register themselves)
        alloca_scopes,
        blas,
        bool_tensors,
        broadcast_batch_matmul,
        conv_layout,
        elementwise_fusion,
        empty_contractions,
        erf_approximation,
        exp_approximation,
        fill_borders,
        forbid_ops,
        log_approximation,
        mark_elementwise,
        pack_matmul,
        pool_layout,
        reductions,
        reshape_pairs,
        scalar_loads,
        sink_transposes,
        tanh_approximation,
        tanh_gelu,
        transform_script,
    )

    # Other projects ship their own Python passes through this entry-point group.
    for ep in entry_points(group="mlirpipe.passes"):
        ep.load()


def _load_env_modules() -> None:
    """Import the modules named in $MLIRPIPE_PASS_MODULES not imported yet (the variable is
    read on every lookup: a RUN line may set it with `env`). $PYTHONPATH is searched as a
    tool started as a process would, also when this process started without it."""
    for name in os.environ.get(PASS_MODULES_ENV, "").split(","):
        name = name.strip()
        if name and name not in sys.modules:
            _import_pass_module(name)


def _import_pass_module(name: str) -> None:
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
