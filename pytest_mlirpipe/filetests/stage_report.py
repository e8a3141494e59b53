"""The stage report of a RUN/CHECK file whose stage check failed, written beside its `%t` files."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import MlirpipeError
from ..model import ResultCode
from .failure import failed_step, user_command
from .names import REPORT_SUFFIX
from .verdict import FileVerdict

_TOOL = "mlirpipe-opt"
_SHELL_OPERATORS = {"|", "||", "&&", ";", "&", "|&"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# What RUN lines' in-process tools read from the suite's environment.
_ENVIRONMENT = ("MLIRPIPE_", "PYTHONPATH")


@dataclass(frozen=True, slots=True)
class StageCommand:
    """The `mlirpipe-opt` of a failing RUN line: its input, pipeline and stage range."""

    line: int
    input: str
    pipeline: str
    pipelines_dir: tuple[str, ...]
    start_after: str | None
    stop_after: str | None
    split_input_file: bool
    producer: str = ""  # what pipes the input in, when the input is '-'
    env: tuple[tuple[str, str], ...] = ()  # `env VAR=value` (or `VAR=value`) before the tool


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """Where the report went, or why there is none and the command that writes it by hand
    (plain data: it may come from a child)."""

    path: str = ""
    why_not: str = ""
    hint: str = ""


def by_hand(command: StageCommand, target: Path) -> str:
    """The `mlirpipe stages ... --html` command that writes the RUN line's page (its input
    piped in as the RUN line pipes it)."""
    words = ["mlirpipe", "stages", command.input, "--pipeline", command.pipeline]
    for folder in command.pipelines_dir:
        words += ["--pipelines-dir", folder]
    if command.start_after:
        words += ["--start-after", command.start_after]
    assignments = [f"{name}={value}" for name, value in command.env]
    text = shlex.join([*assignments, *words, "--html", str(target)])
    return f"{command.producer} | {text}" if command.input == "-" and command.producer else text


def stage_command(verdict: FileVerdict) -> StageCommand | None:
    """The `mlirpipe-opt --pipeline P` command of the RUN line that failed (None when that
    line runs no named pipeline)."""
    step = failed_step(verdict) if verdict.code is ResultCode.FAIL else None
    if step is None:
        return None
    try:
        words = shlex.split(user_command(step.command))
    except ValueError:
        return None
    for i, word in enumerate(words):
        if os.path.basename(word) == _TOOL:
            args = _parse_opt(_segment(words, i + 1))
            if args is not None and args.pipeline:
                source = args.input if args.input != "-" else _redirected_input(words, i + 1)
                return StageCommand(
                    step.line or 0,
                    source,
                    args.pipeline,
                    tuple(args.pipelines_dir),
                    args.start_after,
                    args.stop_after,
                    args.split_input_file,
                    _producer(words, i) if source == "-" else "",
                    _assignments(words, i),
                )
    return None


def _assignments(words: list[str], tool: int) -> tuple[tuple[str, str], ...]:
    """The `VAR=value` words of the tool's command before it (after `env`, or alone)."""
    words = words[_command_start(words, tool) : tool]
    pairs = [w.split("=", 1) for w in words if _ASSIGNMENT.match(w)]
    return tuple((name, value) for name, value in pairs)


def _producer(words: list[str], tool: int) -> str:
    """The commands piped into the tool at `words[tool]` ('' when it is not piped into)."""
    first = _command_start(words, tool)
    if first == 0 or words[first - 1] != "|":
        return ""
    start = first - 1
    while start > 0 and words[start - 1] not in _SHELL_OPERATORS - {"|"}:
        start -= 1
    return " ".join(w if w == "|" else shlex.quote(w) for w in words[start : first - 1])


def _command_start(words: list[str], tool: int) -> int:
    """Where the command of the tool at `words[tool]` starts (its `env VAR=value` words)."""
    start = tool
    while start > 0 and words[start - 1] not in _SHELL_OPERATORS:
        start -= 1
    return start


def _segment(words: list[str], start: int) -> list[str]:
    """The tool's own words: up to the next pipe or list operator."""
    end = start
    while end < len(words) and words[end] not in _SHELL_OPERATORS:
        end += 1
    return words[start:end]


