"""`filecheck` as RUN lines call it: LLVM FileCheck or the Python port, with located errors."""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from .common import console_main
from .filecheck_env import ENGINE_ENV, LLVM_ENV

# Which FileCheck runs `filecheck`/`FileCheck` RUN commands, set by the suite's configuration
# (mlirpipe_filecheck, the lit param of the same name) in the RUN lines' environment.
ENGINES = ("auto", "llvm", "python", "both")
DISAGREE = "filecheck: warning: LLVM FileCheck and the Python port disagree"
# Where `both` appends its disagreement reports (JSON lines: argv, report) when a test runner
# set it: not the command's stderr, which a RUN line may pipe on (`2>&1 | ...`).
NOTES_ENV = "MLIRPIPE_FILECHECK_NOTES"
# Where each run appends what it was given to check, when a test runner set it (lit --param
# mlirpipe_repeat=N compares them between runs): a record each, `RECORD_HEAD <arguments>
# <bytes>` and a newline, each argument ended by a NUL byte, then the input's bytes. The shims
# of filetests/shim write `RECORD_HEAD <arguments> @<path>`: the input is in that file.
INPUTS_ENV = "MLIRPIPE_FILECHECK_INPUTS"
RECORD_HEAD = b"mlirpipe-filecheck-input"


