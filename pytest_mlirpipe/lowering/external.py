"""Run a pipeline's stages with an external `*-opt` tool: one run, its IR dumps split by stage."""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..contain import signal_name
from ..errors import IRParseError, PipelineSpecError, Problem, StageFailure
from ..model import Diagnostic, ExternalTool, LazyText, Location, Snapshot, Stage
from .pipeline_text import parse_pipeline

# Folders searched for a tool named without a path, before PATH (os.pathsep-separated); a file
# test suite sets it from its `mlirpipe_tool_dirs`.
TOOL_DIRS_ENV = "MLIRPIPE_TOOL_DIRS"
# A module pass that leaves the IR alone: put after each stage but the last, with
# --mlir-print-ir-after naming only it, its dumps are the IR after each stage.
MARKER = "print-op-stats"

_HEADER = re.compile(
    r"^// -----// IR Dump (?P<when>After|Before) (?P<name>.+?)(?P<failed> Failed)?"
    r"(?:: (?P<arg>[^\s{]+)\S*| \((?P<arg_old>[^)]*)\)) //----- //$"
)
_DIAG = re.compile(
    r"^(?P<path>[^\s:][^:]*?)(?::(?P<line>\d+)(?::(?P<col>\d+))?)?: "
    r"(?P<severity>error|warning|remark|note): (?P<message>.*)$"
)
_CARET = re.compile(r"^\s*\^\s*$")
_TIMING_ROW = re.compile(r"^\s+(?P<seconds>\d+\.\d+) \(\s*[\d.]+%\)  (?P<name>\S.*)$")
_NOT_PASSES = frozenset({"Parser", "Output", "Rest", "Total"})


def find_tool(tool: ExternalTool) -> str | None:
    """The executable `tool` names: its path, else the first in $MLIRPIPE_TOOL_DIRS, else on
    PATH; None when there is none."""
    if "/" in tool.command:
        given = Path(tool.command)
        return str(given) if given.is_file() and os.access(given, os.X_OK) else None
    dirs = [d for d in os.environ.get(TOOL_DIRS_ENV, "").split(os.pathsep) if d]
    found = shutil.which(tool.command, path=os.pathsep.join(dirs)) if dirs else None
    return found or shutil.which(tool.command)


def require_tool(tool: ExternalTool, pipeline: str) -> str:
    """The tool's executable, or a PipelineSpecError saying where it was looked for."""
    found = find_tool(tool)
    if found is not None:
        return found
    if "/" in tool.command:
        where = f"{tool.command}, which does not exist or is not executable"
        hint = "build it, or fix the path (a relative one is relative to the pipeline file)"
    else:
        where = f"{tool.command}, which is not in ${TOOL_DIRS_ENV} (mlirpipe_tool_dirs) or on PATH"
        hint = (
            "build it and add its folder to mlirpipe_tool_dirs or PATH, or give its path: "
            f'tool = "build/bin/{tool.command}" (relative to the pipeline file)'
        )
    raise PipelineSpecError(
        Problem(f"pipeline '{pipeline}' runs its stages with {where}", tool.location, hint)
    )


