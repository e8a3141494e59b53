"""`-verify-diagnostics`: check emitted diagnostics against `expected-*` lines, as mlir-opt does."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..model import Diagnostic, Location

# mlir-opt's form of an expectation (SourceMgrDiagnosticVerifierHandler): a line that does
# not match it whole (`expected-error@ +1 {{x}}`, text after the `}}`) is no expectation.
EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *"
    r"\{\{(.*)\}\}$"
)
# What llvm::StringRef::rtrim strips.
_BLANKS = " \t\n\v\f\r"
MODES = ("all", "only-expected")
# The note MLIR adds to an op's diagnostic when it prints the op on diagnostics, which
# mlir-opt turns off under -verify-diagnostics (the bindings cannot).
OP_NOTE = "see current operation: "


@dataclass(slots=True)
class Expected:
    """One `expected-KIND` line: where it is, the line it applies to (None for @unknown)."""

    kind: str
    line: int | None
    text: str
    where: Location  # the `expected-` of the line itself, for messages about it
    pattern: re.Pattern[str] | None = None  # for expected-KIND-re
    matched: bool = False

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


@dataclass(slots=True)
class DiagnosticVerifier:
    """The expectations of one input file and the diagnostics seen so far; `report` collects
    the errors in mlir-opt's words, each with the source line and a caret under it."""

    source: str
    name: str
    only_expected: bool = False
    expected: list[Expected] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    failed: bool = False

    def __post_init__(self) -> None:
        self.expected = self._scan()

    def _scan(self) -> list[Expected]:
        """The file's expectations, each bound to its line (mlir-opt's computeExpectedDiags)."""
        found: list[Expected] = []
        lines = self.source.split("\n")
        last_plain = 0  # 0-based index of the last line that is no expectation
        below: list[Expected] = []
        for index, raw in enumerate(lines):
            m = EXPECTED.search(raw.rstrip(_BLANKS))
            if m is None:
                for e in below:
                    e.line = index + 1
                below.clear()
                last_plain = index
                continue
            where = Location(self.name, index + 1, m.start() + 1)
            record = Expected(m.group(1), index + 1, m.group(5), where)
            if m.group(2) and not self._compile(record):
                continue
            designator = m.group(4) or ""
            if designator and designator[0] in "+-":
                step = int(designator[1:])
                record.line = index + 1 + (step if designator[0] == "+" else -step)
            elif designator == "unknown":
                record.line = None
            elif designator == "above":
                record.line = last_plain + 1
            elif designator == "below":
                record.line = len(lines)  # where one left dangling at the end applies
                below.append(record)
            found.append(record)
        return found

    def _compile(self, record: Expected) -> bool:
        """Give an expected-KIND-re its pattern: the text is literal but for `{{regex}}` parts."""
        parts: list[str] = []
        rest = record.text
        while rest:
            start = rest.find("{{")
            if start < 0:
                parts.append(re.escape(rest))
                break
            parts.append(re.escape(rest[:start]))
            rest = rest[start + 2 :]
            end = rest.find("}}")
            if end < 0:
                return self._bad(record, "found start of regex with no end '}}'")
            try:
                re.compile(rest[:end])
            except re.error as exc:
                return self._bad(record, f"invalid regex: {exc}")
            parts.append(f"({rest[:end]})")
            rest = rest[end + 2 :]
        record.pattern = re.compile("".join(parts))
        return True

    def _bad(self, record: Expected, message: str) -> bool:
        self._error(record.where, message, len(record.text))
        return False

    def process(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Check diagnostics as they are emitted; their notes are checked one by one too."""
        for diag in diagnostics:
            self._process_one(diag)
            self.process(n for n in diag.notes if not n.message.startswith(OP_NOTE))

    def _process_one(self, diag: Diagnostic) -> None:
        loc = diag.location
        if loc is not None and loc.path != self.name:
            candidates: list[Expected] = []  # expectations are read from the input file only
        else:
            candidates = [e for e in self.expected if (e.line is None) == (loc is None)]
        near_miss = None
        for e in candidates:
            if loc is not None and e.line != loc.line:
                continue
            if e.matches(diag.message):
                if e.kind == diag.severity:
                    e.matched = True
                    return
                near_miss = e
        if self.only_expected:
            return
        if near_miss is not None:
            self._error(
                near_miss.where,
                f"'{diag.severity}' diagnostic emitted when expecting a '{near_miss.kind}'",
            )
        else:
            self._error(loc, f"unexpected {diag.severity}: {diag.message}")

    def finish(self) -> bool:
        """Report every expectation no diagnostic met; True when the file verified."""
        for e in sorted(self.expected, key=lambda e: e.line is None):
            if not e.matched:
                message = f'expected {e.kind} "{e.text}" was not produced'
                self._error(e.where if e.line is not None else None, message, len(e.text))
        return not self.failed

    def _error(self, where: Location | None, message: str, width: int = 0) -> None:
        """An error in llvm::SourceMgr's form: the input line it is on, a caret and a range."""
        self.failed = True
        if where is None:
            self.report.append(f"<unknown>:0: error: {message}")
            return
        text = f"{where.path}:{where.line}:{where.col}: error: {message}"
        lines = self.source.split("\n")
        if where.path == self.name and 0 < where.line <= len(lines):
            line = lines[where.line - 1].rstrip("\r")
            column = len(line[: max(where.col - 1, 0)].expandtabs(8))
            caret = " " * column + "^" + "~" * max(width - 1, 0)
            text += f"\n{line.expandtabs(8)}\n{caret}"
        self.report.append(text)
