"""Output that changes from run to run: a RUN/CHECK file run several times, what its commands
printed compared (--mlirpipe-repeat)."""

from __future__ import annotations

import difflib
import glob
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..model import ResultCode
from .names import REPEAT_PARAM, TOOL_MODULES
from .verdict import FileVerdict

DIFF_LINES = 40  # of the unified diff shown
# Beside a test's %t files: what each FileCheck of a run was given (tools/filecheck.py's records).
_INPUTS_SUFFIX = ".filecheck-inputs"


@dataclass(frozen=True, slots=True)
class Output:
    """One thing a run printed: a command's stdout, what a pipe gave the next command, what a
    FileCheck was given, or a %t file as the run left it."""

    line: int | None  # the RUN line (None: not known)
    what: str
    text: str


def outputs_of(verdict: FileVerdict) -> list[Output]:
    """What the commands of one run of a file printed, in order (as lit's shell recorded)."""
    found: list[Output] = []
    for step in verdict.steps:
        for result in step.results:
            command = shown(result.args)
            if result.stdin is not None:
                found.append(Output(step.line, f"the input piped into `{command}`", result.stdin))
            if result.stdout:
                found.append(Output(step.line, f"the stdout of `{command}`", result.stdout))
    return found


def shown(args: Sequence[str]) -> str:
    """A command as RUN lines write it: `python -mpytest_mlirpipe.tools.opt ...` is
    `mlirpipe-opt ...`."""
    module = args[1][2:] if len(args) > 1 and args[1].startswith("-m") else ""
    if module in TOOL_MODULES:
        return shlex.join([TOOL_MODULES[module], *args[2:]])
    return shlex.join(args)


def repeated(run: Callable[[], tuple[FileVerdict, list[Output]]], runs: int) -> FileVerdict:
    """The verdict of the first of `runs` runs, made a FAIL naming the first output that
    differs from the first run's in a later run (whatever FileCheck said). `run` gives a
    run's verdict and what else the run left (left_behind)."""
    first, left = run()
    if first.code in (ResultCode.UNSUPPORTED, ResultCode.UNRESOLVED):
        return first
    reference = outputs_of(first) + left
    for number in range(2, runs + 1):
        verdict, left = run()
        report = _difference(reference, outputs_of(verdict) + left, number, runs)
        if report:
            return replace(first, code=ResultCode.FAIL, is_failure=True, differs=report)
    return first


def _difference(a: Sequence[Output], b: Sequence[Output], number: int, runs: int) -> str:
    """The report of the first output of `b` (run `number`) that differs from `a`'s (run 1)."""
    for x, y in zip(a, b, strict=False):
        if x.what != y.what or x.text != y.text:
            return _report(x, y, number, runs)
    if len(a) > len(b):  # run 1 printed something run `number` did not
        extra = a[len(b)]
        return _report(extra, Output(extra.line, extra.what, ""), number, runs)
    if len(b) > len(a):  # and the other way round
        extra = b[len(a)]
        return _report(Output(extra.line, extra.what, ""), extra, number, runs)
    return ""


def _report(x: Output, y: Output, number: int, runs: int) -> str:
    where = f"RUN line {x.line}" if x.line is not None else "a RUN line"
    head = f"output of {where} differs between runs (run 1 and run {number} of {runs}): {x.what}"
    diff = list(
        difflib.unified_diff(
            x.text.splitlines(), y.text.splitlines(), "run 1", f"run {number}", lineterm=""
        )
    )
    if len(diff) > DIFF_LINES:
        diff = [*diff[:DIFF_LINES], f"... ({len(diff) - DIFF_LINES} more diff lines)"]
    return "\n".join([head, *(f"  {d}" for d in diff)])


def record_filecheck_inputs(test) -> Path:
    """Have each FileCheck the test's RUN lines start (the project's, in-process or not) write
    down what it was given, beside the test's %t files; the record's path."""
    import lit.TestRunner as TestRunner

    from ..tools.filecheck import INPUTS_ENV
    from .own_config import with_own_config

    _, tmp_base = TestRunner.getTempPaths(test)
    record = Path(tmp_base + _INPUTS_SUFFIX)
    _remove_records(record)  # a record an interrupted run left
    with_own_config(test, environment={**test.config.environment, INPUTS_ENV: str(record)})
    return record


