"""The failure report of a RUN/CHECK file: which RUN line, which stage, the FileCheck
diagnostic with the input around it, and a command that reproduces it outside pytest."""

from __future__ import annotations

import itertools
import re
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path

from ..model import ResultCode
from ..tools.filecheck import ENGINE_ENV, LLVM_ENV
from .config import filecheck_environment, read_settings, tool_commands, tool_pattern
from .lit_compat import external_run, shell_parse_error
from .verdict import FileVerdict, RunStep

MALFORMED = "the test file is malformed"
HEADS = {
    ResultCode.XPASS: "XPASS: the file passed but its XFAIL line expects a failure",
    ResultCode.UNRESOLVED: f"UNRESOLVED: {MALFORMED}",
    ResultCode.TIMEOUT: "TIMEOUT: the test took too long",
}
# A FAIL whose RUN lines all passed: the suite's own test format (a ShTest subclass) decided it.
BY_FORMAT = "FAIL: every RUN line passed; the suite's test format failed the file:"
# The XFAIL and XPASS of a file on lit's xfail list ($LIT_XFAIL, LIT_OPTS' --xfail).
LISTED_XFAIL = "XFAIL: failed as lit's xfail list (LIT_XFAIL) expects"
LISTED_XPASS = "XPASS: the file passed but lit's xfail list (LIT_XFAIL) expects a failure"
_POSITION = re.compile(r"Current position at (?P<name>.+?):(?P<line>\d+):(?P<col>\d+)")
_CONTEXT_LINES = 4
_NOT_FOUND = re.compile(r"'(?P<tool>[^']+)': command not found")


_FILECHECK = re.compile(f"{tool_pattern('FileCheck')}|{tool_pattern('filecheck')}")


def user_command(command: str, filechecks: Iterable[str] = ()) -> str:
    """The command with tool expansions turned back into the tool names users type; the
    in-process FileCheck's (one for both spellings) into `filechecks` in turn, as many as
    given (how the RUN line writes them), then `filecheck`."""
    tools = tool_commands()
    parts = command.split(tools["FileCheck"])
    names = iter(filechecks)
    command = parts[0] + "".join(next(names, "filecheck") + part for part in parts[1:])
    for tool, expansion in tools.items():
        command = command.replace(expansion, tool)
    return command


def written_filechecks(path: Path, line: int | None) -> list[str]:
    """How the RUN line at `line` of `path` (with its continuation lines) writes FileCheck:
    `FileCheck` or `filecheck`, in order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()[line - 1 :] if line else []
    except (OSError, UnicodeDecodeError):
        return []
    text = []
    for raw in lines:
        _, run, rest = raw.partition("RUN:")
        if not run:
            break
        text.append(rest.rstrip())
        if not rest.rstrip().endswith("\\"):
            break
    return _FILECHECK.findall(" ".join(text))


def filecheck_program(path: Path, engine: str = "") -> str:
    """The FileCheck the file's RUN lines ran in-process, as a command to type: LLVM's (its
    path) unless the engine (the run's `engine`, else the suite's) is the Python port's,
    `filecheck`, or none is found."""
    env = filecheck_environment(read_settings(path.resolve().parent))
    llvm = env.get(LLVM_ENV)
    return llvm if llvm and (engine or env[ENGINE_ENV]) != "python" else "filecheck"


def failed_step(verdict: FileVerdict) -> RunStep | None:
    """The RUN line that made the file fail: lit stops at the first failing one."""
    for step in verdict.steps:
        if step.failed:
            return step
    return verdict.steps[-1] if verdict.steps else None


_BAD_EXPRESSION = re.compile(
    r"expected: (?P<expected>.*)\nhave: (?P<have>.*)\nin expression: '(?P<expr>.*)'\n"
    r"in (?P<kw>[A-Z_-]+): directive on test line (?P<line>\d+)"
)


def _malformed(path: Path, output: str) -> str | None:
    """lit's malformed-file messages, said with the file:line and what to do."""
    unparsed = shell_parse_error(output)
    if unparsed:
        line, command = unparsed[0], user_command(unparsed[1])
        try:
            shlex.split(command)
            why = "the shell cannot parse it"
            hint = "check the quoting and the shell operators (|, &&, <, >, 2>&1)"
        except ValueError as exc:
            why = "a quote is not closed" if "quotation" in str(exc) else str(exc)
            hint = "close the quote, or escape a literal quote with a backslash"
        return (
            f"{path}:{line}: error: cannot parse RUN line {line}: {why}\n"
            f"  {command}\n  hint: {hint}"
        )
    m = _BAD_EXPRESSION.search(output)
    if m:
        return (
            f"{path}:{m.group('line')}: error: malformed {m.group('kw')}: expression "
            f"'{m.group('expr')}': expected {m.group('expected')}, found {m.group('have')}\n"
            "  hint: combine features with &&, || and ! and parentheses, "
            f"e.g. {m.group('kw')}: torch && !onnx"
        )
    return None


