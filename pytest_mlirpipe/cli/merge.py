"""`mlirpipe merge`: several shards' junit XML or timing JSON reports as one report."""

from __future__ import annotations

import argparse
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, TextIO

from ..atomic import write_atomic
from ..errors import Problem, UsageError
from ..execution.results.report import JSON_FORMAT, read_report

_COUNTS = ("tests", "failures", "errors", "skipped")


def add_merge(sub) -> None:
    mg = sub.add_parser(
        "merge",
        help="merge the junit XML or timing JSON reports of several shards into one",
        description="Merge the reports of several shards (pytest --junitxml, lit "
        "--xunit-xml-output, or pytest --mlirpipe-json) into OUT; the kind follows OUT's "
        "suffix (.xml or .json). A test found in two reports is an error (shards overlap).",
    )
    mg.add_argument("output", metavar="OUT", help="the merged report to write (.xml or .json)")
    mg.add_argument("inputs", nargs="+", metavar="REPORT", help="the shards' reports")
    mg.set_defaults(body=merge_command)


def merge_command(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    kind = Path(args.output).suffix
    if kind not in (".xml", ".json"):
        raise UsageError(
            Problem(f"cannot tell the kind of {args.output}", hint="name it *.xml or *.json")
        )
    if os.path.exists(args.output):  # False for a name too long: the write says so
        raise UsageError(
            Problem(
                f"{args.output} exists: merge writes a new report and never overwrites one "
                "(its first argument is where the merged report goes)",
                hint=f"name a new file first: mlirpipe merge merged{kind} {' '.join(args.inputs)}",
            )
        )
    folders = [p for p in args.inputs if os.path.isdir(p)]
    missing = [p for p in args.inputs if not os.path.exists(p)]
    wrong = [p for p in args.inputs if Path(p).suffix != kind and p not in folders]
    problems = [Problem(f"no such report: {p}") for p in missing]
    problems += [Problem(f"{p} is a folder, not a report") for p in folders]
    problems += [Problem(f"{p} is not a {kind} report like {args.output}") for p in wrong]
    if problems:
        raise UsageError(problems)
    if kind == ".xml":
        text, count = merge_junit([Path(p) for p in args.inputs])
    else:
        text, count = merge_json([Path(p) for p in args.inputs])
    try:
        write_atomic(args.output, text, make_parents=True)
    except OSError as exc:  # never name the temporary file the report is written to first
        why = _file_in_the_way(Path(args.output)) or exc.strerror
        raise UsageError(Problem(f"cannot write {args.output}: {why}")) from None
    tests, reports = _plural(count, "test"), _plural(len(args.inputs), "report")
    stdout.write(f"mlirpipe merge: {tests} of {reports} in {args.output}\n")
    return 0


def merge_junit(paths: list[Path]) -> tuple[str, int]:
    """One <testsuites> document: each suite name once, its test cases and counts summed
    over the shards (time too: CPU seconds, not the wall time of parallel shards)."""
    merged: dict[str, ET.Element] = {}
    seen: dict[tuple[str, str], Path] = {}
    for path in paths:
        for suite in _suites(path):
            into = merged.setdefault(
                suite.get("name", ""), ET.Element("testsuite", name=suite.get("name", ""))
            )
            for case in suite.iter("testcase"):
                key = (case.get("classname", ""), case.get("name", ""))
                _no_overlap(key, path, seen)
                into.append(case)
            _add_counts(into, suite)
    root = ET.Element("testsuites")
    root.extend(merged.values())
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n", len(seen)


def _file_in_the_way(path: Path) -> str | None:
    """'F is a file, not a folder' when a folder of `path` that exists is a file."""
    for folder in path.absolute().parents:
        if folder.exists():
            return None if folder.is_dir() else f"{folder} is a file, not a folder"
    return None


def _suites(path: Path) -> list[ET.Element]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise UsageError(Problem(f"{path} is not junit XML: {exc}")) from None
    if root.tag == "testsuite":
        return [root]
    if root.tag != "testsuites":
        raise UsageError(Problem(f"{path} is not junit XML: its root is <{root.tag}>"))
    return list(root.iter("testsuite"))


def _add_counts(into: ET.Element, suite: ET.Element) -> None:
    for key in _COUNTS:
        into.set(key, str(int(into.get(key, "0")) + int(suite.get(key, "0"))))
    total = float(into.get("time", "0")) + float(suite.get("time", "0"))
    into.set("time", f"{total:.3f}")


def _no_overlap(key: Any, path: Path, seen: dict) -> None:
    if key in seen:
        name = "::".join(str(k) for k in key if k) if isinstance(key, tuple) else key
        raise UsageError(
            Problem(
                f"{name} is in both {seen[key]} and {path}",
                hint="the shards overlap: give each machine its own --mlirpipe-shard K/N",
            )
        )
    seen[key] = path


def merge_json(paths: list[Path]) -> tuple[str, int]:
    """One timing report: the shards' file tests and execution outcomes together."""
    files: dict[str, Any] = {}
    results: list[Any] = []
    seen: dict[str, Path] = {}
    machine = None
    for path in paths:
        data = read_report(path)
        machine = machine or data.get("machine")
        for nodeid, entry in data.get("files", {}).items():
            _no_overlap(nodeid, path, seen)
            files[nodeid] = entry
        results += data.get("results", [])
    merged = {
        "format": JSON_FORMAT,
        "machine": machine,
        "shards": len(paths),
        "files": files,
        "results": results,
    }
    return json.dumps(merged, indent=1) + "\n", len(files) + len(results)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
