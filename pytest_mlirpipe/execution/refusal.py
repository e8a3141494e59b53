"""Who refused a model (torch or the compiler), at which stage and pass: data on its errors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import MlirpipeError, Problem, StageFailure

TORCH = "torch"  # torch.export cannot trace the model, or torch eager cannot run it
COMPILER = "compiler"  # torch-mlir's import or a pipeline stage refused the model


@dataclass(frozen=True, slots=True)
class Refusal:
    """Plain data: `by` (TORCH or COMPILER), the stage (export, eager, import, a pipeline
    stage, llvm), the pass when known, and the refusal's first line."""

    by: str
    stage: str
    pass_name: str = ""
    reason: str = ""


class RefusedError(MlirpipeError):
    """A project error saying that torch or the compiler refused the model (not the project)."""

    def __init__(self, problems: Problem | Sequence[Problem], refusal: Refusal):
        self.refusal = refusal
        super().__init__(problems)


_FAILED_PASS = re.compile(r"^pass '([^']+)' failed")


def refusal_of(exc: BaseException) -> Refusal | None:
    """The refusal an error carries: a RefusedError's, or a pipeline stage's failure (its
    first MLIR error as the reason); None for any other error (the project's own)."""
    if isinstance(exc, RefusedError):
        return exc.refusal
    if isinstance(exc, StageFailure):
        named = _FAILED_PASS.match(exc.reason)
        errors = [d.message for d in exc.diagnostics if d.severity == "error"]
        reason = errors[0] if errors else exc.reason
        return Refusal(COMPILER, exc.stage, named.group(1) if named else "", reason)
    return None
