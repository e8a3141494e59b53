"""Repository-level pytest setup: pytester for the plugin's own tests."""

# pytester's in-process runs drop the modules an inner session imported; native extensions
# (MLIR's bindings, numpy) cannot be imported twice in one process, so load them up front.
import numpy  # noqa: F401

import pytest_mlirpipe.lowering.stages  # noqa: F401

pytest_plugins = ["pytester"]
