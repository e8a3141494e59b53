"""pytest-mlirpipe: run MLIR lowering pipelines stage by stage and check the IR after each stage."""

from __future__ import annotations

__version__ = "0.1.0"
