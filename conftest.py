"""Repository-level pytest setup: pytester for the plugin's own tests."""

import os

# pytester's in-process runs drop the modules an inner session imported; native extensions
# (MLIR's bindings, numpy) cannot be imported twice in one process, so load them up front.
import numpy  # noqa: F401

import pytest_mlirpipe.lowering.stages  # noqa: F401

# The project's own tests assert the Python FileCheck port's messages; the tests of the engine
# choice set it themselves (README: "Which FileCheck").
os.environ.setdefault("MLIRPIPE_FILECHECK", "python")

pytest_plugins = ["pytester"]
