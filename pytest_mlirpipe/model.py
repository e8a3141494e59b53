"""Shared data of the project: source locations, pipeline specs, stage snapshots, verdicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import lit.Test


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a user's file; `line` and `col` are 1-based, 0 when unknown."""

    path: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line and self.col:
            return f"{self.path}:{self.line}:{self.col}"
        if self.line:
            return f"{self.path}:{self.line}"
        return self.path


class IRLevel(StrEnum):
    """The abstraction level a pipeline takes or produces."""

    TORCH = "torch"
    ONNX = "onnx"
    TOSA = "tosa"
    LINALG_ON_TENSORS = "linalg-on-tensors"
    LLVM = "llvm"


# `import_torch(to=...)` -> torch_mlir.fx.export_and_import's output_type.
IMPORT_TARGETS: dict[str, str] = {
    "torch": "raw",  # the torch dialect as imported: the input of the torch-to-linalg pipeline
    "linalg": "linalg-on-tensors",
    "tosa": "tosa",
}


class ResultCode(StrEnum):
    """A file test's verdict in lit's vocabulary: one member per `lit.Test.ResultCode`, by
    the same name (`lit_code` is lit's own object), failing where lit's fails."""

    PASS = "PASS"
    FLAKYPASS = "FLAKYPASS"
    FIXED = "FIXED"
    XFAIL = "XFAIL"
    FAIL = "FAIL"
    XPASS = "XPASS"
    UNRESOLVED = "UNRESOLVED"
    UNSUPPORTED = "UNSUPPORTED"
    TIMEOUT = "TIMEOUT"
    SKIPPED = "SKIPPED"
    EXCLUDED = "EXCLUDED"

    @property
    def is_failure(self) -> bool:
        return self in _LIT_FAILURES

    @property
    def lit_code(self) -> lit.Test.ResultCode:
        import lit.Test

        return getattr(lit.Test, self.value)

    @classmethod
    def of(cls, code: lit.Test.ResultCode) -> ResultCode:
        """Ours for lit's `code`."""
        return cls(code.name)


_LIT_FAILURES = frozenset(
    {ResultCode.FAIL, ResultCode.XPASS, ResultCode.UNRESOLVED, ResultCode.TIMEOUT}
)


class ExecutionVerdict(StrEnum):
    """The execution checker's verdict on one case through one pipeline: its results
    matched torch's, it failed to lower, compile, run or match, or its compiled code was
    still running at the time limit."""

    PASS = "PASS"
    FAIL = "FAIL"
    TIMEOUT = "TIMEOUT"

    @property
    def is_failure(self) -> bool:
        return self is not ExecutionVerdict.PASS


class SweepVerdict(StrEnum):
    """A sweep entry's verdict (`mlirpipe sweep`), in the summary's column order: it passed,
    the compiler miscompiled, refused or crashed on it, torch could not run it, or the
    harness itself failed. Only the compiler's own failures count as failures."""

    PASS = "PASS"
    MISMATCH = "MISMATCH"
    NOT_LOWERED = "NOT-LOWERED"
    CRASH = "CRASH"
    TORCH = "TORCH"
    HARNESS = "HARNESS"

    @property
    def is_failure(self) -> bool:
        return self in (SweepVerdict.MISMATCH, SweepVerdict.NOT_LOWERED, SweepVerdict.CRASH)


@dataclass(frozen=True, slots=True)
class Stage:
    """One named step of a pipeline: a textual pass-pipeline fragment and why it is there."""

    name: str
    passes: tuple[str, ...]
    reason: str
    location: Location
    cpu: str | None = None  # the feature whose [stage.cpu.FEATURE] table this host took

    @property
    def pipeline_text(self) -> str:
        """The stage's passes as one textual pipeline fragment (no `builtin.module(...)` anchor)."""
        return ",".join(self.passes)


@dataclass(frozen=True, slots=True)
class ExternalTool:
    """An `*-opt` program that runs a pipeline's stages instead of the in-process bindings."""

    command: str  # an absolute path, or a name looked up in the tool folders and on PATH
    location: Location  # the pipeline file's `tool = ...` key
    timeout: float | None = None  # seconds one run of the tool may take

    @property
    def name(self) -> str:
        return self.command.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A named, ordered list of stages, with the IR level it takes and the one it produces."""

    name: str
    description: str
    input: IRLevel
    output: IRLevel
    stages: tuple[Stage, ...]
    location: Location
    extends: str | None = None
    tool: ExternalTool | None = None  # None: the stages run in-process

    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stage_index(self, name: str) -> int:
        for i, stage in enumerate(self.stages):
            if stage.name == name:
                return i
        raise KeyError(name)

    def stage_before(self, name: str) -> str | None:
        """The name of the stage that runs just before `name` (None for the first)."""
        i = self.stage_index(name)
        return self.stages[i - 1].name if i > 0 else None

    @property
    def pipeline_text(self) -> str:
        """All stages as one `builtin.module(...)` pass pipeline."""
        return "builtin.module(" + ",".join(s.pipeline_text for s in self.stages) + ")"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One MLIR diagnostic, with its location mapped to the user's file where possible."""

    severity: str
    message: str
    location: Location | None
    notes: tuple[Diagnostic, ...] = ()

    def format(self) -> str:
        """mlir-opt's form: `file:line:col: error: message`, notes indented below."""
        where = f"{self.location}: " if self.location else ""
        lines = [f"{where}{self.severity}: {self.message}"]
        for note in self.notes:
            lines.extend("  " + ln for ln in note.format().splitlines())
        return "\n".join(lines)


class LazyText:
    """Text rendered on first use (IR printing costs more than the passes that made the IR)."""

    __slots__ = ("_render", "_text")

    def __init__(self, text: str | None = None, render: Callable[[], str] | None = None):
        self._text = text
        self._render = render

    def get(self) -> str | None:
        if self._text is None and self._render is not None:
            self._text = self._render()
            self._render = None
        return self._text


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The IR after one stage, as the stage runner saw it (printed when first asked for)."""

    stage: str
    passes: tuple[str, ...]
    seconds: float
    diagnostics: tuple[Diagnostic, ...] = ()
    text: LazyText = field(default_factory=LazyText)
    # What the stage's passes printed (stdout, stderr), kept under a stage-prefix cache so a
    # prefix served from it prints the same remarks and statistics again.
    printed: tuple[str, str] = ("", "")

    @property
    def ir(self) -> str | None:
        return self.text.get()
