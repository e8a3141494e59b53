"""Known RUN-line tools run inside the test process, with lit's own shell semantics around them.

`mlirpipe-opt` and `filecheck` expand (see config.tool_commands) to `PYTHON -mMODULE ARGS`. When
every command of a pipeline is such a command (optionally under `not` or `!`), the pipeline runs
here: same argv, same stdin bytes, same redirections (lit's `processRedirects`), same exit-status
rules as lit's `_executeShCmd`; anything else (`env`, `not --crash`, other programs, `ulimit`) goes
to lit unchanged and runs as a subprocess. A pipeline whose known tools come after other
programs (`foo-opt %s | filecheck %s`) runs those programs with lit, then the tools here on
their output.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import lit.ShCommands as ShCommands
import lit.ShUtil as ShUtil
import lit.TestRunner as TestRunner

from ..capture import Captured, capture_fds
from .lit_compat import ShellCommandResult, expand_late_substitutions, processRedirects
from .shell_trace import ShellTrace, keeping_commands

# (argv, stdin bytes, stdout stream, stderr stream) -> exit status
Tool = Callable[[list[str], io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper], int]

# How config.tool_commands names the tools that run here: `mlirpipe-opt` runs native MLIR
# code (a crash there ends the process that runs it), `filecheck` is pure Python.
OPT_TOOL = "-mpytest_mlirpipe.tools.opt"
FILECHECK_TOOL = "-mpytest_mlirpipe.tools.filecheck"
IR_ASSERT_TOOL = "-mpytest_mlirpipe.tools.ir_assert"  # parses IR with the bindings: native
# A late `%{readfile:...}` may bring any command in: it counts as native code.
_NATIVE_MARKS = (OPT_TOOL, IR_ASSERT_TOOL, "%{readfile:")


# What a file's text or a substitution holds when it may bring such a tool into a script:
# the tools' module (as the tool commands spell it) or a late `%{readfile:...}`.
NATIVE_WORDS = (b"pytest_mlirpipe", b"readfile")


def may_bring_native_code(substitutions) -> bool:
    """Whether a config's substitutions (lit's (pattern, replacement) pairs) may put a tool
    that runs native code here into a script."""
    return any(
        not isinstance(replacement, str) or any(w.decode() in replacement for w in NATIVE_WORDS)
        for _, replacement in substitutions
    )


def runs_native_code(script: list[str]) -> bool:
    """Whether a substituted script may run native code in this process (`mlirpipe-opt`):
    without it, only lit's shell, its subprocesses and the Python FileCheck run here."""
    return any(mark in line for line in script for mark in _NATIVE_MARKS)


def _tools(crash_repro=None, filecheck: Tool | None = None) -> dict[str, Tool]:
    """`-mMODULE` as written by config.tool_commands -> the tool's function; `crash_repro` (a
    tools.opt.CrashRepro) goes to `mlirpipe-opt`; `filecheck` replaces FileCheck."""

    def opt(argv, stdin, stdout, stderr) -> int:
        from ..tools import opt

        return opt.run(argv, stdin, stdout, stderr, crash_repro=crash_repro)

    def check(argv, stdin, stdout, stderr) -> int:
        from ..tools import filecheck

        return filecheck.run(argv, stdin, stdout, stderr)

    def check_ir(argv, stdin, stdout, stderr) -> int:
        from ..tools import ir_assert

        return ir_assert.run(argv, stdin, stdout, stderr)

    return {OPT_TOOL: opt, FILECHECK_TOOL: filecheck or check, IR_ASSERT_TOOL: check_ir}


@dataclass(frozen=True, slots=True)
class _Planned:
    command: object  # lit.ShCommands.Command
    tool: Tool
    argv: list[str]
    not_count: int
    plain_not: bool


# A RUN command's program (its first word: a path or a name) -> the tool that runs it
# in-process, or None.
Programs = Callable[[str], Tool | None]


