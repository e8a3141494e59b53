"""mkdocs hook: the reference pages' generated parts, from the code's own declarations.

A page holds a marker line, `<!-- reference: NAME -->`, then the generated text, then
`<!-- /reference: NAME -->`: the pytest options (as pytest's `pytest_addoption` hooks declare
them, from `pytest_mlirpipe.options`) or each command's `--help` (from its argparse parser). The
pages keep the text, so the repository shows it too; the site is built with it generated anew,
and `python docs/hooks/reference.py` writes it into the pages (`--check`: exit 1 when a page is
not current). Importing the parsers loads neither torch nor the MLIR bindings.
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

# A start marker, then (once the text is written in) the text and the end marker.
MARKER = re.compile(
    r"^<!-- reference: ([\w-]+) -->$\n?(?:.*?^<!-- /reference: \1 -->$\n?)?", re.M | re.S
)
PAGES = ("reference/commands.md", "reference/options.md")
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
    """The page with the text between each pair of markers generated anew (a start marker
    alone gets the text and its end marker); an unknown name is an error."""

    def generated(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in GENERATORS:
            raise KeyError(f"unknown reference marker {name!r}: one of {', '.join(GENERATORS)}")
        text = GENERATORS[name]().rstrip("\n")
        # blank lines around the text: Markdown reads a line next to a comment as its HTML
        return f"<!-- reference: {name} -->\n\n{text}\n\n<!-- /reference: {name} -->\n"

    return MARKER.sub(generated, markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return expand(markdown)


def stale_pages(docs: Path, write: bool) -> list[str]:
    """The pages whose generated text is not what the code declares now; rewritten if `write`."""
    stale = []
    for page in PAGES:
        path = docs / page
        text = path.read_text(encoding="utf-8")
        current = expand(text)
        if current != text:
            stale.append(page)
            if write:
                path.write_text(current, encoding="utf-8")
    return stale


def main(argv: list[str], docs: Path = ROOT / "docs") -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python docs/hooks/reference.py [--check]", file=sys.stderr)
        return 2
    stale = stale_pages(docs, write=not check)
    for page in stale:
        verb = "is not current: run python docs/hooks/reference.py" if check else "rewritten"
        print(f"docs/{page}: {verb}", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
