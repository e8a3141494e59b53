"""pytest-mlirpipe: run MLIR lowering pipelines stage by stage and check the IR after each stage.

The names in `__all__` are the public surface: import them from here, not from the modules
that define them (those may move). Each loads on first use, so importing the package (as
pytest does for the plugin) loads neither the MLIR bindings nor torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"


def _asserts_left_as_written() -> None:
    """pytest rewrites the asserts of every module of a plugin's package as it is imported,
    compiling its source again at every start where no bytecode is written
    (PYTHONDONTWRITEBYTECODE, as many CI images set it): the package's asserts state
    invariants, not test outcomes, so its modules load as Python loads them, whichever of
    the plugin's entry points pytest loads first (each imports this package first). Only
    pytest's own import hook knows the list; a pytest without it leaves things as they
    were."""
    import sys

    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set):
            marked.discard(__package__)
            cache = getattr(finder, "_marked_for_rewrite_cache", None)
            if isinstance(cache, dict):
                cache.clear()


_asserts_left_as_written()


# public name -> the module that defines it (relative to this package)
_EXPORTS = {
    # pipelines as data, and the catalog of pipeline files
    "catalog_for": ".lowering.catalog",
    "PipelineCatalog": ".lowering.spec",
    "Pipeline": ".model",
    "Stage": ".model",
    "IRLevel": ".model",
    "Snapshot": ".model",
    "Diagnostic": ".model",
    "Location": ".model",
    # verdicts, one Enum per vocabulary: a file test's (lit's), the checker's, a sweep entry's
    "ResultCode": ".model",
    "ExecutionVerdict": ".model",
    "SweepVerdict": ".model",
    # the stage runner, and the per-stage report
    "run_stages": ".lowering.stages",
    "run_pass_pipeline": ".lowering.stages",
    "StageRun": ".lowering.stages",
    "report_stages": ".lowering.stage_report",
    "write_html": ".lowering.report_html",
    # structural assertions on IR
    "assert_ir": ".tools.ir_assert",
    "IRAssertionError": ".tools.ir_assert",
    # the execution checker and its outcomes
    "ModelChecker": ".execution.check",
    "Outcome": ".execution.check",
    "ExecutionMismatch": ".execution.check",
    "Refusal": ".execution.refusal",
    "RefusedError": ".execution.refusal",
    # the warning of a passing check's random result too few draws left unjudged
    "RandomResultNotJudged": ".execution.results.compare",
    # passes written in Python
    "register_pass": ".lowering.passes",
    # the lit configuration hook (lit.cfg.py)
    "configure": ".filetests.config",
    # the warning of CHECK lines FileCheck would ignore (mlirpipe_lint = warn)
    "MlirpipeLintWarning": ".filetests.lint",
    # the error family
    "MlirpipeError": ".errors",
    "StageFailure": ".errors",
    "UsageError": ".errors",
    "IRParseError": ".errors",
    "PipelineSpecError": ".errors",
    "Problem": ".errors",
}
# a public name that differs from the name in its module
_RENAMED = {"register_pass": "register"}

__all__ = [
    "Diagnostic",
    "ExecutionMismatch",
    "ExecutionVerdict",
    "IRAssertionError",
    "IRLevel",
    "IRParseError",
    "Location",
    "MlirpipeError",
    "MlirpipeLintWarning",
    "ModelChecker",
    "Outcome",
    "Pipeline",
    "PipelineCatalog",
    "PipelineSpecError",
    "Problem",
    "RandomResultNotJudged",
    "Refusal",
    "RefusedError",
    "ResultCode",
    "Snapshot",
    "Stage",
    "StageFailure",
    "StageRun",
    "SweepVerdict",
    "UsageError",
    "assert_ir",
    "catalog_for",
    "configure",
    "register_pass",
    "report_stages",
    "run_pass_pipeline",
    "run_stages",
    "write_html",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time __getattr__ loads each lazily
    from .errors import (
        IRParseError,
        MlirpipeError,
        PipelineSpecError,
        Problem,
        StageFailure,
        UsageError,
    )
    from .execution.check import ExecutionMismatch, ModelChecker, Outcome
    from .execution.refusal import Refusal, RefusedError
    from .execution.results.compare import RandomResultNotJudged
    from .filetests.config import configure
    from .filetests.lint import MlirpipeLintWarning
    from .lowering.catalog import catalog_for
    from .lowering.passes import register as register_pass
    from .lowering.report_html import write_html
    from .lowering.spec import PipelineCatalog
    from .lowering.stage_report import report_stages
    from .lowering.stages import StageRun, run_pass_pipeline, run_stages
    from .model import (
        Diagnostic,
        ExecutionVerdict,
        IRLevel,
        Location,
        Pipeline,
        ResultCode,
        Snapshot,
        Stage,
        SweepVerdict,
    )
    from .tools.ir_assert import IRAssertionError, assert_ir


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_mlirpipe' has no attribute '{name}'")
    value = getattr(importlib.import_module(module, __name__), _RENAMED.get(name, name))
    globals()[name] = value  # loaded once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
