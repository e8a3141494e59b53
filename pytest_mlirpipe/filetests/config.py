"""The one lit configuration both runners use: tools, substitutions, features, suffixes."""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

DEFAULT_SUFFIXES = (".mlir",)
# Folders that hold inputs of tests, not tests (lit's convention).
EXCLUDED_DIRS = ("Inputs", "Output")


def tool_commands() -> dict[str, str]:
    """Tools RUN lines may name, and the command each expands to (`-mNAME`, no space, so no
    later substitution matches inside an earlier one).

    Tools are run through this Python interpreter so the suite does not depend on PATH or on
    shims; `FileCheck` is the Python FileCheck package.
    """
    py = shlex.quote(sys.executable)
    return {
        "mlirpipe-opt": f"{py} -mpytest_mlirpipe.tools.opt",
        "mlirpipe": f"{py} -mpytest_mlirpipe.tools.main",
        "FileCheck": f"{py} -mfilecheck",
        "filecheck": f"{py} -mfilecheck",
    }


def available_features() -> set[str]:
    """Features for REQUIRES/UNSUPPORTED: optional dependencies that are importable."""
    features = {"mlirpipe"}
    for module, feature in (("torch", "torch"), ("onnx", "onnx"), ("scipy_openblas32", "openblas")):
        if importlib.util.find_spec(module) is not None:
            features.add(feature)
    return features


def configure(
    config,
    source_root: str | os.PathLike,
    exec_root: str | os.PathLike,
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES,
) -> None:
    """Fill a lit TestingConfig; `lit.cfg.py` and the pytest plugin both call this."""
    from .format import MlirShTest

    config.name = "mlirpipe"
    config.test_format = MlirShTest()
    config.suffixes = list(suffixes)
    config.excludes = list(EXCLUDED_DIRS)
    config.test_source_root = str(source_root)
    config.test_exec_root = str(exec_root)
    for tool, command in tool_commands().items():
        # Whole words only, so `mlirpipe-opt` is not rewritten inside `mlirpipe-opt-x`.
        config.substitutions.append((rf"(?<![\w./-]){tool}(?![\w-])", command))
    config.substitutions.append(("%python", shlex.quote(sys.executable)))
    config.substitutions.append(("%pipelines", str(Path(source_root) / "pipelines")))
    config.available_features.update(available_features())
    for var in ("PYTHONPATH", "MLIRPIPE_PIPELINES_PATH", "XDG_CACHE_HOME"):
        if var in os.environ:
            config.environment[var] = os.environ[var]
