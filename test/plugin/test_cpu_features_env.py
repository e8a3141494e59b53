"""$MLIRPIPE_CPU_FEATURES set for a whole run reaches RUN lines without an `env` prefix, under
pytest in every isolation and under lit alike, and chooses the pipeline's [stage.cpu.F] tables."""

from __future__ import annotations

import pytest
from litrun import lit_verdicts

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""
PIPELINE = """\
[pipeline]
name = "per-cpu"
input = "linalg-on-tensors"
output = "linalg-on-tensors"

[[stage]]
name = "mark"
reason = "names the table in effect"
passes = ["mlirpipe-forbid-ops{ops=tensor.*}"]

[stage.cpu.wide]
passes = ["mlirpipe-forbid-ops{ops=arith.*}"]
"""
# forbid-ops fails on a module holding an op it names: there is an arith op and no tensor op, so
# the file passes with the stage as written and fails when the host (or the run) has `wide`.
TEST = """\
// RUN: mlirpipe-opt %s --pipeline per-cpu | filecheck %s
// CHECK: arith.addf
func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch) -> pytest.Pytester:
    monkeypatch.delenv("MLIRPIPE_CPU_FEATURES", raising=False)
    (pytester.path / "lit.cfg.py").write_text(LIT_CFG)
    (pytester.path / "pipes").mkdir()
    (pytester.path / "pipes" / "per-cpu.toml").write_text(PIPELINE)
    (pytester.path / "uses_cpu.mlir").write_text(TEST)
    monkeypatch.setenv("MLIRPIPE_PIPELINES_PATH", str(pytester.path / "pipes"))
    return pytester


@pytest.mark.parametrize("isolation", ["fork", "none", "subprocess"])
def test_the_run_s_features_choose_the_table_in_every_isolation(suite, monkeypatch, isolation):
    args = ("-p", "no:cacheprovider", f"--mlirpipe-isolation={isolation}", "uses_cpu.mlir")
    suite.runpytest(*args).assert_outcomes(passed=1)
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "sse2,wide")
    result = suite.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*arith.addf*"])


def test_lit_gives_the_same_verdicts(suite, monkeypatch):
    codes, output = lit_verdicts(suite.path, "uses_cpu.mlir")
    assert codes == {"uses_cpu.mlir": "PASS"}, output
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "wide")
    codes, output = lit_verdicts(suite.path, "uses_cpu.mlir")
    assert codes == {"uses_cpu.mlir": "FAIL"}, output
