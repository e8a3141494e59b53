"""What the command-line tools share: argument parsing that raises, input and output, exit codes."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

from ..atomic import write_atomic
from ..errors import MissingExtra, MlirpipeError, Problem, UsageError, did_you_mean, missing_extra
from ..model import Location
from .whole_writes import whole_stdout

# Trailing blanks only: `\s*` would also eat the blank lines after the marker, and with them
# the line numbers of the next chunk.
SPLIT_MARKER = re.compile(r"^// -----[^\S\n]*$", re.MULTILINE)
PIPELINES_HINT = "give a folder of pipeline files (*.toml), or leave the flag out"


class _HelpExit(Exception):
    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status
        self.text = text


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting, so tools can run in-process.

    With `single_dash_long`, `-name[=value]` means `--name[=value]` for every long option, as
    LLVM's command-line library reads it (`-pass-pipeline=...`, `-split-input-file`)."""

    def __init__(self, *args, single_dash_long: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.single_dash_long = single_dash_long
        self._argv: list[str] = []

    def parse_known_args(self, args=None, namespace=None):
        if args is not None:
            args = self._long_spelling(list(args)) if self.single_dash_long else list(args)
            self._argv = args
        return super().parse_known_args(args, namespace)

    def _long_spelling(self, argv: list[str]) -> list[str]:
        """`-name...` as `--name...` where `--name` is an option (up to a `--` terminator)."""
        out: list[str] = []
        for i, arg in enumerate(argv):
            if arg == "--":
                return out + argv[i:]
            name = arg.split("=", 1)[0]
            single = len(name) > 2 and name[0] == "-" and name[1] != "-"
            out.append(f"-{arg}" if single and f"-{name}" in self._option_string_actions else arg)
        return out

    def _unknown_options(self) -> list[str]:
        """The arguments that look like options and name none (nor abbreviate a long one)."""
        known = self._option_string_actions
        argv = self._argv[: self._argv.index("--")] if "--" in self._argv else self._argv
        return [
            arg
            for arg in argv
            if arg.startswith("-")
            and len(arg) > 1
            and (name := arg.split("=", 1)[0]) not in known
            and not (name.startswith("--") and any(k.startswith(name) for k in known))
            and not (name[1] != "-" and name[:2] in known)  # -ofile: -o with its value
        ]

    def parse_args(self, args=None, namespace=None):
        """argparse's, but arguments no subcommand took are that subcommand's error (argparse
        gives them to the main parser: `mlirpipe: error:` for `mlirpipe list --bogus`)."""
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            prog = getattr(namespace, "prog", None) or self.prog  # set by each subcommand
            self._fail(f"unrecognized arguments: {' '.join(extras)}", prog)
        return namespace

    def error(self, message: str) -> NoReturn:
        hint = None
        unknown = self._unknown_options()
        if unknown and message.startswith(("one of the arguments", "the following arguments")):
            # argparse names the missing argument first; a misspelled option is likely the cause.
            message = f"unrecognized arguments: {' '.join(unknown)}"
            longs = [k for k in self._option_string_actions if k.startswith("--")]
            name = unknown[0].split("=", 1)[0]
            hint = did_you_mean(name if name.startswith("--") else f"-{name}", longs)
        self._fail(message, self.prog, hint)

    def _fail(self, message: str, prog: str, hint: str | None = None) -> NoReturn:
        error = UsageError(Problem(message, hint=hint or f"see `{prog} --help`"))
        error.prog = prog  # type: ignore[attr-defined]  # a subcommand's: `mlirpipe run`
        raise error

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _HelpExit(status, message or "")

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        raise _HelpExit(0, self.format_help())


def add_stage_range_options(parser: argparse.ArgumentParser) -> None:
    """--stop-after / --start-after, shared by mlirpipe-opt and `mlirpipe stages`."""
    parser.add_argument("--stop-after", metavar="STAGE", help="stop after this stage of --pipeline")
    parser.add_argument(
        "--start-after",
        metavar="STAGE",
        help="take the input as the IR after this stage, run the stages after it",
    )


def named_pipelines(pipeline_dirs, names: Sequence[str], flag: str = "--pipeline") -> list:
    """The pipelines a command-line flag names, from the catalog of `pipeline_dirs`; an unknown
    name, or a pipelines folder that does not exist, is a usage error (exit 2)."""
    from ..lowering.catalog import PIPELINES_PATH_ENV, catalog_for
    from ..lowering.catalog import pipeline_dirs as searched_dirs

    missing = [d for d in pipeline_dirs if not Path(d).is_dir()]
    problems = [
        Problem(f"--pipelines-dir {d}: no such folder", hint=PIPELINES_HINT) for d in missing
    ]
    problems += [
        Problem(
            f"${PIPELINES_PATH_ENV} names {d}: no such folder",
            hint=f"give folders of pipeline files (*.toml), separated by '{os.pathsep}', "
            "or unset it",
        )
        for d in searched_dirs([])
        if not Path(d).is_dir()
    ]
    if problems:
        raise UsageError(problems)
    catalog = catalog_for(pipeline_dirs)
    unknown = [n for n in names if n not in catalog]
    if unknown:
        known = f"known pipelines: {', '.join(catalog.names()) or '(none)'}"
        raise UsageError(
            [
                Problem(
                    f"{flag}: unknown pipeline '{n}'",
                    hint=" ".join(filter(None, [did_you_mean(n, catalog.names()), known])),
                )
                for n in unknown
            ]
        )
    return [catalog.get(n) for n in names]


def torch_mlir_version() -> str:
    """', torch-mlir VERSION' of the installed bindings, or nothing."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f", torch-mlir {version('torch-mlir')}"
    except PackageNotFoundError:
        return ""


def add_version_option(parser: argparse.ArgumentParser, extra: str = "") -> None:
    """--version: the installed pytest-mlirpipe's version (importlib.metadata), and `extra`."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("pytest-mlirpipe")
    except PackageNotFoundError:  # run from a checkout that is not installed
        own = "(not installed)"
    text = f"{parser.prog} {own}{extra}\n"

    class _Version(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            raise _HelpExit(0, text)  # to the tool's own stdout, not sys.stdout

    parser.add_argument("--version", nargs=0, action=_Version, help="print the version and exit")


def read_input(path: str, stdin: TextIO) -> tuple[str, str]:
    """(text, name for diagnostics) of FILE or '-' (stdin)."""
    if path == "-":
        buffer = getattr(stdin, "buffer", None)  # the bytes, so bad text is located as a file's
        if buffer is None:
            return stdin.read(), "<stdin>"
        raw, name = buffer.read(), "<stdin>"
    else:
        try:
            raw, name = Path(path).read_bytes(), path
        except OSError as exc:
            raise UsageError(
                Problem(
                    f"cannot read input file: {exc.strerror}",
                    Location(path),
                    "check the path, or pass '-' to read standard input",
                )
            ) from None
    try:
        return raw.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(
            Problem(
                f"input is not UTF-8 text (byte 0x{raw[exc.start]:02x})",
                Location(name, line, col),
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
    prog = parser.prog
    try:
        args = parser.parse_args(list(argv))
        prog = getattr(args, "prog", prog)  # a subcommand's name, argparse's convention
        return body(args, stdin, stdout, stderr)
    except _HelpExit as exc:
        (stdout if exc.status == 0 else stderr).write(exc.text)
        return exc.status
    except UsageError as exc:
        stderr.write(f"{getattr(exc, 'prog', prog)}: {exc.format()}\n")
        return 2
    except MissingExtra as exc:
        stderr.write(f"{prog}: {exc.format()}\n")
        return 1
    except MlirpipeError as exc:
        stderr.write(exc.format() + "\n")
        return 1
    except ModuleNotFoundError as exc:  # a module of an extra that is not installed
        missing = missing_extra(exc)
        if missing is None:
            raise
        stderr.write(f"{prog}: {missing.format()}\n")
        return 1
    except OSError as exc:  # a path the system refuses where no check of ours looked first
        if exc.filename is None:
            raise
        name = exc.filename if exc.filename2 is None else exc.filename2
        stderr.write(f"{prog}: {name}: error: {exc.strerror}\n")
        return 2 if exc.errno in PATH_ERRNOS else 1


# What the system says of a path given wrong (exit 2, as any other bad argument); the other
# errors of a file (a full disk, ...) are work that failed (exit 1).
PATH_ERRNOS = frozenset(
    {errno.ENAMETOOLONG, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.ELOOP}
)

# Exit statuses of a tool ended by a signal, as a shell reports them: 128 + the signal's number.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
EXIT_INTERRUPTED = 128 + signal.SIGINT


def console_main(run, name: str) -> NoReturn:
    """Run the tool `name` as a console script. A reader that closed the pipe (`mlirpipe
    passes | head`) ends it quietly with status 141, as SIGPIPE ends a Unix tool; Ctrl-C ends
    it with the one line `NAME: interrupted` and status 130 (contained work in forked children
    ends with it)."""
    whole_stdout()
    try:
        status = run(sys.argv[1:], sys.stdin, sys.stdout, sys.stderr)
        sys.stdout.flush()  # a pipe closed after the last write breaks here
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(EXIT_BROKEN_PIPE)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            sys.stderr.write(f"{name}: interrupted\n")
            sys.stderr.flush()
        _quiet_stdout()
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(status)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the flush at interpreter exit cannot fail again and print
    "Exception ignored" (the recipe of the Python docs' note on SIGPIPE)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def split_input(text: str) -> list[str]:
    """Chunks at '// -----' lines, each padded with newlines so line numbers stay the file's."""
    chunks = []
    line = 0
    for part in SPLIT_MARKER.split(text):
        chunks.append("\n" * line + part)
        line += part.count("\n")
    return chunks