_SCRIPT_EXCEPTION = "Exception during script execution:"
# lit 17 and 18 name the file as bytes (b'...')
_NO_SUCH_FILE = re.compile(
    r"FileNotFoundError: \[Errno 2\] No such file or directory: b?'(?P<f>.*)'"
)


def _script_exception(path: Path, verdict: FileVerdict, verbose: bool) -> str | None:
    """lit's UNRESOLVED after an exception in its shell: the RUN line, the error, what to do
    (lit's traceback only with -vv)."""
    if _SCRIPT_EXCEPTION not in verdict.output:
        return None
    lines = [ln for ln in verdict.output.strip().splitlines() if ln.strip()]
    error = lines[-1].strip()
    step = verdict.steps[-1] if verdict.steps else None
    line = step.line if step and step.line else 0
    where = f"RUN line {line}" if line else "a RUN line"
    out = [f"{path}:{line}: error: {where} could not run: {error}"]
    if step:
        out.append(f"  {user_command(step.command)}")
    missing = _NO_SUCH_FILE.search(error)
    if missing and not Path(missing.group("f")).parent.is_dir():
        out.append(
            f"  hint: the folder of '{missing.group('f')}' does not exist; create it in an "
            "earlier RUN line (mkdir -p) or fix the path"
        )
    elif missing:
        out.append(
            f"  hint: a redirect reads '{missing.group('f')}', which does not exist; "
            "write it in an earlier RUN line or fix its name"
        )
    if verbose:
        out.append(verdict.output.rstrip())
    else:
        out.append("  (lit's traceback with -vv)")
    return "\n".join(out)


_EXPECT_MISSED = re.compile(r"^.*: error: MLIRPIPE-EXPECT: .*(?:\n  hint: .*)?$", re.M)


def format_failure(
    path: Path, verdict: FileVerdict, verbose: bool = False, filecheck_engine: str = ""
) -> str:
    """The report of a failing file; `filecheck_engine` the run's FileCheck engine, if set."""
    if verdict.differs:
        return f"{path}: FAIL: {verdict.differs}"
    failed = verdict.code is ResultCode.FAIL
    missed = _EXPECT_MISSED.search(verdict.output) if failed else None
    none_failed = not any(s.failed for s in verdict.steps)
    if missed and none_failed:
        return f"{path}: FAIL: the file did not end as it expects\n{missed.group(0)}"
    # every RUN line passed and lit's verdict is FAIL: the suite's test format failed the file
    by_format = failed and bool(verdict.steps) and none_failed
    step = failed_step(verdict) if failed and not by_format else None
    if verdict.code is ResultCode.UNRESOLVED:
        crashed_shell = _script_exception(path, verdict, verbose)
        if crashed_shell:
            return f"{path}: UNRESOLVED: lit's shell could not run the script\n{crashed_shell}"
    if verdict.code is ResultCode.UNRESOLVED or (failed and step is None):
        message = _malformed(path, verdict.output)  # lit 17 fails a RUN line it cannot parse
        if message:
            return f"{path}: {verdict.code}: {MALFORMED}\n{message}"
    if failed and step is None and not by_format:
        external = _external_failure(path, verdict, filecheck_engine)
        if external is not None:
            return external
    if step is None or not failed:
        head = HEADS.get(verdict.code, f"{verdict.code}: a RUN line failed")
        if verdict.code is ResultCode.XPASS and verdict.xfail_listed:
            head = LISTED_XPASS
        if by_format:
            head = BY_FORMAT
        lines = [f"{path}: {head}"]
        if verdict.crash:
            lines.append(f"the in-process run ended early: {user_command(verdict.crash)}")
            lines.extend(_crash_repro(verdict, ""))
        lines.append(verdict.output.rstrip())
        return "\n".join(lines)
    where = f"RUN line {step.line}" if step.line else "a RUN line"
    written = written_filechecks(path, step.line)
    lines = [
        f"{path}:{step.line or 0}: FAIL at {where}",
        f"  {user_command(step.command, written)}",
    ]
    if missed:
        lines.append(_indent(missed.group(0)))
    if verdict.crash:
        lines.append(f"  the in-process run ended early: {user_command(verdict.crash)}")
        lines.extend(_crash_repro(verdict, "  "))
    stage = _stage_of(step.command)
    if stage:
        lines.append(f"  stage: {stage}")
    lines.extend(_command_lines(step, written))
    directive = _failing_directive(step)
    if directive:
        lines.append("failing directive:")
        lines.append(directive)
    dump = _input_dump(step)
    if dump:
        lines.append("input around the failing position:")
        lines.append(dump)
    lines.append("reproduce with:")
    program = filecheck_program(path, filecheck_engine)  # what ran, which `FileCheck` may not be
    repro = _runnable(
        user_command(step.command, itertools.repeat(program)), program, verdict.search_path
    )
    lines.append(f"  {_in_place(verdict, repro)}")
    # FileCheck engines that disagreed, on any RUN line
    lines.extend(f"{path}:{line}: {report}" for line, report in verdict.warnings)
    if verbose:
        lines.append("lit output:")
        lines.append(verdict.output.rstrip())
    return "\n".join(lines)


