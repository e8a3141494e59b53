"""A file's MLIRPIPE-EXPECT and MLIRPIPE-TIMEOUT lines: an expected crash or hang, and the
file's own time limit. lit ignores lines it does not know, so pytest and lit read them here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import close_matches, did_you_mean
from ..model import ResultCode
from .lit_compat import FAILED_STATUS

KINDS = ("crash", "timeout")
_KEYWORD = "MLIRPIPE-"
_LINE = re.compile(r"(?P<key>[A-Z]+)\s*:(?P<value>.*)$")  # what follows the keyword


@dataclass(frozen=True, slots=True)
class Expectations:
    """What the file's MLIRPIPE-* lines say, with their line numbers and any problems."""

    kind: str | None = None  # "crash" or "timeout": how the file is expected to end
    kind_line: int = 0
    timeout: float | None = None  # seconds, overriding mlirpipe_timeout / lit --timeout
    timeout_line: int = 0
    problems: tuple[str, ...] = ()  # located messages; the file is then UNRESOLVED


def read_expectations(path: str | Path) -> Expectations:
    """Parse the MLIRPIPE-EXPECT / MLIRPIPE-TIMEOUT lines of `path` (bad lines -> problems),
    found by lit's own keyword scanner, as lit finds RUN lines."""
    import lit.TestRunner as TestRunner

    try:
        if b"MLIRPIPE-" not in Path(path).read_bytes():
            return Expectations()
        lines = list(TestRunner.parseIntegratedTestScriptCommands(str(path), [_KEYWORD]))
    except OSError:
        return Expectations()
    except UnicodeDecodeError as exc:
        return Expectations(
            problems=(
                f"{path}: error: a {_KEYWORD} line is not UTF-8 text (byte "
                f"0x{exc.object[exc.start]:02x})\n  hint: write these lines in plain ASCII",
            )
        )
    found = _Found()
    for n, _, rest in lines:
        m = _LINE.match(rest)
        if m is None:
            continue
        key, value = m.group("key"), m.group("value").strip()
        where = f"{path}:{n}: error:"
        read = _READERS.get(key)
        if read is not None:
            read(found, value, n, where)
        else:
            found.problems.append(_unknown_directive(key, where))
    if found.kind == "timeout" and found.timeout is None:
        found.problems.append(
            f"{path}:{found.kind_line}: error: MLIRPIPE-EXPECT: timeout needs a MLIRPIPE-TIMEOUT "
            "line\n  hint: add e.g. MLIRPIPE-TIMEOUT: 2 so the expected hang ends soon, in both "
            "runners"
        )
    return Expectations(
        found.kind, found.kind_line, found.timeout, found.timeout_line, tuple(found.problems)
    )


@dataclass(slots=True)
class _Found:
    """The MLIRPIPE-* lines read so far."""

    kind: str | None = None
    kind_line: int = 0
    timeout: float | None = None
    timeout_line: int = 0
    problems: list[str] = field(default_factory=list)


def _read_expect(found: _Found, value: str, n: int, where: str) -> None:
    if found.kind is not None:
        found.problems.append(
            f"{where} a second MLIRPIPE-EXPECT line (the first is line "
            f"{found.kind_line})\n  hint: keep one"
        )
    elif value not in KINDS:
        hint = did_you_mean(value, KINDS) or "write MLIRPIPE-EXPECT: crash or timeout"
        found.problems.append(
            f"{where} MLIRPIPE-EXPECT takes 'crash' or 'timeout', got '{value}'\n"
            f"  hint: {hint}; for an expected wrong answer use XFAIL: *"
        )
    else:
        found.kind, found.kind_line = value, n


def _read_timeout(found: _Found, value: str, n: int, where: str) -> None:
    try:
        seconds = float(value)
        if not seconds > 0 or seconds == float("inf"):
            raise ValueError
    except ValueError:
        found.problems.append(
            f"{where} MLIRPIPE-TIMEOUT takes a number of seconds > 0, got '{value}'\n"
            "  hint: e.g. MLIRPIPE-TIMEOUT: 30"
        )
        return
    if found.timeout is not None:
        found.problems.append(
            f"{where} a second MLIRPIPE-TIMEOUT line (the first is line "
            f"{found.timeout_line})\n  hint: keep one"
        )
    else:
        found.timeout, found.timeout_line = seconds, n


_READERS = {"EXPECT": _read_expect, "TIMEOUT": _read_timeout}


def _unknown_directive(key: str, where: str) -> str:
    close = close_matches(key, tuple(_READERS))
    hint = f"did you mean 'MLIRPIPE-{close[0]}'?" if close else None
    return (
        f"{where} unknown directive 'MLIRPIPE-{key}'\n"
        f"  hint: {hint or 'the known ones are MLIRPIPE-EXPECT and MLIRPIPE-TIMEOUT'}"
    )


def signal_of(output: str) -> int | None:
    """The signal that killed a command, from lit's output of the script (None if none)."""
    for m in FAILED_STATUS.finditer(output):
        status = int(m.group("status"))
        if status < 0:
            return -status
    return None


def judge(
    code: ResultCode, output: str, expected: Expectations, path: str
) -> tuple[ResultCode, str]:
    """(code, output) once the file's expectation is applied to lit's verdict."""
    if expected.kind is None or expected.problems:  # malformed lines: UNRESOLVED elsewhere
        return code, output
    where = f"{path}:{expected.kind_line}"
    ended = code in (ResultCode.PASS, ResultCode.FAIL)  # on its own, in time
    if expected.kind == "crash":
        sig = signal_of(output)
        if code is ResultCode.FAIL and sig is not None:
            return ResultCode.XFAIL, (
                f"crashed as MLIRPIPE-EXPECT: crash expects ({_name(sig)})\n{output}"
            )
        if ended:
            how = "the file passed" if code is ResultCode.PASS else "it failed without a crash"
            return ResultCode.FAIL, (
                f"{where}: error: MLIRPIPE-EXPECT: crash, but no command was killed by a signal "
                f"({how})\n  hint: a crash is a signal (abort, segfault); for a wrong answer "
                f"or an error exit use XFAIL: *\n{output}"
            )
        return code, output
    if code is ResultCode.TIMEOUT:
        return ResultCode.XFAIL, (
            f"timed out after {expected.timeout:g} s as MLIRPIPE-EXPECT: timeout expects\n{output}"
        )
    if ended:
        how = "passed" if code is ResultCode.PASS else "failed"
        return ResultCode.FAIL, (
            f"{where}: error: MLIRPIPE-EXPECT: timeout, but the file ended within "
            f"{expected.timeout:g} s ({how})\n{output}"
        )
    return code, output


def _name(sig: int) -> str:
    import signal

    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