def _plan(pipeline, shenv, tools: dict[str, Tool], programs: Programs | None = None):
    """The pipeline's commands as in-process tool calls (list[_Planned]), or None if any
    must be a process."""
    if getattr(shenv, "ulimit", None):  # lit 23 has `ulimit`; it runs as a process
        return None
    planned = []
    for command in pipeline.commands:
        try:
            args = expand_late_substitutions(command, shenv)
        except Exception:
            return None  # lit reports it
        negations = []
        while args and args[0] in ("not", "!"):
            negations.append(args.pop(0))
        if not all(isinstance(a, str) for a in args):
            return None  # a glob: lit expands it
        found = _tool_of(args, tools, programs)
        if found is None:
            return None
        plain_not = negations == ["not"]
        planned.append(_Planned(command, *found, len(negations), plain_not))
    return planned


def _tool_of(
    args: list[str], tools: dict[str, Tool], programs: Programs | None
) -> tuple[Tool, list[str]] | None:
    """(tool, its argv) for a command `PYTHON -mMODULE ARGS` of a known tool, or for a
    program `programs` knows; None for any other command."""
    if len(args) >= 2 and args[0] == sys.executable and args[1] in tools:
        return tools[args[1]], args[2:]
    tool = programs(args[0]) if programs is not None and args else None
    return (tool, args[1:]) if tool is not None else None


_PIPED = object()  # stdin comes from the previous command (or is empty for the first)


def _split(pipeline, shenv, tools: dict[str, Tool], programs: Programs | None = None):
    """(k, plan) when the pipeline's commands from the k-th on (k > 0) are known tools and
    the ones before are not; None otherwise."""
    for k in range(1, len(pipeline.commands)):
        tail = ShCommands.Pipeline(pipeline.commands[k:], False, pipeline.pipe_err)
        planned = _plan(tail, shenv, tools, programs)
        if planned is not None:
            return k, planned
    return None


def _run_mixed(pipeline, k: int, planned, shenv, results, timeout_helper, trace, external) -> int:
    """The first `k` commands with lit (`external`: its `_executeShCmd`), their output piped
    into the in-process tools after them; the exit status as lit's one pipeline gives it."""
    head = ShCommands.Pipeline(pipeline.commands[:k], False, pipeline.pipe_err)
    head_code = external(head, shenv, results, timeout_helper)
    last = results[-1]
    piped = last.stdout.encode("utf-8")
    last.stdout = ""  # in one pipeline it went down the pipe, not to lit's report
    tail = ShCommands.Pipeline(pipeline.commands[k:], pipeline.negate, pipeline.pipe_err)
    return _run_pipeline(tail, planned, shenv, results, timeout_helper, trace, piped, head_code)


def _run_pipeline(
    pipeline,
    planned: list[_Planned],
    shenv,
    results,
    timeout_helper,
    trace: ShellTrace,
    piped: bytes = b"",
    exit_code: int | None = None,
) -> int:
    """lit's `_executeShCmd` for one pipeline, with the tools called instead of spawned
    (`piped`: what the commands before them wrote; `exit_code`: their pipeline's status)."""
    opened_files: list = []
    ran: list[_Ran] = []
    try:
        for n, step in enumerate(planned):
            done, piped = _run_step(step, piped, n == len(planned) - 1, shenv, opened_files)
            ran.append(done)
    finally:
        for _name, _mode, f, _path in opened_files:
            f.close()

    # The time limit passed while the tools ran (it cannot stop them in this process): lit
    # would have killed them, so they end as killed ones do.
    killed = timeout_helper.timeoutReached()
    for command, step, done in zip(pipeline.commands, planned, ran, strict=True):
        status = _negated(step, -signal.SIGKILL if killed else done.status)
        result = ShellCommandResult(
            command,
            _text(done.stdout),
            _text(done.stderr),
            status,
            timeout_helper.timeoutReached(),
            _output_files(opened_files) if status != 0 else [],
        )
        trace.stdins[id(result)] = _text(done.stdin)
        results.append(result)
        if not pipeline.pipe_err or not exit_code or status != 0:
            exit_code = status
    assert exit_code is not None  # the plan has a command
    if pipeline.negate:
        exit_code = not exit_code
    return exit_code