# A program named where a command starts: the line's start, after |, &&, || or ;, after `not`.
_COMMAND_WORD = re.compile(r"((?:^|[|&;])\s*(?:not\s+)*)([A-Za-z_][\w.+-]*)(?![\w/.-])")


def _runnable(command: str, program: str, search_path: str = "") -> str:
    """The command with each bare program that the user's PATH lacks spelled as the path the
    suite ran: `FileCheck` as the FileCheck that ran (`program`), any other as found on the
    suite's own PATH (`search_path`, e.g. what its lit config put in config.environment)."""

    def resolved(match: re.Match[str]) -> str:
        before, name = match.groups()
        if shutil.which(name) is not None:
            return match.group(0)
        found = program if name == "FileCheck" else None
        if found is None and search_path:
            found = shutil.which(name, path=search_path)
        return before + shlex.quote(found) if found else match.group(0)

    return _COMMAND_WORD.sub(resolved, command)


def _command_lines(step: RunStep, written: list[str]) -> list[str]:
    """Each command of the RUN line that failed or wrote to stdout (not into a pipe) or stderr,
    as lit shows them: itself (FileCheck spelled as the RUN line writes it), its exit status,
    its stdout and stderr, and a hint."""
    lines: list[str] = []
    expansion, seen = tool_commands()["FileCheck"], 0
    for result in step.results:
        cmd, before = shlex.join(result.args), seen
        seen += cmd.count(expansion)
        if result.exit_code == 0 and not result.stderr.strip() and not result.stdout.strip():
            continue
        lines.append(f"command: {user_command(cmd, written[before:])}")
        lines.append(f"exit status: {result.exit_code}")
        if result.stdout.strip():
            lines.append("stdout:")
            lines.append(_indent(_tail(result.stdout.rstrip())))
            lines.append("stderr:" if result.stderr.strip() else "stderr: (empty)")
        if result.stderr.strip():
            lines.append(_indent(result.stderr.rstrip()))
        hint = _not_found_hint(result.stderr) or _no_checks_hint(result.stderr)
        if hint:
            lines.append(f"  hint: {hint}")
    return lines


def _crash_repro(verdict: FileVerdict, indent: str) -> list[str]:
    if not verdict.repro:
        return []
    return [
        f"{indent}reproduce the crash with (the crashing stage on its input IR):",
        f"{indent}  {verdict.repro}",
    ]


def _stage_of(command: str) -> str | None:
    """'STAGE of pipeline P' from the --pipeline/--stop-after options of mlirpipe-opt."""
    try:
        words = shlex.split(user_command(command))
    except ValueError:
        return None
    opts: dict[str, str] = {}
    for i, w in enumerate(words):
        for flag in ("--pipeline", "--stop-after", "--start-after"):
            if w == flag and i + 1 < len(words):
                opts[flag] = words[i + 1]
            elif w.startswith(flag + "="):
                opts[flag] = w.split("=", 1)[1]
    if "--pipeline" not in opts:
        return None
    stop = opts.get("--stop-after")
    where = f"up to '{stop}'" if stop else "all stages"
    return f"{where} of pipeline '{opts['--pipeline']}'"


# FileCheck's error at the check file's line: `FILE:LINE: error:` (the Python port) or
# `FILE:LINE:COLUMN: error:` (LLVM's)
_CHECK_ERROR = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+)(?::\d+)?: error:", re.M)


def _external_failure(path: Path, verdict: FileVerdict, filecheck_engine: str) -> str | None:
    """The report of a file a suite ran in an external shell (no per-command results, only
    lit's text): the RUN line that failed, the CHECK line FileCheck names, lit's output and a
    command that reproduces it; None when lit's text has no RUN line in it."""
    run = external_run(verdict.output)
    if run is None:
        return None
    line, command = run
    lines = [f"{path}:{line}: FAIL at RUN line {line}", f"  {command}"]
    directive = _directive_in(verdict.output)
    if directive:
        lines += ["failing directive:", directive]
    lines += ["lit's output:", _indent(verdict.output.rstrip())]
    program = filecheck_program(path, filecheck_engine)
    lines.append("reproduce with:")
    lines.append(f"  {_in_place(verdict, _runnable(command, program, verdict.search_path))}")
    return "\n".join(lines)