def _redirected_input(words: list[str], start: int) -> str:
    segment = _segment(words, start)
    for i, word in enumerate(segment[:-1]):
        if word == "<":
            return segment[i + 1]
    return "-"


def _parse_opt(words: list[str]) -> argparse.Namespace | None:
    from ..tools.opt import build_parser

    cleaned, skip = [], False
    for i, word in enumerate(words):  # drop redirections: they are the shell's
        if skip:
            skip = False
        elif word in ("<", ">", "2>", ">>", "2>>") and i + 1 < len(words):
            skip = True
        elif not word.startswith(("2>&", ">&")):
            cleaned.append(word)
    try:
        args, _ = build_parser().parse_known_args(cleaned)
    except (MlirpipeError, SystemExit):
        return None
    return args


def write_stage_report(
    command: StageCommand, target: Path, environment: Mapping[str, str]
) -> ReportOutcome:
    """Lower the RUN line's input through its whole pipeline (from its --start-after) and write
    the page to `target`; a reason instead when that cannot be done."""
    from ..lowering.catalog import catalog_for
    from ..lowering.report_html import write_html
    from ..lowering.stage_report import report_stages
    from ..tools.opt import split_input

    if command.input == "-":
        return ReportOutcome(
            why_not=f"RUN line {command.line} reads its input from a pipe",
            hint=by_hand(command, target),
        )
    stop = f"after stage '{command.stop_after}'" if command.stop_after else "after the pipeline"
    note = f"RUN line {command.line} checks the IR {stop}."
    try:
        text = Path(command.input).read_text(encoding="utf-8")
        if command.split_input_file:
            note += " The file is split at '// -----': this is its first part."
            text = split_input(text)[0]
        with _suite_environment({**environment, **dict(command.env)}):
            pipeline = catalog_for(command.pipelines_dir).get(command.pipeline)
            report = report_stages(
                text,
                pipeline,
                source_name=command.input,
                start_after=command.start_after,
                note=note,
            )
        checked = command.stop_after or pipeline.stages[-1].name
        write_html(dataclasses.replace(report, checked=checked), target)
    except (MlirpipeError, OSError, UnicodeDecodeError) as exc:
        # No by-hand command here: it would lower (or read, or write) the same way and fail so.
        reason = exc.format() if isinstance(exc, MlirpipeError) else str(exc)
        return ReportOutcome(why_not=reason.strip().splitlines()[0])
    return ReportOutcome(path=str(target))


@contextlib.contextmanager
def _suite_environment(environment: Mapping[str, str]) -> Iterator[None]:
    """The suite's pipeline folders, pass modules and tool folders, as RUN lines see them."""
    saved = dict(os.environ)
    os.environ.update({k: v for k, v in environment.items() if k.startswith(_ENVIRONMENT)})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def report_failed_file(runner, path: Path, verdict: FileVerdict) -> ReportOutcome | None:
    """The stage report of a file whose failing RUN line ran `mlirpipe-opt --pipeline`, written
    to `Output/NAME.stages.html` (None for any other failure). The lowering runs again, in a
    forked child unless the run's isolation is `none`."""
    import importlib.util

    import lit.TestRunner

    from .. import contain

    command = stage_command(verdict) if not verdict.crash else None
    if command is None or importlib.util.find_spec("torch_mlir") is None:
        return None  # no MLIR bindings (the core install): the failing RUN line says so
    command = dataclasses.replace(
        command, pipelines_dir=(*command.pipelines_dir, *runner.config.pipeline_dirs)
    )
    test = runner.make_test(path)
    _, tmp_base = lit.TestRunner.getTempPaths(test)
    target = Path(tmp_base + REPORT_SUFFIX)
    environment = dict(test.config.environment)
    if runner.config.isolation == "none" or not contain.is_available():
        return write_stage_report(command, target, environment)
    ended = contain.run_contained(
        lambda: write_stage_report(command, target, environment),
        timeout=runner.config.timeout or None,
    )
    if ended.ok:
        return ended.value
    detail = ended.detail.strip().splitlines()[-1] if ended.detail.strip() else ended.kind
    return ReportOutcome(why_not=f"lowering the file again for the report failed: {detail}")
