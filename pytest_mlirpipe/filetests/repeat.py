"""Output that changes from run to run: a RUN/CHECK file run several times, what its commands
printed compared (--mlirpipe-repeat)."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..model import ResultCode
from .names import TOOL_MODULES
from .verdict import FileVerdict

DIFF_LINES = 40  # of the unified diff shown


@dataclass(frozen=True, slots=True)
class Output:
    """One thing a run printed: a command's stdout, what a pipe gave the next command, or a
    %t file as the run left it."""

    line: int | None  # the RUN line (None: a %t file)
    what: str
    text: str


def outputs_of(verdict: FileVerdict, temp_files: dict[str, str]) -> list[Output]:
    """What one run of a file printed, in order."""
    found: list[Output] = []
    for step in verdict.steps:
        for result in step.results:
            command = shown(result.args)
            if result.stdin is not None:
                found.append(Output(step.line, f"the input piped into `{command}`", result.stdin))
            if result.stdout:
                found.append(Output(step.line, f"the stdout of `{command}`", result.stdout))
    found += [Output(None, f"the %t file {name}", text) for name, text in temp_files.items()]
    return found


def shown(args: Sequence[str]) -> str:
    """A command as RUN lines write it: `python -mpytest_mlirpipe.tools.opt ...` is
    `mlirpipe-opt ...`."""
    module = args[1][2:] if len(args) > 1 and args[1].startswith("-m") else ""
    if module in TOOL_MODULES:
        return shlex.join([TOOL_MODULES[module], *args[2:]])
    return shlex.join(args)


def repeated(run: Callable[[], tuple[FileVerdict, dict[str, str]]], runs: int) -> FileVerdict:
    """The verdict of the first of `runs` runs, made a FAIL naming the first output that
    differs from the first run's in a later run (whatever FileCheck said)."""
    first, first_files = run()
    if first.code in (ResultCode.UNSUPPORTED, ResultCode.UNRESOLVED):
        return first
    reference = outputs_of(first, first_files)
    for number in range(2, runs + 1):
        verdict, files = run()
        report = _difference(reference, outputs_of(verdict, files), number, runs)
        if report:
            return replace(first, code=ResultCode.FAIL, is_failure=True, differs=report)
    return first


def _difference(a: Sequence[Output], b: Sequence[Output], number: int, runs: int) -> str:
    """The report of the first output of `b` (run `number`) that differs from `a`'s (run 1)."""
    for x, y in zip(a, b, strict=False):
        if x.what != y.what or x.text != y.text:
            return _report(x, y, number, runs)
    if len(a) != len(b):
        extra = (b if len(b) > len(a) else a)[min(len(a), len(b))]
        return _report(extra, Output(extra.line, extra.what, ""), number, runs)
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


def temp_files(test) -> dict[str, str]:
    """The test's own %t files (`%t`, `%t.*`, the files in `%t/`) and their text."""
    import lit.TestRunner as TestRunner

    _, tmp_base = TestRunner.getTempPaths(test)
    base = Path(tmp_base + ".tmp")
    found: dict[str, str] = {}
    for path in sorted(base.parent.glob(base.name + "*")):
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            found[str(file.relative_to(base.parent))] = file.read_bytes().decode("utf-8", "replace")
    return found


def repeated_under_lit(test, lit_config, script: list[str], tmp_base: str, runs: int):
    """lit's result of the first of `runs` runs of the script, made a FAIL naming the first
    output that differs in a later run: the commands' stdout, what each FileCheck was given
    (recorded by the FileCheck wrapper) and the %t files."""
    import json

    import lit.Test
    import lit.TestRunner as TestRunner

    from ..tools.filecheck import INPUTS_ENV
    from .own_config import with_own_config
    from .shell_trace import recording
    from .verdict import steps_of

    record = Path(tmp_base + ".filecheck-inputs")
    with_own_config(test, environment={**test.config.environment, INPUTS_ENV: str(record)})

    def once():
        record.unlink(missing_ok=True)
        with recording() as trace:
            result = TestRunner._runShTest(test, lit_config, False, script, tmp_base)
        steps = steps_of(trace.results) if trace.results else ()
        lines = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
        record.unlink(missing_ok=True)
        given = [json.loads(line) for line in lines]
        found = outputs_of(FileVerdict("PASS", "", False, steps=steps), {})
        found += [
            Output(None, f"the input of `FileCheck {shlex.join(g['argv'])}`", g["input"])
            for g in given
        ]
        return result, found + outputs_of(FileVerdict("PASS", "", False), temp_files(test))

    first, reference = once()
    if first.code in (lit.Test.UNSUPPORTED, lit.Test.UNRESOLVED):
        return first
    for number in range(2, runs + 1):
        _, found = once()
        report = _difference(reference, found, number, runs)
        if report:
            return lit.Test.Result(lit.Test.FAIL, f"{report}\n{first.output or ''}")
    return first