@dataclass(frozen=True, slots=True)
class _Ran:
    """One command as it ran: its stdin, exit status, and the output it keeps (what went to a
    file or down the pipe is not kept)."""

    stdin: bytes
    status: int
    stdout: bytes
    stderr: bytes


def _run_step(
    step: _Planned, piped: bytes, last: bool, shenv, opened_files: list
) -> tuple[_Ran, bytes]:
    """One command with lit's redirections: (how it ran, the bytes it pipes to the next)."""
    stdin, stdout, stderr = processRedirects(step.command, _PIPED, shenv, opened_files)
    data = piped if stdin is _PIPED else stdin.buffer.read()
    out_buf, err_buf = io.BytesIO(), io.BytesIO()
    out = _stream(out_buf)
    # `2>&1` into the pipe, or stdout and stderr into one file: one interleaved stream.
    merged = (stderr is stdout and not isinstance(stdout, int)) or (
        stderr == subprocess.STDOUT and stdout == subprocess.PIPE
    )
    err = out if merged else _stream(err_buf)
    status, native = _call(step, data, out, err, shenv)
    # What C++ wrote to the descriptors came first: it is printed while passes run, the
    # tool's own text (the IR, its messages) when they are done.
    if merged:
        out_bytes, err_bytes = native.stdout + native.stderr + out_buf.getvalue(), b""
    else:
        out_bytes = native.stdout + out_buf.getvalue()
        err_bytes = native.stderr + err_buf.getvalue()
    if stdout != subprocess.PIPE:
        _write(stdout, out_bytes)
        out_bytes = b""
    if stderr == subprocess.STDOUT and stdout != subprocess.PIPE:
        # lit sends stderr down the pipe in stdout's place when stdout is a file.
        piped, out_bytes = err_bytes, err_bytes if last else b""
        err_bytes = b""
    else:
        piped = out_bytes if stdout == subprocess.PIPE else b""
        if not last:
            out_bytes = b""  # consumed by the next command
        if not isinstance(stderr, int) and not merged:
            _write(stderr, err_bytes)
            err_bytes = b""
    return _Ran(data, status, out_bytes, err_bytes), piped


def _negated(step: _Planned, status: int) -> int:
    """The status after the command's `not`s and `!`s, by lit's rules."""
    if step.not_count % 2:
        return int(status <= 0) if step.plain_not else (1 if status == 0 else 0)
    if step.not_count > 1:
        return 1 if status != 0 else 0
    return status


def _output_files(opened_files: list) -> list:
    """(name, path, bytes) of the files the pipeline wrote, for lit's failure output."""
    found = []
    for name, mode, _f, path in sorted(opened_files, key=lambda t: t[:2]):
        if path is not None and mode in ("w", "a"):
            try:
                with open(path, "rb") as f:
                    found.append((name, path, f.read()))
            except OSError:
                pass
    return found