def run(argv: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Check `argv` (FileCheck's own command line, without the program name) with the engine
    `$MLIRPIPE_FILECHECK` names: auto (LLVM FileCheck when one is found, else the Python
    port), llvm, python, or both (LLVM's verdict, with a warning when the port's differs)."""
    inputs = os.environ.get(INPUTS_ENV)
    if inputs:
        data = _read_all(stdin)
        with open(inputs, "ab") as f:
            f.write(input_record(argv, data))
        stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    engine = os.environ.get(ENGINE_ENV) or "auto"
    if engine not in ENGINES:
        stderr.write(
            f"filecheck: error: ${ENGINE_ENV} is '{engine}'; use one of {', '.join(ENGINES)}\n"
        )
        return 2
    llvm = os.environ.get(LLVM_ENV) or find_llvm_filecheck()
    if engine == "python" or (engine == "auto" and not llvm):
        return run_python_port(argv, stdin, stdout, stderr)
    if not llvm:
        stderr.write(
            f"filecheck: error: mlirpipe_filecheck is '{engine}' but no LLVM FileCheck was "
            "found (looked on PATH and in /usr/lib/llvm-*/bin)\n  hint: install it "
            "(Debian: apt-get install llvm-22-tools), name it with mlirpipe_tools = "
            "FileCheck=/path/to/FileCheck, or use mlirpipe_filecheck = python\n"
        )
        return 2
    data = _read_all(stdin)
    status, out, err = _run_llvm(llvm, argv, data)
    if engine == "both":
        port_out, port_err = io.StringIO(), io.StringIO()
        port_in = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        port_status = run_python_port(argv, port_in, port_out, port_err)
        if (port_status == 0) != (status == 0):
            report = (
                f"{DISAGREE}: LLVM exit {status}, Python port exit {port_status}\n"
                f"--- LLVM FileCheck ({llvm}) ---\n{err}"
                f"--- Python port ---\n{port_out.getvalue()}{port_err.getvalue()}"
            )
            err += _note_disagreement(argv, report)
    stdout.write(out)
    stderr.write(err)
    return status


def input_record(argv: Sequence[str], data: bytes) -> bytes:
    """One record of what a FileCheck was given (see INPUTS_ENV)."""
    args = b"".join(os.fsencode(a) + b"\0" for a in argv)
    return b"%s %d %d\n%s%s" % (RECORD_HEAD, len(argv), len(data), args, data)


def read_input_records(data: bytes) -> list[tuple[list[str], bytes]]:
    """The (arguments, input) records `data` holds, in order (an input kept in a file of its
    own is read, and the file removed); a record cut short (a FileCheck killed while writing
    it) ends the list."""
    found = []
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        head = data[at:end].split(b" ", 2) if end >= 0 else []
        if len(head) != 3 or head[0] != RECORD_HEAD or not head[1].isdigit():
            break
        count, size = int(head[1]), head[2]
        at = end + 1
        args = data[at:].split(b"\0", count)[:count]
        if len(args) < count:
            break
        at += sum(len(a) + 1 for a in args)
        if size.startswith(b"@"):
            given = Path(os.fsdecode(size[1:]))
            try:
                text = given.read_bytes()
            except OSError:
                break
            given.unlink(missing_ok=True)
        elif size.isdigit() and at + int(size) <= len(data):
            text = data[at : at + int(size)]
            at += int(size)
        else:
            break
        found.append(([os.fsdecode(a) for a in args], text))
    return found


def _note_disagreement(argv: list[str], report: str) -> str:
    """Append `report` to the runner's notes file ($MLIRPIPE_FILECHECK_NOTES) and return "";
    without one (FileCheck run by hand), return it for stderr."""
    notes = os.environ.get(NOTES_ENV)
    if not notes:
        return report
    with open(notes, "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": argv, "report": report}) + "\n")
    return ""


def read_disagreements(notes: str) -> list[dict[str, object]]:
    """The reports `both` appended to the notes file `notes` (none when it is missing)."""
    try:
        text = Path(notes).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _read_all(stdin: TextIO) -> bytes:
    buffer = getattr(stdin, "buffer", None)
    if buffer is not None:
        return buffer.read()
    return stdin.read().encode("utf-8")


def _run_llvm(llvm: str, argv: list[str], data: bytes) -> tuple[int, str, str]:
    ran = subprocess.run([llvm, *argv], input=data, capture_output=True, check=False)
    decode = functools.partial(bytes.decode, encoding="utf-8", errors="replace")
    return ran.returncode, decode(ran.stdout), decode(ran.stderr)


def find_llvm_filecheck(dirs: Sequence[str] = ()) -> str | None:
    """An LLVM `FileCheck` binary: in `dirs`, on PATH (a native program, not a same-named
    script), then the newest `/usr/lib/llvm-NN/bin/FileCheck`; an absolute path."""
    return _find_llvm_filecheck(tuple(dirs), os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _find_llvm_filecheck(dirs: tuple[str, ...], path_env: str) -> str | None:
    for folder in [*dirs, *path_env.split(os.pathsep)]:
        candidate = (Path(folder or ".") / "FileCheck").absolute()
        if is_native_program(candidate):
            return str(candidate)
    versioned = sorted(
        Path("/usr/lib").glob("llvm-*/bin/FileCheck"),
        key=lambda p: _version(p.parent.parent.name),
        reverse=True,
    )
    return next((str(p) for p in versioned if is_native_program(p)), None)


def _version(name: str) -> int:
    digits = name.rpartition("-")[2]
    return int(digits) if digits.isdigit() else 0


def is_native_program(path: Path) -> bool:
    """Whether `path` is an executable ELF or Mach-O program (not a script)."""
    try:
        with path.open("rb") as f:
            return os.access(path, os.X_OK) and f.read(4) in (b"\x7fELF", b"\xcf\xfa\xed\xfe")
    except OSError:
        return False


def run_python_port(argv: list[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The Python FileCheck on `argv` with the given streams as sys.std*; its exit status.
    Positions it prints are computed from the offset it stopped at (its own line count can
    drift far on long inputs)."""
    from filecheck.finput import FInput
    from filecheck.main import main as filecheck_main

    saved = sys.stdin, sys.stdout, sys.stderr
    saved_print_line = FInput.print_line
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    FInput.print_line = _print_line  # type: ignore[method-assign]
    undo: Callable[[], None] = lambda: None  # noqa: E731
    try:
        undo = _not_ranges_end_where_the_next_match_begins()
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
        FInput.print_line = saved_print_line  # type: ignore[method-assign]
        undo()
    return 0


def _not_ranges_end_where_the_next_match_begins() -> Callable[[], None]:
    """LLVM's rule for CHECK-NOT, which the port (1.0.6) gets wrong: the text a CHECK-NOT must
    not match ends where the next positive directive's match *begins*; the port searched up to
    where it ends, so `CHECK-NOT: bar` then `CHECK: foo bar` failed on the `bar` of the very
    match that ends the range. The port's FInput.find/match record where each match begins,
    and its Matcher checks pending CHECK-NOTs up to there. Returns what undoes it."""
    from filecheck.finput import FInput, InputRange
    from filecheck.matcher import Matcher

    find, match = FInput.find, FInput.match
    pre_check, post_check = Matcher._pre_check, Matcher._post_check

    def recording(method):
        def record(self, *args, **kwargs):
            found = method(self, *args, **kwargs)
            if found is not None and getattr(self, "mlirpipe_match_start", None) is None:
                self.mlirpipe_match_start = found.start()  # the directive's first match
            return found

        return record

    def fresh(self, op) -> None:
        self.file.mlirpipe_match_start = None
        pre_check(self, op)

    def checked_up_to_the_match(self, op) -> None:
        pending = self.ctx.negative_matches_start
        begins = getattr(self.file, "mlirpipe_match_start", None)
        if (
            op.name in _POSITIVE
            and pending is not None
            and begins is not None
            and pending <= begins
            and not self.file.is_discontigous()
        ):
            for check in self.ctx.negative_matches_stack:
                self.check_not(check, InputRange(pending, begins))
            self.ctx.negative_matches_start = None
            self.ctx.negative_matches_stack = []
        post_check(self, op)

    FInput.find = recording(find)  # type: ignore[method-assign]
    FInput.match = recording(match)  # type: ignore[method-assign]
    Matcher._pre_check = fresh  # type: ignore[method-assign]
    Matcher._post_check = checked_up_to_the_match  # type: ignore[method-assign]

    def undo() -> None:
        FInput.find, FInput.match = find, match  # type: ignore[method-assign]
        Matcher._pre_check = pre_check  # type: ignore[method-assign]
        Matcher._post_check = post_check  # type: ignore[method-assign]

    return undo


# The directives whose match ends a CHECK-NOT's range here (the port handles the others).
_POSITIVE = frozenset({"CHECK", "NEXT", "SAME", "COUNT"})


def _print_line(self, pos_override: int | None = None, end_pos: int | None = None) -> str:
    """The port's `FInput.print_line` ("FILE:LINE:COL", the line, a caret) with LINE and COL
    counted from the offset rather than from the port's running line counter."""
    content = self.content
    pos = self.range.start if pos_override is None else pos_override
    if content.find("\n", pos) == pos:  # at a line's end: show the next line, as the port does
        pos += 1
    line = content.count("\n", 0, pos) + 1
    start = content.rfind("\n", 0, pos) + 1
    end = content.find("\n", pos)
    col = pos - start + 1
    width = max(1, (end_pos - pos) if end_pos is not None else 1)
    name = self.fname if self.fname != "-" else "<stdin>"
    text = content[start : end if end >= 0 else len(content)]
    return f"{name}:{line}:{col}\n{text}\n{' ' * (col - 1)}{'^' * width}"


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
    console_main(run, "filecheck")  # run as `python -m`, or through a shim


if __name__ == "__main__":
    main()
