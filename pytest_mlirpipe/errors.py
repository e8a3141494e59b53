"""The project's exception family; every user-facing message is formatted here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .model import Diagnostic, Location


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the user's input: what, where, and what to do about it."""

    message: str
    location: Location | None = None
    hint: str | None = None

    def format(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}error: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class MlirpipeError(Exception):
    """Base of every error the project reports to a user; `str()` is the full message."""

    def __init__(self, problems: Problem | Sequence[Problem]):
        self.problems: tuple[Problem, ...] = (
            (problems,) if isinstance(problems, Problem) else tuple(problems)
        )
        super().__init__(self.format())

    def format(self) -> str:
        return "\n".join(p.format() for p in self.problems)


class PipelineSpecError(MlirpipeError):
    """A pipeline file, or a pipeline or stage name, is wrong; all problems are listed at once."""


class UsageError(MlirpipeError):
    """A command-line or API argument is wrong."""


class IRParseError(MlirpipeError):
    """MLIR input that does not parse; carries the MLIR diagnostics located in the user's file."""

    def __init__(self, path: str, diagnostics: Sequence[Diagnostic]):
        self.path = path
        self.diagnostics = tuple(diagnostics)
        problems = [
            Problem(
                f"cannot parse MLIR: {d.message}",
                d.location or Location(path),
                "fix the IR at that position, or check that its dialects are registered "
                "(torch, linalg, tosa, ... are; a custom dialect is not)",
            )
            for d in self.diagnostics
        ] or [Problem("cannot parse MLIR (no diagnostic was given)", Location(path))]
        super().__init__(problems)


class StageFailure(MlirpipeError):
    """A stage of a pipeline failed: which stage, which passes, the diagnostics and a repro."""

    def __init__(
        self,
        pipeline: str | None,
        stage: str,
        passes: Sequence[str],
        diagnostics: Sequence[Diagnostic],
        reason: str,
        repro: str | None = None,
        stage_input: str | None = None,
    ):
        self.pipeline = pipeline
        self.stage = stage
        self.passes = tuple(passes)
        self.diagnostics = tuple(diagnostics)
        self.reason = reason
        self.repro = repro
        self.stage_input = stage_input  # the IR the stage started from, for a repro file
        super().__init__(Problem(reason))

    def with_repro(self, repro: str) -> StageFailure:
        return StageFailure(
            self.pipeline,
            self.stage,
            self.passes,
            self.diagnostics,
            self.reason,
            repro,
            self.stage_input,
        )

    def format(self) -> str:
        where = f"pipeline '{self.pipeline}', " if self.pipeline else ""
        lines = [
            f"error: {where}stage '{self.stage}' failed: {self.reason}",
            f"  passes: {','.join(self.passes)}",
        ]
        lines.extend(d.format() for d in self.diagnostics)
        if self.repro:
            lines.append(f"  reproduce with: {self.repro}")
        return "\n".join(lines)


# The modules an extra of the package brings (their top-level names) -> (extra, what it is).
EXTRAS: dict[str, tuple[str, str]] = {
    "torch_mlir": ("mlir", "the MLIR Python bindings (torch-mlir)"),
    "numpy": ("mlir", "numpy"),
    "torch": ("torch", "PyTorch"),
    "onnx": ("onnx", "ONNX"),
    "expecttest": ("sweep", "torch's OpInfo catalogue (expecttest)"),
    "scipy_openblas32": ("blas", "OpenBLAS (scipy-openblas32)"),
}


class MissingExtra(MlirpipeError, ImportError):
    """What was asked for needs a module that an extra of the package brings, and that extra is
    not installed (the core install runs lit suites' file tests only); an ImportError too, so
    code that imports a module optionally takes it as one."""

    def __init__(self, module: str):
        self.module = module
        self.extra, self.what = EXTRAS[module]
        super().__init__(Problem(self.format()))

    def format(self) -> str:
        return (
            f"error: this needs {self.what}, not installed here (no module '{self.module}'):"
            f" pip install 'pytest-mlirpipe[{self.extra}]'"
        )


def missing_extra(exc: ImportError) -> MissingExtra | None:
    """The extra to install for a failed import of one of its modules; None for any other."""
    top = (exc.name or "").split(".")[0]
    return MissingExtra(top) if isinstance(exc, ModuleNotFoundError) and top in EXTRAS else None


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, for a one-line report of it."""
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else "(no message)"


def close_matches(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Names among `candidates` that look like `name` (for "did you mean" hints)."""
    import difflib

    pool = sorted(set(candidates))
    found = difflib.get_close_matches(name, pool, n=n, cutoff=0.6)
    found += [c for c in pool if c.startswith(name) and c not in found][: max(0, n - len(found))]
    if not found:
        # Substring matches catch `bufferize` -> `one-shot-bufferize`.
        found = [c for c in pool if name in c or (len(c) > 3 and c in name)][:n]
    return found


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    found = close_matches(name, candidates)
    if not found:
        return None
    return "did you mean " + " or ".join(f"'{f}'" for f in found) + "?"