def tool_passes(tool: ExternalTool) -> frozenset[str] | None:
    """The passes and pass pipelines the tool registers (as its `--help` lists them); None when
    the tool is not found or cannot say."""
    path = find_tool(tool)
    if path is None:
        return None
    st = os.stat(path)
    return _passes_of(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _passes_of(path: str, _size: int, _mtime: int) -> frozenset[str] | None:
    try:
        done = subprocess.run(
            [path, "--help"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = parse_help_passes(done.stdout)
    return frozenset(names) if names else None


def parse_help_passes(text: str) -> list[str]:
    """Pass names from an MLIR opt tool's `--help`: the least-indented options under its
    "Passes:" and "Pass Pipelines:" headings (deeper ones are the passes' own options)."""
    names: list[str] = []
    indent = None
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("Passes:", "Pass Pipelines:"):
            inside, indent = True, None
            continue
        if not inside or not stripped.startswith("--"):
            continue
        depth = len(line) - len(line.lstrip())
        if indent is None:
            indent = depth
        if depth < indent:
            inside = False
        elif depth == indent:
            # A name too long for its column runs into the description's dash.
            names.append(stripped[2:].split()[0].split("=")[0].rstrip("-"))
    return names


@dataclass(slots=True)
class _Output:
    """The tool's stderr, split: the IR after each marked stage, and for each stage the text
    it printed before it ended (diagnostics and the passes' own output)."""

    dumps: list[str] = field(default_factory=list)
    texts: list[list[str]] = field(default_factory=lambda: [[]])
    timing: list[tuple[str, float]] = field(default_factory=list)
    last_before: str | None = None  # the pass named by the last "IR Dump Before" header


def split_output(stderr: str) -> _Output:
    """Split what the tool wrote to stderr at its IR dumps (see _Output)."""
    out = _Output()
    lines = stderr.splitlines()
    lines, out.timing = _timing_report(lines)
    i = 0
    while i < len(lines):
        m = _HEADER.match(lines[i])
        if m is None:
            out.texts[-1].append(lines[i])
            i += 1
            continue
        ir, i = _dumped_ir(lines, i + 1)
        arg = m.group("arg") or m.group("arg_old")
        if m.group("when") == "Before":
            out.last_before = arg
        elif arg == MARKER and not m.group("failed"):
            _drop_op_stats(out.texts[-1])
            out.dumps.append(ir)
            out.texts.append([])
    return out


def _dumped_ir(lines: Sequence[str], i: int) -> tuple[str, int]:
    """The IR that starts at line `i` (a top-level op, up to its closing brace at column 0)
    and the index after it and the blank lines that follow."""
    start = i
    if i < len(lines) and lines[i].rstrip().endswith("{"):
        while i < len(lines) and lines[i] != "}":
            i += 1
    i = min(i + 1, len(lines))
    ir = "\n".join(lines[start:i]) + "\n"
    while i < len(lines) and not lines[i].strip():
        i += 1
    return ir, i


def _drop_op_stats(text: list[str]) -> None:
    """Remove what the marker pass printed (it ends the text before its dump)."""
    for j in range(len(text) - 1, -1, -1):
        if text[j].startswith("Operations encountered:"):
            del text[j:]
            return


def _timing_report(lines: list[str]) -> tuple[list[str], list[tuple[str, float]]]:
    """The lines before `--mlir-timing`'s report, and its top-level rows (name, seconds)."""
    for i, line in enumerate(lines):
        if "... Execution time report ..." in line and i > 0 and lines[i - 1].startswith("===-"):
            rows = [_TIMING_ROW.match(ln) for ln in lines[i + 1 :]]
            timing = [(m.group("name"), float(m.group("seconds"))) for m in rows if m]
            return lines[: i - 1], timing
    return lines, []


def stage_seconds(timing: Sequence[tuple[str, float]], stages: int) -> list[float]:
    """Seconds of each stage: the top-level passes between marker rows, summed (NaN for each
    stage when the tool gave no timing report)."""
    if not timing:
        return [math.nan] * stages
    seconds = [0.0]
    for name, value in timing:
        if name.startswith("PrintOpStats"):
            seconds.append(0.0)
        elif name not in _NOT_PASSES:
            seconds[-1] += value
    return (seconds + [math.nan] * stages)[:stages]


def parse_diagnostics(lines: Sequence[str], source_name: str) -> tuple[list[Diagnostic], list[str]]:
    """The diagnostics among the lines the tool printed (`<stdin>` located in `source_name`,
    notes under the diagnostic before them, the source line and caret it quotes left out),
    and the other lines (what the passes printed themselves)."""
    diags: list[Diagnostic] = []
    other: list[str] = []
    for i, line in enumerate(lines):
        m = _DIAG.match(line)
        if m is not None:
            loc = _location(m, source_name)
            if m.group("severity") == "note" and diags:
                diags[-1] = _with_note(diags[-1], Diagnostic("note", m.group("message"), loc))
                continue
            diags.append(Diagnostic(m.group("severity"), m.group("message"), loc))
        elif diags and _is_quote(lines, i):
            continue
        elif diags and (line.startswith((" ", "^", '"', "}")) or line.startswith("%")):
            diags[-1] = _continued(diags[-1], line)
        else:
            other.append(line)
    return diags, other


def _location(m: re.Match, source_name: str) -> Location | None:
    if not m.group("line") or m.group("line") == "0":
        return None
    path = source_name if m.group("path") in ("<stdin>", "-") else m.group("path")
    return Location(path, int(m.group("line")), int(m.group("col") or 0))


def _is_quote(lines: Sequence[str], i: int) -> bool:
    """Whether line `i` is a quoted source line or the caret under it."""
    return bool(_CARET.match(lines[i])) or (i + 1 < len(lines) and bool(_CARET.match(lines[i + 1])))


def _with_note(diag: Diagnostic, note: Diagnostic) -> Diagnostic:
    return Diagnostic(diag.severity, diag.message, diag.location, (*diag.notes, note))


def _continued(diag: Diagnostic, line: str) -> Diagnostic:
    """`diag` with `line` added to its message (or its last note's)."""
    if diag.notes:
        last = diag.notes[-1]
        note = Diagnostic(last.severity, f"{last.message}\n{line}", last.location)
        return Diagnostic(diag.severity, diag.message, diag.location, (*diag.notes[:-1], note))
    return Diagnostic(diag.severity, f"{diag.message}\n{line}", diag.location, diag.notes)


@dataclass(frozen=True, slots=True)
class _Run:
    """One run of the tool: which executable, on what input, for which stages."""

    tool: ExternalTool
    path: str
    pipeline: str
    stages: tuple[Stage, ...]
    source: str
    source_name: str
    verify_each: bool


def run_tool_stages(
    tool: ExternalTool,
    source: str,
    *,
    pipeline: str,
    stages: Sequence[Stage],
    source_name: str,
    verify_each: bool = True,
) -> list[Snapshot]:
    """Run `stages` on the MLIR text `source` in one run of `tool`; one snapshot per stage (its
    IR, the diagnostics and output of its passes, its seconds from the tool's timing report).
    A failing, crashing or hanging run raises StageFailure naming the stage (and the pass)."""
    run = _Run(
        tool,
        require_tool(tool, pipeline),
        pipeline,
        tuple(stages),
        source,
        source_name,
        verify_each,
    )
    _check_marker(run)
    argv = [
        *_command(run, run.stages),
        f"--mlir-print-ir-after={MARKER}",
        "--mlir-timing",
        "--mlir-timing-display=tree",
    ]
    try:
        done = _call(argv, source, tool.timeout)
    except subprocess.TimeoutExpired as exc:
        raise _failure(run, split_output(_text(exc.stderr)), None) from None
    out = split_output(done.stderr)
    if done.returncode != 0 or len(out.dumps) != len(run.stages) - 1:
        raise _failure(run, out, done.returncode)
    seconds = stage_seconds(out.timing, len(run.stages))
    snapshots = []
    for i, stage in enumerate(run.stages):
        ir = out.dumps[i] if i < len(out.dumps) else done.stdout.rstrip("\n") + "\n"
        diags, printed = parse_diagnostics(out.texts[i], source_name)
        text = "\n".join(printed) + "\n" if printed else ""
        snapshots.append(
            Snapshot(stage.name, stage.passes, seconds[i], tuple(diags), LazyText(ir), ("", text))
        )
    return snapshots


def _command(run: _Run, stages: Sequence[Stage]) -> list[str]:
    """The tool's command line for `stages` (a marker pass between each two), input on stdin."""
    text = f",{MARKER},".join(_stage_text(s) for s in stages)
    argv = [
        run.path,
        "-",
        "-o",
        "-",
        "--mlir-disable-threading",
        f"--pass-pipeline=builtin.module({text})",
    ]
    return argv if run.verify_each else [*argv, "--verify-each=false"]


def _stage_text(stage: Stage) -> str:
    """The stage's passes as one fragment, without a `builtin.module(...)` around them."""
    out: list[str] = []
    for fragment in stage.passes:
        elements = parse_pipeline(fragment)
        if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].is_anchor:
            elements = tuple(elements[0].children or ())
        out.extend(el.text for el in elements)
    return ",".join(out)


def _call(argv: Sequence[str], source: str, timeout: float | None):
    return subprocess.run(
        argv,
        input=source,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
    )


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def _check_marker(run: _Run) -> None:
    """The marker must be the tool's and no stage's own (its dumps would end stages early)."""
    if len(run.stages) < 2:
        return
    for stage in run.stages[:-1]:
        if any(
            p.name == MARKER
            for f in stage.passes
            for el in parse_pipeline(f)
            for p, _ in el.passes()
        ):
            raise PipelineSpecError(
                Problem(
                    f"stage '{stage.name}' of pipeline '{run.pipeline}' runs {MARKER}, which "
                    "marks where each stage ends when a tool runs the stages",
                    stage.location,
                    f"move {MARKER} to the last stage, or run the pipeline in-process (no tool)",
                )
            )
    passes = tool_passes(run.tool)
    if passes is not None and MARKER not in passes:
        raise PipelineSpecError(
            Problem(
                f"{run.tool.name} does not register {MARKER}, which the stage runner puts "
                "after each stage to see where it ends",
                run.tool.location,
                "run one stage at a time (--start-after/--stop-after), or register MLIR's "
                "transforms passes in the tool",
            )
        )


def _failure(run: _Run, out: _Output, status: int | None) -> StageFailure:
    """The StageFailure of a run that failed (status 1), crashed (a signal), exited otherwise
    or timed out (status None), in the stage after the last one whose dump it printed."""
    index = min(len(out.dumps), len(run.stages) - 1)
    stage = run.stages[index]
    stage_input = out.dumps[index - 1] if index else run.source
    diags, printed = parse_diagnostics(out.texts[index], run.source_name)
    if status is None:
        reason = (
            f"{run.tool.name} did not finish within {run.tool.timeout:g} s (the "
            "pipeline's timeout) and was killed"
        )
        return StageFailure(
            run.pipeline, stage.name, stage.passes, diags, reason, stage_input=stage_input
        )
    culprit, ran = _failing_pass(run, stage, stage_input)
    if index == 0 and not ran and status > 0 and diags:
        raise IRParseError(run.source_name, [d for d in diags if d.severity == "error"])
    in_pass = f"pass '{culprit}'" if culprit else "one of its passes"
    if status < 0:
        reason = f"{run.tool.name} crashed in {in_pass}: killed by {signal_name(-status)}"
    elif status == 1 and diags:
        reason = f"{in_pass} failed"
    else:
        reason = f"{run.tool.name} exited with status {status} in {in_pass}"
    if printed and (status != 1 or not diags):
        diags.append(
            Diagnostic("note", f"{run.tool.name} printed:\n" + "\n".join(printed[:20]), None)
        )
    return StageFailure(
        run.pipeline, stage.name, stage.passes, diags, reason, stage_input=stage_input
    )


def _failing_pass(run: _Run, stage: Stage, stage_input: str) -> tuple[str | None, bool]:
    """(the pass the stage fails or crashes in, whether any pass ran), from running the stage
    again on its input with the IR printed before each pass: the last one printed failed."""
    argv = [*_command(run, [stage]), "--mlir-print-ir-before-all"]
    try:
        done = _call(argv, stage_input, run.tool.timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None, True
    out = split_output(done.stderr)
    return out.last_before, out.last_before is not None
