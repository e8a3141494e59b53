"""Miscompile bisection: the first stage after which a model's lowered code computes wrongly."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..model import IRLevel, Location, Pipeline, Stage
from .commands import PLAIN, CommandContext

RIGHT, WRONG, UNKNOWN = "right", "wrong", "unknown"
DIFF_LINES = 60  # diff lines a report shows; the full IR is in the files it names
REFERENCE = "refbackend"  # the shipped pipeline whose stages finish every snapshot
_ABI_STAGE = "munge-calling-conventions"
_SKIPPED_STAGE = "buffer-deallocation"  # see _reference_from


@dataclass(frozen=True, slots=True)
class Level:
    """How far a snapshot is lowered, and the trusted stages ("shipped pipeline:stage") that
    take IR of this level to the LLVM dialect."""

    name: str
    recognised_by: str
    tail: tuple[str, ...]


def _reference_from(first: str) -> tuple[str, ...]:
    """refbackend's stages from `first` on. Its buffer-deallocation stage is left out: a
    buffer the tail does not free leaks once per probe, while running it after a pipeline's
    own deallocation would free twice."""
    names = (
        "generalize-tensor-pad",
        "bufferize",
        "finalizing-bufferize",
        _SKIPPED_STAGE,
        _ABI_STAGE,
        "linalg-to-loops",
        "lower-to-cf",
        "expand-ops-for-llvm",
        "convert-to-llvm",
    )
    return tuple(f"{REFERENCE}:{n}" for n in names[names.index(first) :] if n != _SKIPPED_STAGE)


# Most lowered last; the first level whose test matches a snapshot decides its tail.
LEVELS: tuple[Level, ...] = (
    Level(
        "llvm",
        "only llvm.* ops",
        ("reconcile-unrealized-casts",),  # nothing to lower; a pass that changes nothing here
    ),
    Level(
        "cfg",
        "no linalg, tm_tensor, scf or affine op, no tensor type",
        _reference_from("expand-ops-for-llvm"),
    ),
    Level("loops", "scf or affine ops, no linalg op", _reference_from("lower-to-cf")),
    Level("buffers", "memrefs and linalg or tm_tensor ops", _reference_from(_ABI_STAGE)),
    Level(
        "partial-buffers",
        "bufferization.to_buffer / to_tensor ops",
        _reference_from("finalizing-bufferize"),
    ),
    Level("tensors", "linalg on tensors, no memref type", _reference_from("generalize-tensor-pad")),
    Level(
        "tosa",
        "tosa.* ops",
        ("tosa:tosa-to-linalg", *_reference_from("generalize-tensor-pad")),
    ),
    Level(
        "torch",
        "torch.* ops",
        (
            "torch-to-linalg:torch-backend",
            "torch-to-linalg:decompose-tanh-gelu",
            "torch-to-linalg:torch-to-linalg",
            *_reference_from("generalize-tensor-pad"),
        ),
    ),
    Level(
        "onnx",
        'torch.operator "onnx.*" ops (an ONNX import)',
        (
            "onnx-linalg:onnx-to-torch",
            "onnx-linalg:decompose-tanh-gelu",
            "onnx-linalg:onnx-to-linalg",
            *_reference_from("generalize-tensor-pad"),
        ),
    ),
)
_OP = re.compile(r"^\s*(?:%[\w:#, ]+=\s*)?\"?([a-z_]+)\.[a-z_.]+", re.M)


def level_of(ir: str) -> Level:
    """The level of MLIR text, from its mix of dialects (see LEVELS)."""
    dialects = {m.group(1) for m in _OP.finditer(ir)} - {"builtin", "module"}
    tests = (  # least lowered first, but a module of llvm ops only has no memref type either
        ("llvm", lambda: not dialects - {"llvm"}),
        ("onnx", lambda: re.search(r'torch\.operator\s+"onnx\.', ir) is not None),
        ("torch", lambda: "torch" in dialects),
        ("tosa", lambda: "tosa" in dialects),
        ("tensors", lambda: "memref<" not in ir),
        ("partial-buffers", lambda: re.search(r"bufferization\.to_(buffer|tensor)\b", ir)),
        ("buffers", lambda: dialects & {"linalg", "tm_tensor"}),
        ("loops", lambda: dialects & {"scf", "affine"}),
    )
    by_name = {level.name: level for level in LEVELS}
    for name, test in tests:
        if test():
            return by_name[name]
    return by_name["cfg"]


def has_abi(ir: str) -> bool:
    """Whether the entry points already have their calling convention (a C interface)."""
    return "llvm.emit_c_interface" in ir or level_of(ir).name == "llvm"


def tail_for(ir: str, reference: Callable[[str], Pipeline]) -> tuple[Level, Pipeline]:
    """The level of `ir` and the trusted pipeline that lowers it to the LLVM dialect;
    `reference(name)` gives a shipped pipeline. The ABI stage runs only when `ir` has no
    calling convention yet, and then first among the stages after bufferization."""
    level = level_of(ir)
    names = list(level.tail)
    abi = f"{REFERENCE}:{_ABI_STAGE}"
    if has_abi(ir):
        names = [n for n in names if n != abi]
    elif abi not in names and level.name != "llvm":
        names.insert(0, abi)
    stages = []
    for name in names:
        pipeline, _, stage = name.rpartition(":")
        if not pipeline:
            stages.append(Stage(stage, (stage,), "nothing left to lower", Location("bisect")))
            continue
        pipe = reference(pipeline)
        stages.append(pipe.stages[pipe.stage_index(stage)])
    tail = Pipeline(
        f"tail-{level.name}",
        f"trusted lowering of {level.name}-level IR to the LLVM dialect",
        IRLevel.LINALG_ON_TENSORS,
        IRLevel.LLVM,
        tuple(stages),
        Location("bisect"),
    )
    return level, tail


@functools.cache
def shipped_catalog():
    """The shipped pipelines only: a user's pipeline folder may shadow their names."""
    from ..lowering.catalog import is_known_pass, known_pass_names
    from ..lowering.spec import load_catalog

    return load_catalog((), pass_exists=is_known_pass, known_passes=known_pass_names)


