"""`filecheck` as RUN lines call it: the Python FileCheck, with located errors, not tracebacks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn, TextIO

from .common import console_main


def run(argv: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run the Python FileCheck on `argv` (its own command line, without the program name) with
    the given streams in place of sys.std*; its exit status."""
    from filecheck.main import main as filecheck_main

    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        filecheck_main(["filecheck", *argv])
    except SystemExit as exc:
        return _exit_status(exc.code, stderr)
    except UnicodeDecodeError as exc:
        stderr.write(_not_utf8(argv, exc) + "\n")
        return 2
    except RuntimeError as exc:  # the port's argument errors ("Unconsumed arguments: ...")
        stderr.write(f"filecheck: error: {exc}\n")
        return 2
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return 0


def _exit_status(code, stderr: TextIO) -> int:
    """What a Python process exiting with SystemExit(code) returns to its parent."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    stderr.write(f"{code}\n")
    return 1


def _not_utf8(argv: list[str], exc: UnicodeDecodeError) -> str:
    """'FILE:LINE:COL: error: ... is not UTF-8 text' for the check file or the input file that
    holds the bad byte (the input read from stdin when neither does)."""
    for role, path in (("check file", _check_file(argv)), ("input file", _input_file(argv))):
        if not path:
            continue
        try:
            data = Path(path).read_bytes()
            data.decode("utf-8")
        except OSError:
            continue
        except UnicodeDecodeError as bad:
            line = data[: bad.start].count(b"\n") + 1
            col = bad.start - (data.rfind(b"\n", 0, bad.start) + 1) + 1
            return (
                f"{path}:{line}:{col}: error: the {role} is not UTF-8 text "
                f"(byte 0x{data[bad.start]:02x}); FileCheck reads UTF-8: convert the file, or "
                "keep non-text bytes out of it"
            )
    byte = exc.object[exc.start] if exc.start < len(exc.object) else 0
    return (
        f"<stdin>: error: the input is not UTF-8 text (byte 0x{byte:02x}); FileCheck reads "
        "UTF-8: convert what the command before it prints"
    )


def _check_file(argv: list[str]) -> str | None:
    """The first argument that is not an option or an option's value."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            skip = "=" not in arg and arg.lstrip("-").replace("-", "_") in _VALUED
            continue
        return arg
    return None


def _input_file(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg.startswith("--input-file="):
            return arg.split("=", 1)[1]
        if arg in ("--input-file", "-input-file") and i + 1 < len(argv):
            return argv[i + 1]
    return None


# Options of the port that take a value (the next argument) when written without '='.
_VALUED = {
    "check_prefix",
    "check_prefixes",
    "comment_prefixes",
    "input_file",
    "implicit_check_not",
    "dump_input",
}


def main() -> NoReturn:
    console_main(run)


if __name__ == "__main__":
    main()
