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

TOML_TABLE = "[tool.pytest.ini_options]"


class EditRefused(Exception):
    """The edit would leave the file unreadable (or it is unreadable already): nothing written."""


@dataclass(frozen=True, slots=True)
class Edit:
    """The file's new text, the keys added to it and the keys it already had (left as set)."""

    text: str
    added: tuple[str, ...]
    kept: tuple[str, ...]


def toml_edit(text: str, keys: dict[str, list[str]]) -> Edit:
    """Put `keys` in pyproject.toml's `[tool.pytest.ini_options]`: into the table wherever and
    however it is declared, else as a new table at the end."""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise EditRefused(f"it is not valid TOML ({error}): fix it first") from None
    table = before.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(table, dict):
        added = tuple(keys)
        new = text + _separator(text) + toml_table(keys)
        kept: tuple[str, ...] = ()
    else:
        kept = tuple(k for k in keys if k in table)
        added = tuple(k for k in keys if k not in table)
        doc = tomlkit.parse(text)
        place = doc["tool"]["pytest"]["ini_options"]  # type: ignore[index]
        for key in added:
            value = tomlkit.array()
            value.extend(keys[key])
            value.multiline(len(keys[key]) > 1 and not isinstance(place, InlineTable))
            place[key] = value  # type: ignore[index]
        new = tomlkit.dumps(doc)
    _check_toml(new, before, {k: keys[k] for k in added})
    return Edit(new, added, kept)


def toml_table(keys: dict[str, list[str]]) -> str:
    """A new `[tool.pytest.ini_options]` table holding `keys`, one line per list item."""
    body = ""
    for key, values in keys.items():
        items = [json.dumps(v) for v in values]
        if len(values) > 1:
            body += f"{key} = [\n" + "".join(f"    {i},\n" for i in items) + "]\n"
        else:
            body += f"{key} = [{', '.join(items)}]\n"
    return f"{TOML_TABLE}\n{body}"


def _separator(text: str) -> str:
    return "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"


def _check_toml(new: str, before: dict, added: dict[str, list[str]]) -> None:
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError as error:
        raise EditRefused(f"with the keys added it would not parse as TOML ({error})") from None
    table = after.get("tool", {}).get("pytest", {}).get("ini_options", {})
    if any(table.get(k) != v for k, v in added.items()):
        raise EditRefused(f"the keys added would not be read in {TOML_TABLE}")
    if _without(after, added) != _without(before, added):
        raise EditRefused("the edit would change other settings of the file")


def _without(data: dict, keys: dict[str, list[str]]) -> dict:
    """`data` less `keys` in its [tool.pytest.ini_options] table (an empty one when none)."""
    tool = data.get("tool", {})
    pytest = tool.get("pytest", {})
    table = {k: v for k, v in pytest.get("ini_options", {}).items() if k not in keys}
    return {**data, "tool": {**tool, "pytest": {**pytest, "ini_options": table}}}


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
        head = text.splitlines(keepends=True)
        if len(head) >= at and not head[at - 1].endswith("\n"):
            head[at - 1] += "\n"
        new = "".join(head[:at]) + lines + "".join(head[at:])
    after = _parse_ini(new, name, "with the lines added it would not parse ({})")
    _check_configparser(text, new)
    for key in added:
        got = after.get(section, key, "")
        if [line.strip() for line in got.splitlines() if line.strip()] != keys[key]:
            raise EditRefused(f"the lines added would not be read as {key} in [{section}]")
    return Edit(new, added, kept)


def ini_key(key: str, values: list[str]) -> str:
    if len(values) == 1 and key != "mlirpipe_lit_site":
        return f"{key} = {values[0]}\n"
    return f"{key} =\n" + "".join(f"    {v}\n" for v in values)


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
