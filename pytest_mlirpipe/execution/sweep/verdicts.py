"""A sweep entry's verdict: PASS, MISMATCH, NOT-LOWERED, CRASH, TORCH or HARNESS, with its stage."""

from __future__ import annotations

import re
import traceback
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ...errors import MlirpipeError, first_line
from ...model import ExecutionVerdict, SweepVerdict
from ..refusal import TORCH, Refusal, refusal_of

if TYPE_CHECKING:
    from ..check import Outcome
    from ..results.compare import Comparison

# In the order of the summary's columns; what each means is in docs/guides/sweep.md.
VERDICTS = tuple(v.value for v in SweepVerdict)
DETAIL_CHARS = 300  # a detail is one line, cut to this length


@dataclass(frozen=True, slots=True)
class EntryResult:
    """One op × dtype × sample through one pipeline: plain data, one line of the JSONL file."""

    op: str
    dtype: str
    sample: int
    pipeline: str
    verdict: SweepVerdict  # its name is taken too
    detail: str = ""
    stage: str = ""  # where it stopped: export, eager, import, a pipeline stage, native, run
    pass_name: str = ""  # the pass that refused it, when known
    max_abs: float | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", SweepVerdict(self.verdict))

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.op, self.dtype, self.sample, self.pipeline)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": str(self.verdict)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EntryResult:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an entry's check came to, before it is tied to its entry."""

    verdict: SweepVerdict  # its name is taken too
    detail: str = ""
    stage: str = ""
    pass_name: str = ""
    max_abs: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", SweepVerdict(self.verdict))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= DETAIL_CHARS else line[: DETAIL_CHARS - 3] + "..."


def _message(text: str) -> str:
    """The first line of a formatted project error, without its location and `error:`."""
    first = text.strip().splitlines()[0] if text.strip() else "(no message)"
    return _one_line(first.split("error: ", 1)[-1])


def _refusal(message: str) -> str:
    """A legalization failure without the printed op after it; an op torch-mlir imported
    as an opaque `torch.operator` keeps its name."""
    named = re.search(r'torch\.operator".*?name = "([^"]+)"', message)
    short = re.split(r": %[\w#:]+ = ", message, maxsplit=1)[0]
    return _one_line(short + (f" ({named.group(1)})" if named else ""))


def verdict_of_refusal(refusal: Refusal) -> Verdict:
    """TORCH when torch refused the model, NOT-LOWERED (with stage and pass) for the compiler."""
    if refusal.by == TORCH:
        return Verdict(SweepVerdict.TORCH, _one_line(refusal.reason), refusal.stage)
    return Verdict(
        SweepVerdict.NOT_LOWERED, _refusal(refusal.reason), refusal.stage, refusal.pass_name
    )


def classify_error(exc: MlirpipeError) -> Verdict:
    """The verdict of a project error: the refusal it carries, else HARNESS (the project's)."""
    refusal = refusal_of(exc)
    if refusal is not None:
        return verdict_of_refusal(refusal)
    return Verdict(SweepVerdict.HARNESS, _message(exc.format()))


def classify_outcome(outcome: Outcome) -> Verdict:
    """The verdict of one pipeline's Outcome from ModelChecker.check."""
    if outcome.verdict is ExecutionVerdict.PASS:
        compared = outcome.comparison
        if compared is not None and compared.results and compared.unjudged == compared.results:
            drawn = compared.results[0].drawn
            why = f"random: too few draws to judge the values ({drawn})"
            return Verdict(SweepVerdict.TORCH, why, "compare")
        return Verdict(SweepVerdict.PASS, "", max_abs=outcome.max_abs)
    if outcome.refusal is not None:
        return verdict_of_refusal(outcome.refusal)
    if outcome.comparison is None:
        return Verdict(SweepVerdict.HARNESS, _message(outcome.error or "failed without a message"))
    return classify_comparison(outcome.comparison)


def classify_comparison(comparison: Comparison) -> Verdict:
    """A failed comparison: wrong values or shapes are a miscompile; a wrong number of
    results, or a dtype that differs only in signedness, is how the harness read them."""
    if comparison.count_problem:
        return Verdict(SweepVerdict.HARNESS, _one_line(comparison.count_problem), "compare")
    failed = [r for r in comparison.results if not r.ok]
    for r in failed:
        if r.kind == "dtype" and r.dtype.lstrip("u") == r.expected_dtype.lstrip("u"):
            return Verdict(SweepVerdict.HARNESS, _one_line(r.format()), "compare")
    first = failed[0] if failed else None
    # what differs and the errors; the first differing elements stay in the failure report
    detail = _one_line(" ".join(first.format().splitlines()[:2])) if first else "differs"
    return Verdict(SweepVerdict.MISMATCH, detail, "compare", max_abs=comparison.max_abs)


def classify_exception(exc: BaseException) -> Verdict:
    """A Python exception the project let escape: HARNESS, with where in the project it rose."""
    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if "pytest_mlirpipe" in frame.filename:
            path = frame.filename.split("pytest_mlirpipe", 1)[1].lstrip("/")
            where = f" (at {path}:{frame.lineno} in {frame.name})"
            break
    return Verdict(
        SweepVerdict.HARNESS, _one_line(f"{type(exc).__name__}: {first_line(exc)}") + where
    )


# Where a contained child was, from its last progress note (contain.note), as a stage name.
_NOTE_STAGES = (
    (re.compile(r"^stage '(?P<stage>[^']+)'"), None),
    (re.compile(r"^compiling the lowered module"), "native"),
    (re.compile(r"^running the compiled code"), "run"),
)


def stage_of_note(note: str | None) -> str:
    """The stage a contained child was in when it ended (before any note: the import)."""
    for pattern, stage in _NOTE_STAGES:
        m = pattern.search(note or "")
        if m:
            return stage or m.group("stage")
    return "import"
