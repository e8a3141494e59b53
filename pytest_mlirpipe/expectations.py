"""Expected failures kept as data: read, build and update an expectations file (TOML)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import Problem, UsageError, did_you_mean
from .model import Location

TABLE = "xfail"
KEYS = ("test", "pipeline", "reason")
# lit's verdicts of a RUN/CHECK file that are failures (lit's isFailure).
FILE_FAILURES = frozenset({"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"})
# The verdicts of an execution check that fail it.
CHECK_FAILURES = frozenset({"FAIL", "TIMEOUT"})

HEADER = """\
# Expected failures: each [[xfail]] names a test (its pytest node id) and, for an execution
# check, one pipeline, with the reason it failed. `pytest --mlirpipe-expectations FILE` makes
# each a strict xfail. Written by `mlirpipe expectations RUN.json -o FILE`;
# `mlirpipe expectations --update RUN.json -o FILE` rewrites it from a new run, keeping comments.
"""


class ExpectationsError(UsageError):
    """An expectations file that cannot be read: each problem located at its line."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed failure: a test, the pipeline of an execution check ("" for the whole test),
    the reason it failed, and the entry's place in its file."""

    test: str
    pipeline: str = ""
    reason: str = ""
    location: Location | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.test, self.pipeline)

    def describe(self) -> str:
        return f"{self.test} (pipeline '{self.pipeline}')" if self.pipeline else self.test


@dataclass(frozen=True, slots=True)
class Expectations:
    """The entries of one expectations file, in the file's order."""

    path: str
    entries: tuple[Entry, ...] = ()

    def by_test(self) -> dict[str, dict[str, Entry]]:
        """{test: {pipeline, or "" for the whole test: its entry}}, to look entries up."""
        index: dict[str, dict[str, Entry]] = {}
        for e in self.entries:
            index.setdefault(e.test, {})[e.pipeline] = e
        return index


# ---- reading


def parse_expectations(text: str, path: str) -> Expectations:
    """The entries of an expectations file; ExpectationsError lists every problem, located."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExpectationsError(_syntax_problem(exc, path)) from None
    lines = text.splitlines()
    problems = [
        Problem(
            f"unknown key '{key}': an expectations file holds only [[{TABLE}]] entries",
            Location(path, _key_line(lines, key, 0, len(lines)) or _table_line(lines, key)),
        )
        for key in data
        if key != TABLE
    ]
    tables = data.get(TABLE, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        line = _key_line(lines, TABLE, 0, len(lines)) or 1
        problems.append(
            Problem(
                f"'{TABLE}' must be a list of tables, each written [[{TABLE}]]",
                Location(path, line),
            )
        )
        raise ExpectationsError(problems)
    headers = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    if len(headers) != len(tables):  # entries written inline: locate them at the key
        headers = [(_key_line(lines, TABLE, 0, len(lines)) or 1) - 1] * len(tables)
    entries: list[Entry] = []
    seen: dict[tuple[str, str], Entry] = {}
    for i, table in enumerate(tables):
        end = headers[i + 1] if i + 1 < len(headers) and headers[i + 1] > headers[i] else len(lines)
        entry, found = _entry(table, path, lines, headers[i], end)
        problems += found
        if entry is None:
            continue
        if entry.key in seen:
            problems.append(
                Problem(
                    f"{entry.describe()} is listed twice (first at {seen[entry.key].location})",
                    entry.location,
                    hint="keep one of the two entries",
                )
            )
            continue
        seen[entry.key] = entry
        entries.append(entry)
    if problems:
        raise ExpectationsError(
            sorted(problems, key=lambda p: p.location.line if p.location else 0)
        )
    return Expectations(path, tuple(entries))


_HEADER = re.compile(rf"^\s*\[\[\s*{TABLE}\s*\]\]\s*(#.*)?$")
_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _syntax_problem(exc: tomllib.TOMLDecodeError, path: str) -> Problem:
    message = str(exc)
    m = _AT.search(message)
    location = Location(path, int(m.group(1)), int(m.group(2))) if m else Location(path)
    message = message[: m.start()] if m else message
    return Problem(f"not valid TOML: {message}", location)


def _key_line(lines: Sequence[str], key: str, start: int, end: int) -> int:
    """The 1-based line in lines[start:end] that sets `key`, 0 when none does."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    return next((i + 1 for i in range(start, end) if pattern.match(lines[i])), 0)


