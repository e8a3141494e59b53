"""mkdocs hook: the reference pages' generated parts, from the code's own declarations.

A page holds a marker line, `<!-- reference: NAME -->`; the hook puts in its place the pytest
options (as pytest's `pytest_addoption` hooks declare them, from `pytest_mlirpipe.options`) or
each command's `--help` (from its argparse parser). Importing the parsers loads neither torch
nor the MLIR bindings.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the checkout's package, also without `pip install -e`
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- reference: ([\w-]+) -->$", re.M)
HELP_WIDTH = "100"  # argparse wraps --help to $COLUMNS: fixed, so the pages do not vary


class _RecordingParser:
    """Stands in for pytest's parser: records each flag and ini key a plugin declares."""

    def __init__(self) -> None:
        self.flags: list[tuple[str, dict[str, Any]]] = []
        self.inis: dict[str, str] = {}

    def getgroup(self, *args: Any, **kwargs: Any) -> _RecordingParser:
        return self

    def addoption(self, name: str, **kwargs: Any) -> None:
        self.flags.append((name, kwargs))

    def addini(self, name: str, help: str, **kwargs: Any) -> None:
        self.inis[name] = help


def declared_pytest_options() -> _RecordingParser:
    """Every `--mlirpipe-*` flag and `mlirpipe_*` ini key the plugin's hooks declare."""
    from pytest_mlirpipe import fixtures, plugin

    recorder = _RecordingParser()
    plugin.pytest_addoption(recorder)
    fixtures.pytest_addoption(recorder)
    return recorder


def options_reference() -> str:
    """The pytest flags and ini keys as a Markdown table: flag, ini key, default, meaning."""
    from pytest_mlirpipe.options import OPTIONS

    rows = ["| flag | ini key | default | meaning |", "|---|---|---|---|"]
    for o in OPTIONS:
        meaning = o.help + (" (repeatable)" if o.action == "append" else "")
        if o.ini and o.ini_help:
            meaning += f"; as an ini key: {o.ini_help}"
        if o.choices:
            meaning += f"; one of {', '.join(f'`{c}`' for c in o.choices)}"
        flag = o.flag_name if o.flag else None
        rows.append(_row(flag, o.ini_name if o.ini else None, _default(o), meaning))
    shown = {o.flag_name for o in OPTIONS if o.flag}
    for flag, kwargs in declared_pytest_options().flags:  # declared beside options.py's
        if flag not in shown:
            rows.append(_row(flag, None, "", kwargs["help"]))
    return "\n".join(rows) + "\n"


def _default(o: Any) -> str:
    if o.shown_default is not None:
        return o.shown_default
    if o.default in (None, "", ()) or o.action == "append":
        return ""
    if isinstance(o.default, tuple):
        return " ".join(o.default)
    return str(o.default).lower() if isinstance(o.default, bool) else str(o.default)


def _row(flag: str | None, ini: str | None, default: str, meaning: str) -> str:
    cells = (f"`{flag}`" if flag else "", f"`{ini}`" if ini else "", default, meaning)
    return "| " + " | ".join(_escaped(c) for c in cells) + " |"


def _escaped(cell: str) -> str:
    """Text that Markdown shows as written: `|` would end the cell, `*` start emphasis."""
    parts = cell.split("`")  # the odd parts are code spans, shown as written already
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("|", "\\|").replace("*", "\\*")
    return "`".join(parts)


def parsers() -> list[argparse.ArgumentParser]:
    """The commands' parsers: `mlirpipe` and each subcommand, `mlirpipe-opt`, `mlirpipe-assert`."""
    from pytest_mlirpipe.cli.main import build_parser as mlirpipe
    from pytest_mlirpipe.tools.ir_assert import build_parser as mlirpipe_assert
    from pytest_mlirpipe.tools.opt import build_parser as mlirpipe_opt

    main = mlirpipe()
    return [main, *subcommands(main).values(), mlirpipe_opt(), mlirpipe_assert()]


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands_reference() -> str:
    """Each command's `--help`, under a heading naming the command."""
    with _columns(HELP_WIDTH):
        parts = [f"### `{p.prog}`\n\n```text\n{p.format_help().rstrip()}\n```\n" for p in parsers()]
    return "\n".join(parts)


@contextmanager
def _columns(width: str) -> Iterator[None]:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


GENERATORS: dict[str, Callable[[], str]] = {
    "pytest-options": options_reference,
    "commands": commands_reference,
}


def expand(markdown: str) -> str:
    """The page with each marker replaced by its generated text; an unknown name is an error."""

    def generated(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in GENERATORS:
            raise KeyError(f"unknown reference marker {name!r}: one of {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(generated, markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return expand(markdown)