def left_behind(test) -> list[Output]:
    """What a run left besides its commands' recorded output: what each FileCheck was given
    (the record is then removed) and the %t files."""
    import lit.TestRunner as TestRunner

    from ..tools.filecheck import read_input_records

    _, tmp_base = TestRunner.getTempPaths(test)
    record = Path(tmp_base + _INPUTS_SUFFIX)
    try:
        data = record.read_bytes()
    except OSError:
        data = b""
    found = []
    for argv, given in read_input_records(data):
        what = f"the input of `FileCheck {shlex.join(argv)}`"
        found.append(Output(None, what, shown_bytes(given)))
    _remove_records(record)
    return found + [Output(None, f"the %t file {n}", t) for n, t in temp_files(test).items()]


def shown_bytes(data: bytes) -> str:
    """Output as text to compare and show: bytes that are not UTF-8 as escapes, so that two
    different ones stay different (b"\\xff" is not b"\\xfe")."""
    return data.decode("utf-8", "backslashreplace")


def _remove_records(record: Path) -> None:
    """The record and the inputs the shims kept beside it (`record.PID`)."""
    for path in [record, *record.parent.glob(glob.escape(record.name) + ".*")]:
        path.unlink(missing_ok=True)


def temp_files(test) -> dict[str, str]:
    """The test's own %t files (`%t`, `%t.*`, the files in `%t/`) and their text."""
    import lit.TestRunner as TestRunner

    _, tmp_base = TestRunner.getTempPaths(test)
    base = Path(tmp_base + ".tmp")
    found: dict[str, str] = {}
    for path in sorted(base.parent.glob(base.name + "*")):
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            found[str(file.relative_to(base.parent))] = shown_bytes(file.read_bytes())
    return found


def repeated_under_lit(test, lit_config, run_once: Callable[[], object], runs: int):
    """lit's result of the first of `runs` calls of `run_once` (one run of the test's script),
    made a FAIL naming the first output that differs in a later run: the commands' stdout,
    what each FileCheck was given (recorded by the FileCheck wrapper) and the %t files."""
    import lit.Test

    from .filecheck_programs import filecheck_programs
    from .inprocess import in_process_tools
    from .names import FILECHECK_PARAM
    from .verdict import steps_of

    record_filecheck_inputs(test)
    # a FileCheck program the suite names by path records what it is given too
    programs = filecheck_programs(lit_config.params.get(FILECHECK_PARAM, ""), as_process=True)

    def once():
        with in_process_tools(programs=programs, known=False) as trace:
            result = run_once()
        if not isinstance(result, lit.Test.Result):  # a format's (code, output) tuple
            result = lit.Test.Result(*result)
        steps = steps_of(trace.results, trace.stdins, trace.commands) if trace.results else ()
        verdict = FileVerdict(ResultCode.PASS, "", False, steps=steps)
        return result, outputs_of(verdict) + left_behind(test)

    first, reference = once()
    if first.code in (lit.Test.UNSUPPORTED, lit.Test.UNRESOLVED):
        return first
    for number in range(2, runs + 1):
        _, found = once()
        report = _difference(reference, found, number, runs)
        if report:
            return lit.Test.Result(lit.Test.FAIL, f"{report}\n{first.output or ''}")
    return first


def repeat_count(lit_config) -> int | None:
    """The runs `--param mlirpipe_repeat=N` asks for (1 without it); None when N is not a
    whole number of runs >= 1."""
    try:
        runs = int(lit_config.params.get(REPEAT_PARAM, "1"))
    except ValueError:
        return None
    return runs if runs >= 1 else None


def bad_repeat_count(lit_config) -> str:
    """Why `--param mlirpipe_repeat=N` is not accepted."""
    text = lit_config.params.get(REPEAT_PARAM)
    return f"--param {REPEAT_PARAM} takes a whole number of runs >= 1, got {text!r}"


class RepeatedFormat:
    """A suite's own lit test format (lit's ShTest, in a suite that never calls configure()),
    each test run `--param mlirpipe_repeat=N` times, their outputs compared."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def __getattr__(self, name: str):
        if name == "inner":  # not set yet (while unpickling in lit's workers)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        return self.inner.getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig)

    def execute(self, test, litConfig):
        import lit.Test

        runs = repeat_count(litConfig)
        if runs is None:
            return lit.Test.Result(lit.Test.UNRESOLVED, bad_repeat_count(litConfig))
        if runs == 1 or test.config.unsupported:
            return self.inner.execute(test, litConfig)
        return repeated_under_lit(
            test, litConfig, lambda: self.inner.execute(test, litConfig), runs
        )