@dataclass(frozen=True, slots=True)
class Probe:
    """One snapshot finished by its trusted tail, run and compared: the verdict and why."""

    point: str  # "input" or the stage the snapshot was taken after
    level: str
    verdict: str  # RIGHT, WRONG, UNKNOWN
    detail: str = ""  # the comparison's first line, or why the tail could not run it

    def format(self) -> str:
        where = "the imported model" if self.point == "input" else f"after '{self.point}'"
        text = f"{where} ({self.level} tail): {self.verdict}"
        return text + (f": {self.detail}" if self.detail else "")


# (snapshot text, its tail) -> (verdict, detail)
ProbeFunction = Callable[[str, Pipeline], tuple[str, str]]


def search(count: int, verdict_of: Callable[[int], str]) -> tuple[int, int] | None:
    """Binary search over points 0..count (0: the input, i: after stage i; `count` is known
    wrong) for the first wrong one. Returns (lo, hi): point `lo` is right, `hi` is wrong and
    every point between them is unknown (hi == lo + 1 names one stage); None when point 0 is
    not right. A probe that cannot tell (UNKNOWN) is stepped around: the nearest point to the
    middle that can tell is probed instead."""
    if verdict_of(0) != RIGHT:
        return None
    lo, hi = 0, count
    while hi - lo > 1:
        mid = (lo + hi) // 2
        order = sorted(range(lo + 1, hi), key=lambda i: (abs(i - mid), i))
        for i in order:
            verdict = verdict_of(i)
            if verdict != UNKNOWN:
                lo, hi = (i, hi) if verdict == RIGHT else (lo, i)
                break
        else:
            break
    return lo, hi


@dataclass(frozen=True, slots=True)
class Bisection:
    """Where a pipeline's lowering first goes wrong: the stage (or the stages it could not
    tell apart), its passes and IR diff, and the probes that led there; plain data."""

    pipeline: str
    stage_count: int
    suspects: tuple[str, ...] = ()  # one stage when found; several when probes could not tell
    passes: tuple[str, ...] = ()  # of the suspect stages
    previous: str = ""  # the stage before the first suspect ("" for the input)
    diff: str = ""
    probes: tuple[Probe, ...] = ()
    why_not: str = ""  # why no stage is named
    files: str = ""  # where the IR before and after is, and how to rerun the stage

    def format(self) -> str:
        probes = "".join(f"\n    {p.format()}" for p in self.probes)
        how = (
            f"  bisection over the {self.stage_count} stages' snapshots, each lowered to LLVM "
            f"by a trusted tail, run and compared ({len(self.probes)} probes):{probes}"
        )
        if not self.suspects:
            return f"bisection named no stage of pipeline '{self.pipeline}': {self.why_not}\n{how}"
        if len(self.suspects) == 1:
            head = f"outputs diverge after stage '{self.suspects[0]}'"
        else:
            head = "outputs diverge in one of the stages " + ", ".join(
                f"'{s}'" for s in self.suspects
            )
        head += f" of pipeline '{self.pipeline}' (passes: {', '.join(self.passes)})"
        if len(self.suspects) > 1:
            head += f"\n  {self.why_not}"
        lines = [head, how]
        if self.diff:
            lines.append(f"  IR change (against the IR after '{self.previous or 'input'}'):")
            lines.extend("    " + ln for ln in self.diff.splitlines())
        if self.files:
            lines.append(f"  {self.files}")
        return "\n".join(lines)