def _in_place(verdict: FileVerdict, command: str) -> str:
    """`command` to paste into a shell: run in the folder lit ran the RUN lines in, with the
    variables the suite's config set for them (in a subshell, which keeps them; a name a
    shell cannot export is left out)."""
    cd = f"cd {shlex.quote(verdict.cwd or str(Path.cwd()))}"
    named = [(n, v) for n, v in verdict.environment if _SHELL_NAME.fullmatch(n)]
    if not named:
        return f"{cd} && {command}"
    assigned = " ".join(f"{name}={shlex.quote(value)}" for name, value in named)
    return f"({cd} && export {assigned} && {command})"


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _directive_in(text: str) -> str | None:
    """The check file's line FileCheck names in `text`, as `FILE:LINE | the line`."""
    found = _directive_line(text)
    return f"  {found[0]}:{found[1]} | {found[2]}" if found else None


def _failing_directive(step: RunStep) -> str | None:
    """The check file's line that FileCheck names in its error."""
    for result in step.results:
        found = _directive_line(result.stderr)
        if found:
            return f"  {found[1]} | {found[2]}"
    return None


def _directive_line(text: str) -> tuple[str, int, str] | None:
    """(file, line, its text) of the first `FILE:LINE: error:` in `text` that names a comment
    line (where CHECK directives live): a tool's own error at an IR line is not FileCheck's."""
    for m in _CHECK_ERROR.finditer(text):
        try:
            source = Path(m.group("file")).read_text(errors="replace").splitlines()
        except OSError:
            continue
        n = int(m.group("line"))
        if 1 <= n <= len(source) and source[n - 1].lstrip().startswith(_COMMENT_LEADERS):
            return m.group("file"), n, source[n - 1]
    return None


_COMMENT_LEADERS = ("//", "#", ";", "--")


def _input_dump(step: RunStep) -> str | None:
    """Numbered input lines around FileCheck's 'Current position', with a marker."""
    for result in step.results:
        m = _POSITION.search(result.stderr)
        if m is None or result.stdin is None:
            continue
        text = result.stdin
        if m.group("name") not in ("<stdin>", "-"):
            try:
                text = Path(m.group("name")).read_text(errors="replace")
            except OSError:
                continue
        lines = text.splitlines()
        at = max(1, int(m.group("line")))
        lo, hi = max(1, at - _CONTEXT_LINES), min(len(lines), at + _CONTEXT_LINES)
        width = len(str(hi))
        out = []
        for n in range(lo, hi + 1):
            mark = ">>" if n == at else "  "
            out.append(f"  {mark} {n:>{width}} | {lines[n - 1]}")
        return "\n".join(out)
    return None


def _not_found_hint(stderr: str) -> str | None:
    m = _NOT_FOUND.search(stderr)
    if m is None:
        return None
    tool = m.group("tool")
    name = Path(tool).name
    if "/" in tool:  # a path the suite's configuration (or the RUN line) resolved it to
        return (
            f"there is no program at '{tool}': build it, or point the suite's configuration "
            f"at the folder that has it (e.g. mlirpipe_tools: {name}=build/bin/{name})"
        )
    return (
        f"'{tool}' is not installed or not on PATH: install it, add its directory to "
        f"mlirpipe_tool_dirs, or map it in mlirpipe_tools (e.g. {tool}=build/bin/{tool})"
    )


_STDOUT_LINES = 40


def _tail(text: str) -> str:
    """The last lines of a command's output, saying how many were left out."""
    lines = text.splitlines()
    if len(lines) <= _STDOUT_LINES:
        return text
    return "\n".join(
        [f"... ({len(lines) - _STDOUT_LINES} lines above not shown)", *lines[-_STDOUT_LINES:]]
    )


_NO_CHECKS = re.compile(r"No check strings found with prefix (?P<prefix>[\w-]+):")


def _no_checks_hint(stderr: str) -> str | None:
    m = _NO_CHECKS.search(stderr)
    if m is None:
        return None
    p = m.group("prefix")
    return (
        f"the check file has no {p}: lines: add one, or pass the prefix its lines use "
        "(--check-prefix / --check-prefixes)"
    )


def _indent(text: str) -> str:
    return "\n".join("  " + ln for ln in text.splitlines())
