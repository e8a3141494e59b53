"""A `--mlirpipe-*` option given as `--flag VALUE` whose VALUE is a path outside the run's
folders: pytest chooses its rootdir and config file before it loads plugins, so it takes
VALUE for one of the paths to test, and the rootdir, the config file, its ini keys and the
folder this plugin writes to (`build/pytest` under the rootdir) can all change with it
(pytest issue #8846). `--flag=VALUE` is read as the option's value from the start."""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

# The files pytest reads its configuration from (findpaths.locate_config), in any folder.
CONFIG_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


def misread_values(
    args: Sequence[str],
    flags: Iterable[str],
    positional: Sequence[str],
    invocation_dir: Path,
    found_config: Path | None,
) -> list[tuple[str, str]]:
    """(flag, value) of each of `flags` given in `args` as `--flag VALUE` whose VALUE pytest
    took for a path to test and which changed where it looked for its config file: VALUE
    exists and lies outside the common folder of the invocation folder and the `positional`
    paths, and a config file may lie between that folder and the one VALUE moved it to (or
    none was found: the rootdir is then that folder itself)."""
    wanted = set(flags)
    given = [
        (flag, value)
        for flag, value in itertools.pairwise(args)
        if flag in wanted and not value.startswith("-")
    ]
    if not given:
        return []
    before = _common([invocation_dir, *_dirs(positional, invocation_dir)])
    misread = []
    for flag, value in given:
        after = _common([before, *_dirs([value], invocation_dir)])
        if after != before and (found_config is None or _config_between(before, after)):
            misread.append((flag, value))
    return misread


def pytest_args(config) -> list[str]:
    """The arguments pytest read before it chose its rootdir: $PYTEST_ADDOPTS, then the
    command line's."""
    return [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]


def _dirs(args: Iterable[str], invocation_dir: Path) -> list[Path]:
    """The folders of the arguments that name existing paths (a test id's `::` part cut),
    as pytest's get_dirs_from_args has them."""
    found = []
    for arg in args:
        path = Path(os.path.abspath(invocation_dir / str(arg).split("::")[0]))
        if path.exists():
            found.append(path if path.is_dir() else path.parent)
    return found


def _common(paths: Sequence[Path]) -> Path:
    return Path(os.path.commonpath([str(p) for p in paths]))


def _config_between(below: Path, above: Path) -> bool:
    """Whether a folder from `below` up to `above` (not included) holds a config file."""
    folder = below
    while folder != above and folder != folder.parent:
        if any((folder / name).is_file() for name in CONFIG_FILES):
            return True
        folder = folder.parent
    return False


def message(flag: str, value: str, config) -> str:
    shown_config = config.inipath if config.inipath is not None else "none"
    return (
        f"mlirpipe: {flag} {value}: pytest took this path for a path to test when it chose "
        f"its rootdir ({config.rootpath}) and config file ({shown_config}), before it knew "
        "this plugin's options (pytest issue #8846)\n"
        f"  hint: give the value with '=': {flag}={value}"
    )
