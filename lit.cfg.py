# lit configuration of this repository; the pytest plugin loads the same file, so `lit test/`
# and `pytest test/` run every .mlir test with the same tools, substitutions and features.
# ruff: noqa: F821  (lit provides `config` and `lit_config`)
import os

from pytest_mlirpipe import configure

_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
