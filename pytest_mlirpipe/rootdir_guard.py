"""A `--mlirpipe-*` option given as `--flag VALUE` whose VALUE pytest took for a path to test:
pytest chooses its rootdir and config file before it loads plugins, so it reads VALUE (when
it names an existing path) as one of the paths to test, and the rootdir, the config file, its
ini keys and the folder this plugin writes to (`build/pytest` under the rootdir) can change
with it (pytest issue #8846). `--flag=VALUE` is read as the option's value from the start.
Whether a value changed pytest's choice is asked of pytest's own `determine_setup`, with and
without it."""

from __future__ import annotations

import inspect
import itertools
import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

# (rootdir, config file) that pytest chooses from (path arguments, -c, --rootdir, -o)
Setup = Callable[[Sequence[str]], tuple[Path, Path | None]]


def separated_values(args: Sequence[str], flags: Iterable[str]) -> list[tuple[str, str]]:
    """(flag, value) of each of `flags` given in `args` as `--flag VALUE`."""
    wanted = set(flags)
    return [
        (flag, value)
        for flag, value in itertools.pairwise(args)
        if flag in wanted and not value.startswith("-")
    ]


def misread_values(
    given: Sequence[tuple[str, str]], positional: Sequence[str], setup: Setup
) -> list[tuple[str, str]]:
    """The (flag, value) of `given` whose value changes pytest's choice of rootdir and config
    file from what the `positional` paths alone give."""
    if not given:
        return []
    alone = setup(positional)
    return [(flag, value) for flag, value in given if setup([*positional, value]) != alone]


def pytest_setup(config: Any) -> Setup | None:
    """pytest's choice of rootdir and config file from path arguments, with the run's -c,
    --rootdir and -o (pytest's own findpaths.determine_setup, whose arguments differ between
    pytest's versions); None when this pytest's cannot be called so."""
    try:
        from _pytest.config.findpaths import determine_setup
    except ImportError:
        return None
    option = config.option
    known = {
        "inifile": getattr(option, "inifilename", None),
        "override_ini": getattr(option, "override_ini", None),
        "rootdir_cmd_arg": getattr(option, "rootdir", None) or None,
        "invocation_dir": config.invocation_params.dir,
    }
    try:
        parameters = inspect.signature(determine_setup).parameters
    except (TypeError, ValueError):
        return None
    if "args" not in parameters or not set(parameters) - {"args"} <= set(known):
        return None
    kwargs = {name: known[name] for name in parameters if name != "args"}

    def setup(args: Sequence[str]) -> tuple[Path, Path | None]:
        found = determine_setup(args=list(args), **kwargs)
        return found[0], found[1]

    return setup


def pytest_args(config: Any) -> list[str]:
    """The arguments pytest read before it chose its rootdir: $PYTEST_ADDOPTS, then the
    command line's."""
    return [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]


def message(flag: str, value: str, config: Any) -> str:
    shown_config = config.inipath if config.inipath is not None else "none"
    return (
        f"mlirpipe: {flag} {value}: pytest took this path for a path to test when it chose "
        f"its rootdir ({config.rootpath}) and config file ({shown_config}), before it knew "
        "this plugin's options (pytest issue #8846)\n"
        f"  hint: give the value with '=': {flag}={value}"
    )
