"""MLIR text: a module given as text, checked against the reference the test gives."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...errors import Problem, UsageError
from ...model import Pipeline
from ..native.signature import EntrySignature, entry_signature
from .base import Frontend


class MlirTextFrontend(Frontend):
    """MLIR text, taken as already at a pipeline's input level; it has no reference run."""

    name = "mlir"

    def _import(self, pipeline: Pipeline) -> tuple[str, EntrySignature]:
        return self.model, entry_signature(self.model)

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        raise UsageError(
            Problem(
                "MLIR text has no torch eager to compare with",
                hint="pass reference=a function computing the expected results from the inputs",
            )
        )
