"""Tell the abstraction level of an input from the ops it holds, to say when a pipeline was
given IR of another level (torch-dialect IR given to a linalg-on-tensors pipeline)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import IRLevel, Pipeline

# The first match wins: ONNX imports as torch.operator "onnx.*" ops of the torch dialect.
_MARKERS = (
    (IRLevel.ONNX, re.compile(r'torch\.operator\s+"onnx\.\w+')),
    (IRLevel.TORCH, re.compile(r"\btorch\.(?:aten|prim|prims|constant|vtensor\.literal)\.?\w*")),
    (IRLevel.TOSA, re.compile(r"\btosa\.\w+")),
    (IRLevel.LLVM, re.compile(r"\bllvm\.(?:func|mlir\.global|call)\b")),
)


@dataclass(frozen=True, slots=True)
class LevelEvidence:
    """The level an input looks like, and the op (and its line) that says so."""

    level: IRLevel
    op: str
    line: int


def input_level(text: str) -> LevelEvidence | None:
    """The level whose marker ops `text` holds, or None (linalg-on-tensors or unknown)."""
    for level, pattern in _MARKERS:
        m = pattern.search(text)
        if m:
            return LevelEvidence(level, m.group(0), text.count("\n", 0, m.start()) + 1)
    return None


def wrong_level_hint(text: str, pipeline: Pipeline, others: Iterable[Pipeline]) -> str | None:
    """A hint when `text` is IR of another level than `pipeline` takes; None otherwise."""
    seen = input_level(text)
    if seen is None or seen.level == pipeline.input:
        return None
    bridges = sorted(p.name for p in others if p.input == seen.level and p.output == pipeline.input)
    first = f": lower it first, e.g. with --pipeline {bridges[0]}" if bridges else ""
    return (
        f"the input is {seen.level} IR ('{seen.op}' at line {seen.line}), but pipeline "
        f"'{pipeline.name}' takes {pipeline.input} IR{first} (`mlirpipe list` shows what "
        "each pipeline takes)"
    )