def stage_diff(before: str, after: str, before_name: str, after_name: str) -> str:
    """A unified diff of the IR before and after, at most DIFF_LINES lines."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            fromfile=before_name,
            tofile=after_name,
            lineterm="",
            n=2,
        )
    )
    if not lines:
        return "(the stage changed nothing in the printed IR)"
    if len(lines) > DIFF_LINES:
        more = len(lines) - DIFF_LINES
        lines = [*lines[:DIFF_LINES], f"... {more} more diff lines"]
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Point:
    name: str  # "input" or the stage after which the text was taken
    text: str


def find_divergence(
    source: str,
    pipeline: Pipeline,
    probe: ProbeFunction,
    *,
    source_name: str = "<input>",
    pass_options=None,
    keep: Callable[[], Path] | None = None,
    known_wrong: bool = False,
    commands: CommandContext = PLAIN,
) -> Bisection:
    """The first stage of `pipeline` after which the lowered `source` computes wrongly.

    Each stage's snapshot is lowered the rest of the way by the trusted tail of its level
    (tail_for) and judged by `probe`. The search is binary (see `search`); with `known_wrong`
    (the caller ran the whole pipeline and its results were wrong) the last snapshot is not
    probed. `keep()`, when given, makes a folder for the IR before and after the stage named;
    `commands` what the command rerunning the stage needs (pipeline folders, pass modules)."""
    from ..lowering.stages import run_stages

    run = run_stages(
        source,
        pipeline,
        source_name=source_name,
        capture=True,
        pass_options=pass_options or {},
    )
    points = [_Point("input", source)] + [_Point(s.stage, s.ir or "") for s in run.snapshots]
    probes: dict[int, Probe] = {}

    def verdict_of(i: int) -> str:
        reference = shipped_catalog().get
        level, tail = tail_for(points[i].text, reference)
        verdict, detail = probe(points[i].text, tail)
        probes[i] = Probe(points[i].name, level.name, verdict, detail)
        return verdict

    count = len(pipeline.stages)
    if not known_wrong and verdict_of(count) != WRONG:
        return Bisection(
            pipeline.name, count, probes=(probes[count],), why_not=_not_wrong(probes[count])
        )
    found = search(count, verdict_of)
    done = tuple(probes[i] for i in sorted(probes))
    if found is None:
        return Bisection(pipeline.name, count, probes=done, why_not=_why_not(probes[0]))
    lo, hi = found
    suspects = [pipeline.stages[i - 1] for i in range(lo + 1, hi + 1)]
    return Bisection(
        pipeline.name,
        count,
        tuple(s.name for s in suspects),
        tuple(p for s in suspects for p in s.passes),
        points[lo].name if lo else "",
        stage_diff(points[lo].text, points[hi].text, _after(points[lo]), _after(points[hi])),
        done,
        "" if hi == lo + 1 else "the snapshots between them could not be run (see the probes)",
        _keep_files(points[lo], points[hi], pipeline, keep, commands) if keep is not None else "",
    )


def _after(point: _Point) -> str:
    return "input" if point.name == "input" else f"after {point.name}"


def _not_wrong(last: Probe) -> str:
    if last.verdict == RIGHT:
        return "the pipeline's own lowering computes the right results: outputs do not diverge"
    return f"the pipeline's own lowering could not be run ({last.detail})"


def _why_not(first: Probe) -> str:
    if first.verdict == WRONG:
        return (
            "the imported model lowered by the trusted tail alone is wrong too: the import, the "
            "expected results or the tail is at fault, not a stage of this pipeline"
        )
    return f"the imported model could not be run through the trusted tail ({first.detail})"


def _keep_files(
    before: _Point, after: _Point, pipeline: Pipeline, keep, commands: CommandContext
) -> str:
    """Write the IR before and after the suspect stages; say how to run them again."""
    folder = keep()
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in after.name)
    start = folder / f"{safe}.input.mlir"
    end = folder / f"{safe}.output.mlir"
    start.write_text(before.text)
    end.write_text(after.text)
    start_after = [] if before.name == "input" else ["--start-after", before.name]
    rerun = commands.line(
        "mlirpipe-opt", start, "--pipeline", pipeline.name, *start_after, "--stop-after", after.name
    )
    return f"IR before and after: {start} and {end}; rerun the stage with: {rerun}"
