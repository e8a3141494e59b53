"""A suite's pipeline run by its own `*-opt` (found through mlirpipe_tool_dirs) passes its stage
checks under pytest, whether RUN lines run in-process or as processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SEED = Path(__file__).parents[1] / "pipelines" / "torch-to-linalg" / "matmul-2x2.mlir"
PIPELINE = """\
[pipeline]
name = "t2l-tool"
extends = "torch-to-linalg"
tool = "torch-mlir-opt"
remove = ["decompose-tanh-gelu"]  # a Python pass: the tool does not run it
"""


@pytest.mark.parametrize("isolation", ["fork", "subprocess"])
def test_stage_checks_pass_with_the_tool_of_the_tool_dirs(pytester: pytest.Pytester, isolation):
    torch_mlir = pytest.importorskip("torch_mlir")
    native = Path(next(iter(torch_mlir.__path__))) / "_mlir_libs"
    if not os.access(native / "torch-mlir-opt", os.X_OK):
        pytest.skip("the torch-mlir wheel has no native torch-mlir-opt")
    (pytester.path / "pipes").mkdir()
    (pytester.path / "pipes" / "t2l-tool.toml").write_text(PIPELINE)
    # The seed's stage checks, with its pipeline run by the tool (and its last RUN line, which
    # chains into refbackend in-process, left out).
    lines = SEED.read_text().splitlines(keepends=True)
    text = "".join(ln for ln in lines if "--pipeline refbackend" not in ln)
    (pytester.path / "seed.mlir").write_text(text.replace("torch-to-linalg", "t2l-tool"))
    pytester.makeini(f"[pytest]\nmlirpipe_pipelines = pipes\nmlirpipe_tool_dirs = {native}\n")
    result = pytester.runpytest(f"--mlirpipe-isolation={isolation}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