def _call(step: _Planned, data: bytes, out, err, shenv) -> tuple[int, Captured]:
    """Run the tool with the shell's cwd and environment (`shenv.env`: the suite config's
    environment), as its own process would see them. The environment is swapped in for the
    call and put back: code deep in the tools (the pipeline search path, the pass modules)
    reads os.environ. What C and C++ code writes to descriptors 1 and 2 is captured too."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    # Code that writes to sys.std* (filecheck, a pass's remarks) writes to the tool's streams.
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        os.chdir(shenv.cwd)
        if saved_env != shenv.env:
            os.environ.clear()
            os.environ.update(shenv.env)
        with capture_fds() as native:
            try:
                status = step.tool(list(step.argv), stdin, out, err)
            except Exception:
                # What the interpreter does with an uncaught exception.
                err.write(traceback.format_exc())
                status = 1
        return status, native
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        if os.environ != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)


def _stream(buf: io.BytesIO) -> io.TextIOWrapper:
    return io.TextIOWrapper(buf, encoding="utf-8", errors="strict", write_through=True)


def _write(f, data: bytes) -> None:
    f.flush()
    f.buffer.write(data)
    f.buffer.flush()


def _text(data: bytes) -> str:
    """Bytes as lit reads a subprocess's output (universal newlines, bad bytes replaced)."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def in_process_tools(
    crash_repro=None,
    filecheck: Tool | None = None,
    programs: Programs | None = None,
    known: bool = True,
) -> Iterator[ShellTrace]:
    """Within this scope, lit's internal shell runs known tools in-process (`crash_repro`, a
    tools.opt.CrashRepro, goes to `mlirpipe-opt`; `filecheck`, when given, replaces
    FileCheck: the CHECK-line update records what each FileCheck saw; `programs` names
    other programs to run in-process, e.g. an LLVM FileCheck binary, by the update too).
    Without `known`, only `programs` run here: the known tools stay processes."""
    original_pipeline = TestRunner._executeShCmd
    original_top = TestRunner.executeShCmd
    trace = ShellTrace()
    tools = _tools(crash_repro, filecheck) if known else {}
    progress = _Progress(trace)

    def execute(cmd, shenv, results, timeout_helper):
        if isinstance(cmd, ShUtil.Pipeline) and _is_echo(cmd):
            progress.echoed(cmd.commands[0].args[1:])
        if isinstance(cmd, ShUtil.Pipeline) and not timeout_helper.timeoutReached():
            planned = _plan(cmd, shenv, tools, programs)
            if planned is not None:
                trace.in_process += 1
                return _run_pipeline(cmd, planned, shenv, results, timeout_helper, trace)
            split = _split(cmd, shenv, tools, programs)
            if split is not None:
                trace.in_process += 1
                trace.subprocesses += 1
                k, planned = split
                args = (shenv, results, timeout_helper, trace, original_pipeline)
                return _run_mixed(cmd, k, planned, *args)
            if not _is_echo(cmd):
                trace.subprocesses += 1
        return original_pipeline(cmd, shenv, results, timeout_helper)

    def execute_top(cmd, shenv, results, timeout=0):
        trace.results = results
        return original_top(cmd, shenv, results, timeout)

    TestRunner._executeShCmd = execute
    TestRunner.executeShCmd = execute_top
    try:
        with keeping_commands(trace):
            yield trace
    finally:
        TestRunner._executeShCmd = original_pipeline
        TestRunner.executeShCmd = original_top


@dataclass(slots=True)
class _Progress:
    """Tells a containing parent which RUN line runs, from lit's `@echo '# RUN: at line N'`
    and the `@echo COMMAND` after it (lit 17: `: 'RUN: at line N'` alone, its command as the
    script gave it)."""

    trace: ShellTrace
    line: str | None = None

    def echoed(self, args) -> None:
        from ..contain import note

        text = " ".join(str(a) for a in args)
        if text.startswith("RUN: at line"):  # lit 17's `: 'RUN: at line N'`, no command after
            where = text[len("RUN: at ") :]
            number = where[len("line ") :]
            command = self.trace.commands.get(int(number)) if number.isdigit() else None
            note(f"RUN {where}: {command}" if command else f"RUN {where}")
        elif text.startswith("# RUN: at line"):
            self.line = text[len("# RUN: at ") :]
        elif self.line is not None:
            note(f"RUN {self.line}: {text}")
            self.line = None


def _is_echo(pipeline) -> bool:
    return len(pipeline.commands) == 1 and pipeline.commands[0].args[:1] in (["@echo"], [":"])
