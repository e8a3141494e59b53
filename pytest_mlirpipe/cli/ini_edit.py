"""Add keys to the pytest section of a config file, keeping the rest of its text as it is."""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from dataclasses import dataclass

import iniconfig
import tomlkit
from tomlkit.items import InlineTable


class EditRefused(Exception):
    """The edit would leave the file unreadable (or it is unreadable already): nothing written."""


@dataclass(frozen=True, slots=True)
class Edit:
    """The file's new text, the keys added to it and the keys it already had (left as set)."""

    text: str
    added: tuple[str, ...]
    kept: tuple[str, ...]
    created: bool = False  # the table or section was not there: it is added whole


INI_OPTIONS = ("tool", "pytest", "ini_options")


def pytest_table(name: str, text: str) -> tuple[str, ...]:
    """Where pytest reads its settings in the TOML file `name`: pytest.toml's [pytest],
    pyproject's [tool.pytest] when it holds settings of its own (pytest 9's native form), else
    pyproject's [tool.pytest.ini_options]."""
    if name != "pyproject.toml":
        return ("pytest",)
    try:
        native = _dig(tomllib.loads(text), INI_OPTIONS[:2]) or {}
    except tomllib.TOMLDecodeError:
        return INI_OPTIONS
    return INI_OPTIONS[:2] if set(native) - {"ini_options"} else INI_OPTIONS


def toml_edit(
    text: str,
    keys: dict[str, list[str]],
    table: tuple[str, ...] = INI_OPTIONS,
    name: str = "pyproject.toml",
) -> Edit:
    """Put `keys` in the TOML `table`: into it wherever and however it is declared (any
    header spelling, a dotted key, an inline table), else as a new table at the end."""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise EditRefused(f"it is not valid TOML ({_located(error, name)}): fix it first") from None
    had = _dig(before, table)
    if had is None:
        added = tuple(keys)
        new = text + _separator(text) + toml_table(keys, table)
        kept: tuple[str, ...] = ()
    else:
        kept = tuple(k for k in keys if k in had)
        added = tuple(k for k in keys if k not in had)
        doc = tomlkit.parse(text)
        place = doc
        for part in table:
            place = place[part]
        for key in added:
            value = tomlkit.array()
            value.extend(keys[key])
            value.multiline(len(keys[key]) > 1 and not isinstance(place, InlineTable))
            _add_after_last_key(place, key, value)
        new = tomlkit.dumps(doc)
    new = _newlines(new, text)
    try:
        _check_toml(new, before, {k: keys[k] for k in added}, table)
    except tomllib.TOMLDecodeError as error:
        # Its line is one of the edited text: say instead which line of the file clashes.
        why = re.sub(r" \(at line \d+, column \d+\)$", "", str(error))
        at = _conflict_line(text, toml_table(keys, table)) if had is None else None
        why += f", because of {name}:{at}" if at else ""
        raise EditRefused(f"with the keys added it would not parse as TOML ({why})") from None
    return Edit(new, added, kept, had is None)


def _located(error: tomllib.TOMLDecodeError, name: str) -> str:
    """tomllib's message as NAME:LINE:COLUMN: WHAT, when it gives the place."""
    found = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", str(error), re.S)
    return f"{name}:{found[2]}:{found[3]}: {found[1]}" if found else str(error)


def _conflict_line(text: str, table: str) -> int | None:
    """The first line of `text` after which a new `table` at the end no longer parses (what
    it would clash with), if a line does."""
    lines = text.splitlines(keepends=True)
    for count in range(1, len(lines) + 1):
        head = "".join(lines[:count])
        try:
            tomllib.loads(head)
        except tomllib.TOMLDecodeError:
            continue  # a multi-line value cut short
        try:
            tomllib.loads(head + _separator(head) + table)
        except tomllib.TOMLDecodeError:
            return count
    return None


def _newlines(new: str, text: str) -> str:
    """The edited text `new` with the line endings of `text`: CRLF when each line of `text`
    ends so (the lines added end in LF)."""
    if "\r\n" not in text or text.count("\r\n") != text.count("\n"):
        return new
    return new.replace("\r\n", "\n").replace("\n", "\r\n")


def _add_after_last_key(place, key: str, value) -> None:
    """Add `key` after the table's last key, not after the comments that end it (tomlkit's own
    place for it, where they often introduce the next table)."""
    body = getattr(getattr(place, "value", None), "body", None)
    last = [k for k, _ in body or () if k is not None]
    if isinstance(place, InlineTable) or not last:
        place[key] = value
        return
    try:
        place.value._insert_after(last[-1], key, value)
    except (AttributeError, TypeError, KeyError):  # tomlkit changed: its default place
        place[key] = value


def toml_table(keys: dict[str, list[str]], table: tuple[str, ...] = INI_OPTIONS) -> str:
    """A new TOML `table` holding `keys`, one line per list item."""
    body = ""
    for key, values in keys.items():
        items = [json.dumps(v) for v in values]
        if len(values) > 1:
            body += f"{key} = [\n" + "".join(f"    {i},\n" for i in items) + "]\n"
        else:
            body += f"{key} = [{', '.join(items)}]\n"
    return f"[{'.'.join(table)}]\n{body}"