def _table_line(lines: Sequence[str], key: str) -> int:
    pattern = re.compile(rf"^\s*\[\[?\s*[\"']?{re.escape(key)}[\"']?\s*[\].]")
    return next((i + 1 for i, line in enumerate(lines) if pattern.match(line)), 1)


def _entry(
    table: Mapping[str, Any], path: str, lines: Sequence[str], header: int, end: int
) -> tuple[Entry | None, list[Problem]]:
    """One [[xfail]] table (its header at 0-based line `header`) as an Entry, or its problems."""
    here = Location(path, header + 1)
    problems = []
    for key, value in table.items():
        at = Location(path, _key_line(lines, key, header + 1, end) or header + 1)
        if key not in KEYS:
            hint = did_you_mean(key, KEYS) or f"the keys are {', '.join(KEYS)}"
            problems.append(Problem(f"unknown key '{key}' in an [[{TABLE}]] entry", at, hint))
        elif not isinstance(value, str):
            problems.append(
                Problem(f"'{key}' must be a string, not {_toml_type(value)} ({value!r})", at)
            )
    if "test" not in table:
        problems.append(
            Problem(
                f"an [[{TABLE}]] entry needs a 'test': the pytest node id of the failing test",
                here,
                hint='e.g. test = "test/test_models.py::test_relu"',
            )
        )
    if problems:
        return None, problems
    return Entry(table["test"], table.get("pipeline", ""), table.get("reason", ""), here), []


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", list: "an array"}
    return names.get(type(value), "a table" if isinstance(value, dict) else "a date or time")


# ---- building from runs


@dataclass(frozen=True, slots=True)
class RunResults:
    """What runs (their --mlirpipe-json reports) said: the failures, and every test and
    (test, pipeline) they judged."""

    failures: tuple[Entry, ...]
    judged: frozenset[tuple[str, str]]


def results_of(reports: Iterable[Mapping[str, Any]]) -> RunResults:
    """The failures of RUN/CHECK files and of execution checks made in a test (a row with its
    node id), each with its reason; shards' reports add up."""
    failures: dict[tuple[str, str], Entry] = {}
    judged: set[tuple[str, str]] = set()
    for report in reports:
        for test, entry in report.get("files", {}).items():
            judged.add((test, ""))
            if entry.get("verdict") in FILE_FAILURES:
                failures[(test, "")] = Entry(test, "", entry.get("reason") or entry["verdict"])
        for row in report.get("results", []):
            test = row.get("test")
            if not test:  # `mlirpipe run --json`: no pytest test to list
                continue
            key = (test, row["pipeline"])
            judged.add(key)
            if row.get("verdict") in CHECK_FAILURES:
                failures.setdefault(key, Entry(test, row["pipeline"], _row_reason(row)))
    ordered = sorted(failures.values(), key=lambda e: e.key)
    return RunResults(tuple(ordered), frozenset(judged))


def _row_reason(row: Mapping[str, Any]) -> str:
    if row.get("reason"):
        return str(row["reason"])
    error = (row.get("error") or "").strip().splitlines()
    return f"{row['verdict']}: {error[0]}" if error else row["verdict"]


def format_expectations(failures: Iterable[Entry]) -> str:
    """A new expectations file listing `failures`."""
    return HEADER + "".join("\n" + _entry_text(e) for e in failures)


def _entry_text(entry: Entry) -> str:
    import tomlkit

    table = tomlkit.table()
    table["test"] = entry.test
    if entry.pipeline:
        table["pipeline"] = entry.pipeline
    table["reason"] = entry.reason
    doc = tomlkit.document()
    doc.append(TABLE, tomlkit.aot())
    doc[TABLE].append(table)
    return tomlkit.dumps(doc)


