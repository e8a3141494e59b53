"""What lit said about one RUN/CHECK file: its verdict, and each RUN line's commands as run."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from ..model import ResultCode


@dataclass(frozen=True, slots=True)
class CommandResult:
    """One command of a RUN line as the shell ran it (after substitutions)."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    stdin: str | None = None  # known when the command ran in-process


@dataclass(frozen=True, slots=True)
class RunStep:
    """One RUN line: its line number, the command after substitutions, what its commands did."""

    line: int | None
    command: str
    results: tuple[CommandResult, ...]

    @property
    def failed(self) -> bool:
        return any(r.exit_code != 0 for r in self.results)


@dataclass(frozen=True, slots=True)
class FileVerdict:
    """lit's verdict on one file: code name (PASS, FAIL, XFAIL, ...), its output, and the RUN
    lines as run (for reports)."""

    code: ResultCode  # a code's name is taken too
    output: str
    is_failure: bool
    elapsed: float | None = None
    steps: tuple[RunStep, ...] = ()
    crash: str = ""  # how the in-process run ended when it did not return (signal, status)
    repro: str = ""  # after a crash: the mlirpipe-opt command on the crashing stage's input
    in_process: int = 0  # pipelines run inside the process
    subprocesses: int = 0  # pipelines run as processes
    # FileCheck disagreements (mlirpipe_filecheck = both): (RUN line or 0, report)
    warnings: tuple[tuple[int, str], ...] = ()
    search_path: str = ""  # the PATH the suite's config gave its RUN lines, when it set one
    # a failing file: the folder lit ran its RUN lines in, and the variables the suite's config
    # gave them that this process's environment lacks or has otherwise (its reproduce line)
    cwd: str = ""
    environment: tuple[tuple[str, str], ...] = ()
    differs: str = ""  # --mlirpipe-repeat: the first output that differed between runs
    xfail_listed: bool = False  # lit's xfail list ($LIT_XFAIL, --xfail) expects it to fail
    # --mlirpipe-preload: Python commands forked (check: run both ways), those of this
    # interpreter run as processes all the same, and (check) those whose two runs differed
    preloaded: tuple[int, int, int] = (0, 0, 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", ResultCode(self.code))


_RUN_AT = re.compile(r"^# (?:RUN: at line (\d+)|.*)$")
# lit 17 marks a RUN line with a `:` command alone, and echoes no command text
_LIT17_RUN_AT = re.compile(r"^RUN: at line (\d+)$")


def steps_of(
    results, stdins: dict[int, str] | None = None, commands: dict[int, str] | None = None
) -> tuple[RunStep, ...]:
    """Group lit's ShellCommandResults (`@echo '# RUN: at line N'`, `@echo CMD`, then the
    command's own results; lit 17: `: 'RUN: at line N'`, then the command's results, the
    command itself from `commands`, the script's {line: command}) into RUN lines."""
    steps: list[RunStep] = []
    line: int | None = None
    command: str | None = None
    own: list[CommandResult] = []
    echoed = True  # lit 17 echoes no command: it is the script's, or told from the programs

    def flush() -> None:
        if not echoed:
            given = (commands or {}).get(line) if line else None
            told = " | ".join(shlex.join(r.args) for r in own)
            steps.append(RunStep(line, told if given is None else given, tuple(own)))
        elif command is not None:
            steps.append(RunStep(line, command, tuple(own)))

    for r in results or ():
        # lit's shell error on an operator (a Seq, not a command) has no arguments
        args = [str(a) for a in getattr(r.command, "args", ())]
        marked = _LIT17_RUN_AT.match(args[1]) if len(args) == 2 and args[0] == ":" else None
        if marked:
            flush()
            line, command, own, echoed = int(marked.group(1)), None, [], False
            continue
        if args and args[0] == "@echo":
            text = (r.stdout or "").rstrip("\n")
            m = _RUN_AT.match(text)
            if m and text.startswith("# "):
                flush()
                line = int(m.group(1)) if m.group(1) else None
                command, own, echoed = None, [], True
            elif command is None:
                command = text
            continue
        stdin = (stdins or {}).get(id(r))
        own.append(CommandResult(tuple(args), int(r.exitCode or 0), r.stdout, r.stderr, stdin))
    flush()
    return tuple(steps)


def locate_disagreements(reports, steps: tuple[RunStep, ...]) -> tuple[tuple[int, str], ...]:
    """Each FileCheck disagreement report ({"argv", "report"}) with the RUN line whose command
    ended with those arguments (0 when none did)."""
    located = []
    for found in reports:
        argv = tuple(found["argv"])
        line = next(
            (s.line for s in steps for r in s.results if _ends_with(r.args, argv) and s.line),
            0,
        )
        located.append((line, str(found["report"]).rstrip()))
    return tuple(located)


def _ends_with(args: tuple[str, ...], tail: tuple[str, ...]) -> bool:
    """Whether `args` (a command: program, or interpreter and module, then arguments) ends
    with `tail` after at least its program."""
    return 0 < len(tail) < len(args) and args[-len(tail) :] == tail


def failure_reason(verdict: FileVerdict) -> str:
    """One line saying why a file failed: lit's code, how a contained run ended (crash),
    then the first failing RUN line and the first error its commands printed."""
    parts = [str(verdict.code)]
    if verdict.differs:
        return f"{verdict.code}: {verdict.differs.splitlines()[0]}"
    if verdict.crash:
        parts.append(f"crashed ({verdict.crash})")
    failed = next((s for s in verdict.steps if s.failed), None)
    if failed is not None:
        where = f"RUN line {failed.line}" if failed.line else "a RUN line"
        parts.append(f"{where}: {_first_error(failed)}")
    elif not verdict.crash and verdict.output.strip():
        parts.append(verdict.output.strip().splitlines()[0])
    return ": ".join(parts)


_ERROR = re.compile(r"\berror: (.*\S)")


def _first_error(step: RunStep) -> str:
    """The first `error: ...` message of the step's failing command (without its location),
    else that command's name and exit status."""
    result = next(r for r in step.results if r.exit_code != 0)
    for text in (result.stderr, result.stdout):
        m = _ERROR.search(text or "")
        if m:
            return m.group(1)
    program = result.args[0].rsplit("/", 1)[-1] if result.args else "a command"
    return f"{program} exited with status {result.exit_code}"