def _dig(data: dict, table: tuple[str, ...]) -> dict | None:
    for part in table:
        data = data.get(part) if isinstance(data, dict) else None  # type: ignore[assignment]
    return data if isinstance(data, dict) else None


def _separator(text: str) -> str:
    return "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"


def _check_toml(new: str, before: dict, added: dict[str, list[str]], table: tuple[str, ...]):
    after = tomllib.loads(new)  # the caller says where it fails
    got = _dig(after, table) or {}
    if any(got.get(k) != v for k, v in added.items()):
        raise EditRefused(f"the keys added would not be read in [{'.'.join(table)}]")
    if _without(after, added, table) != _without(before, added, table):
        raise EditRefused("the edit would change other settings of the file")


def _without(data: dict, keys: dict[str, list[str]], table: tuple[str, ...]) -> dict:
    """`data` less `keys` in its `table` (an empty one when none)."""
    if not table:
        return {k: v for k, v in data.items() if k not in keys}
    inner = data.get(table[0], {})
    return {**data, table[0]: _without(inner if isinstance(inner, dict) else {}, keys, table[1:])}


def ini_edit(text: str, section: str, keys: dict[str, list[str]], name: str = "ini") -> Edit:
    """Put `keys` in the `[section]` of an ini file (pytest.ini, tox.ini, setup.cfg), right
    after its header, a list as indented continuation lines; the section is added at the end
    when there is none."""
    before = _parse_ini(text, name, "it does not parse as an ini file ({}): fix it first")
    had = before.sections.get(section)
    kept = tuple(k for k in keys if had is not None and k in had)
    added = tuple(k for k in keys if k not in kept)
    lines = "".join(ini_key(k, keys[k]) for k in added)
    if had is None:
        new = text + _separator(text) + f"[{section}]\n{lines}"
    else:
        at = before.lineof(section)  # 1-based line of the header
        assert at is not None  # the section is there (`had`)
        head = text.splitlines(keepends=True)
        if len(head) >= at and not head[at - 1].endswith("\n"):
            head[at - 1] += "\n"
        new = "".join(head[:at]) + lines + "".join(head[at:])
    new = _newlines(new, text)
    after = _parse_ini(new, name, "with the lines added it would not parse ({})")
    _check_configparser(text, new)
    for key in added:
        got = after.get(section, key, "")
        if [line.strip() for line in got.splitlines() if line.strip()] != _ini_lines(keys[key]):
            raise EditRefused(f"the lines added would not be read as {key} in [{section}]")
    return Edit(new, added, kept, had is None)


def ini_key(key: str, values: list[str]) -> str:
    """`key` and its values as an ini file's lines: words on one line (`testpaths = a b`),
    values with spaces in them (`name = value`) one per indented continuation line."""
    if not any(" " in v for v in values):
        return f"{key} = {' '.join(values)}\n"
    return f"{key} =\n" + "".join(f"    {v}\n" for v in values)


def _ini_lines(values: list[str]) -> list[str]:
    """The value lines pytest reads back for `values`, as `ini_key` writes them."""
    return [" ".join(values)] if not any(" " in v for v in values) else values


def _parse_ini(text: str, name: str, why: str) -> iniconfig.IniConfig:
    try:
        return iniconfig.IniConfig(name, data=text)
    except iniconfig.ParseError as error:
        raise EditRefused(why.format(f"iniconfig: {error}")) from None


def _check_configparser(text: str, new: str) -> None:
    """tox and setuptools read tox.ini and setup.cfg with configparser: an edit must not break
    that reading (a file it cannot read already is not ours to judge)."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    try:
        configparser.ConfigParser(interpolation=None).read_string(new)
    except configparser.Error as error:
        # Where in the edited text is no place in the file: the option and section say it.
        message = re.sub(r"^While reading from .*?\]: ", "", " ".join(str(error).split()))
        why = f"with the lines added it would not parse (configparser: {message})"
        raise EditRefused(why) from None


def fill_blank(text: str, name: str, value: str, toml: bool) -> str | None:
    """`text` with the list line `NAME =` (no value) made `NAME = VALUE`, when the file holds
    that line once; None when it does not (the caller says what to change by hand)."""
    if toml:
        pattern = rf'^(\s*)"{re.escape(name)}\s*=\s*"(\s*,?\s*(#.*)?)$'
        line = rf"\g<1>{json.dumps(f'{name} = {value}')}\g<2>"
    else:
        pattern = rf"^([ \t]+){re.escape(name)}[ \t]*=[ \t]*(\r?)$"
        line = rf"\g<1>{name} = {value}\g<2>"
    found = list(re.finditer(pattern, text, re.M))
    if len(found) != 1:
        return None
    return text[: found[0].start()] + found[0].expand(line) + text[found[0].end() :]