# ---- updating


@dataclass(frozen=True, slots=True)
class Update:
    """The rewritten file and what changed: entries kept, removed (now pass), added, and
    kept untouched because no run judged them."""

    text: str
    kept: int
    removed: tuple[Entry, ...]
    added: tuple[Entry, ...]
    unjudged: int

    def summary(self) -> str:
        parts = [f"{self.kept} kept", f"{len(self.removed)} removed (now pass)"]
        parts.append(f"{len(self.added)} added")
        if self.unjudged:
            parts.append(f"{self.unjudged} not in the runs, left as they were")
        return ", ".join(parts)


def update_expectations(text: str, path: str, results: RunResults) -> Update:
    """`text` (an expectations file) rewritten from new results: an entry whose test (or
    pipeline) passed goes, with the comment lines just above its [[xfail]] line; one still
    failing keeps its comments and gets the new reason; new failures are added after the last
    entry (at the end of a file without entries); entries the runs did not judge stay as they
    are. Every other line stays."""
    expectations = parse_expectations(text, path)  # a bad file is said before it is changed
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    if len(starts) != len(expectations.entries):
        raise ExpectationsError(
            Problem(
                f"--update rewrites entries written as [[{TABLE}]] tables; this file writes "
                "them otherwise",
                Location(path),
                hint=f"write each entry as an [[{TABLE}]] table, or write a new file",
            )
        )
    failing = {e.key: e for e in results.failures}
    out: list[str] = []
    cursor = 0
    removed: list[Entry] = []
    kept = unjudged = 0
    for index, (entry, start) in enumerate(zip(expectations.entries, starts, strict=True)):
        body_end = _body_end(lines, start, starts[index + 1] if index + 1 < len(starts) else None)
        lead = _leading_comments(lines, cursor, start)
        out += lines[cursor:lead]
        block = lines[lead:body_end]
        cursor = body_end
        if entry.key in failing:
            kept += 1
            out += _with_reason(block, start - lead, failing.pop(entry.key).reason)
        elif entry.key in results.judged:
            removed.append(entry)
        else:
            unjudged += 1
            out += block
    if not starts:  # no entry yet: the file's own lines all come first
        out, cursor = list(lines), len(lines)
    added = tuple(failing.values())
    new = _squeezed("".join(out)).rstrip("\n")  # new entries go after the last entry
    for entry in added:
        new += ("\n\n" if new else "") + _entry_text(entry).rstrip("\n")
    tail = _squeezed("".join(lines[cursor:])).strip("\n")  # the comments after it
    return Update(_joined(new, tail), kept, tuple(removed), added, unjudged)


def _joined(text: str, tail: str) -> str:
    return "\n\n".join(part for part in (text, tail) if part) + "\n"


def _body_end(lines: Sequence[str], start: int, next_start: int | None) -> int:
    """The end of an entry's own lines: its last key line (comments between keys count),
    not the blank lines and comments after it."""
    end = next_start if next_start is not None else len(lines)
    last = start
    for i in range(start + 1, end):
        stripped = lines[i].strip()
        if _HEADER.match(lines[i]) or (stripped.startswith("[") and not stripped.startswith("#")):
            break
        if stripped and not stripped.startswith("#"):
            last = i
    return last + 1


def _leading_comments(lines: Sequence[str], cursor: int, start: int) -> int:
    """Where the comment lines directly above an entry's header begin (no blank line between)."""
    i = start
    while i > cursor and lines[i - 1].strip().startswith("#"):
        i -= 1
    return i


def _with_reason(block: Sequence[str], header: int, reason: str) -> list[str]:
    """An entry's lines with its reason set (tomlkit keeps its comments and layout)."""
    import tomlkit

    head, table_text = list(block[:header]), "".join(block[header:])
    doc = tomlkit.parse(table_text)
    doc[TABLE][0]["reason"] = reason
    return [*head, tomlkit.dumps(doc)]


def _squeezed(text: str) -> str:
    """Runs of blank lines (left where entries went) as one blank line."""
    return re.sub(r"\n{3,}", "\n\n", text)
