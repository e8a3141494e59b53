"""What the command-line tools share: argument parsing that raises, input and output, exit codes."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from ..atomic import write_atomic
from ..errors import MlirpipeError, Problem, UsageError
from ..model import Location

# Trailing blanks only: `\s*` would also eat the blank lines after the marker, and with them
# the line numbers of the next chunk.
SPLIT_MARKER = re.compile(r"^// -----[^\S\n]*$", re.MULTILINE)


class _HelpExit(Exception):
    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status
        self.text = text


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting, so tools can run in-process."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(Problem(message, hint=f"see `{self.prog} --help`"))

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _HelpExit(status, message or "")

    def print_help(self, file: TextIO | None = None) -> None:
        raise _HelpExit(0, self.format_help())


def add_stage_range_options(parser: argparse.ArgumentParser) -> None:
    """--stop-after / --start-after, shared by mlirpipe-opt and `mlirpipe stages`."""
    parser.add_argument("--stop-after", metavar="STAGE", help="stop after this stage of --pipeline")
    parser.add_argument(
        "--start-after",
        metavar="STAGE",
        help="take the input as the IR after this stage, run the stages after it",
    )


def read_input(path: str, stdin: TextIO) -> tuple[str, str]:
    """(text, name for diagnostics) of FILE or '-' (stdin)."""
    if path == "-":
        data = stdin.read()
        return (data if isinstance(data, str) else data.decode("utf-8")), "<stdin>"
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(
            Problem(
                f"cannot read input file: {exc.strerror}",
                Location(path),
                "check the path, or pass '-' to read standard input",
            )
        ) from None
    try:
        return raw.decode("utf-8"), path
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(
            Problem(
                f"input is not UTF-8 text (byte 0x{raw[exc.start]:02x})",
                Location(path, line, col),
                "MLIR files are UTF-8 text; a bytecode file must be converted first",
            )
        ) from None


def write_output(path: str | None, text: str, stdout: TextIO) -> None:
    """Print to stdout, or replace the file `path` whole (never a half-written file)."""
    if path in (None, "-"):
        stdout.write(text)
        return
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(Problem(f"cannot write output: {exc.strerror}", Location(path))) from None


def run_tool(
    body,
    parser: ArgumentParser,
    argv: Sequence[str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Parse `argv` and run `body(args, stdin, stdout, stderr)`; our errors become messages."""
    try:
        args = parser.parse_args(list(argv))
        return body(args, stdin, stdout, stderr)
    except _HelpExit as exc:
        (stdout if exc.status == 0 else stderr).write(exc.text)
        return exc.status
    except UsageError as exc:
        stderr.write(f"{parser.prog}: {exc.format()}\n")
        return 2
    except MlirpipeError as exc:
        stderr.write(exc.format() + "\n")
        return 1


def console_main(run) -> NoReturn:
    sys.exit(run(sys.argv[1:], sys.stdin, sys.stdout, sys.stderr))


def split_input(text: str) -> list[str]:
    """Chunks at '// -----' lines, each padded with newlines so line numbers stay the file's."""
    chunks = []
    line = 0
    for part in SPLIT_MARKER.split(text):
        chunks.append("\n" * line + part)
        line += part.count("\n")
    return chunks
