"""Transform-script stages: the `transform`/`sizes` keys, $MLIRPIPE_TRANSFORM_SIZES, and the
mlirpipe-transform pass's messages, each with its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mlirpipe.errors import PipelineSpecError, StageFailure
from pytest_mlirpipe.lowering import catalog
from pytest_mlirpipe.lowering.passes.transform_script import SizesSyntaxError, parse_sizes
from pytest_mlirpipe.lowering.spec import load_catalog
from pytest_mlirpipe.lowering.stages import run_stages

PIPE = """\
[pipeline]
name = "t"
input = "linalg-on-tensors"
output = "llvm"

[[stage]]
name = "tile"
reason = "r"
transform = "{script}"
sizes = {sizes}
"""

# Tiles every linalg.fill by the size `tile`.
SCRIPT = """\
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["linalg.fill"]} in %root
      : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_for %f tile_sizes [2]
      {mlirpipe.sizes = ["tile"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""

FILL = """\
func.func @f(%o: tensor<8xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.fill ins(%z : f32) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


def write(tmp_path: Path, sizes: str = "{ tile = [4] }", script: str = "s.mlir") -> Path:
    (tmp_path / "s.mlir").write_text(SCRIPT)
    path = tmp_path / "t.toml"
    path.write_text(PIPE.format(script=script, sizes=sizes))
    return path


def spec_error(directory: Path, **kwargs) -> str:
    with pytest.raises(PipelineSpecError) as info:
        load_catalog([directory], **kwargs)
    return str(info.value)


def test_a_transform_stage_runs_its_script_with_the_file_s_sizes(tmp_path):
    write(tmp_path)
    pipe = load_catalog([tmp_path]).get("t")
    assert pipe.stages[0].passes == (
        f'mlirpipe-transform{{script="{tmp_path / "s.mlir"}" sizes="tile=4"}}',
    )
    out = run_stages(FILL, pipe).final_ir
    assert "scf.for" in out and "step %c4" in out and "tensor<4xf32>" in out


def test_overridden_sizes_replace_the_file_s(tmp_path):
    write(tmp_path)
    pipe = load_catalog([tmp_path], size_overrides={"tile": (2,)}).get("t")
    assert 'sizes="tile=2"' in pipe.stages[0].passes[0]
    assert "tensor<2xf32>" in run_stages(FILL, pipe).final_ir


def test_a_missing_script_is_reported_at_its_key(tmp_path):
    path = write(tmp_path, script="nope.mlir")
    assert spec_error(tmp_path) == (
        f"{path}:9:1: error: stage 'tile': transform script 'nope.mlir' not found "
        f"(looked for {tmp_path / 'nope.mlir'})\n"
        "  hint: give the path of a transform-dialect .mlir file, relative to the pipeline file\n"
        f"{path}:1: error: pipeline 't' has no stages\n"
        "  hint: add [[stage]] tables"
    )


def test_sizes_that_are_not_lists_of_positive_integers_are_reported(tmp_path):
    path = write(tmp_path, sizes="{ tile = [0] }")
    assert spec_error(tmp_path) == (
        f"{path}:10:1: error: stage 'tile': sizes must map kebab-case names to lists of "
        "positive integers, not {'tile': [0]}\n"
        "  hint: e.g. sizes = { block = [64, 256], register = [8, 32, 1] }\n"
        f"{path}:1: error: pipeline 't' has no stages\n"
        "  hint: add [[stage]] tables"
    )


def test_an_override_no_stage_gives_is_reported_with_close_matches(tmp_path):
    write(tmp_path)
    assert spec_error(tmp_path, size_overrides={"tiles": (2,)}) == (
        "error: $MLIRPIPE_TRANSFORM_SIZES sets size 'tiles', which no transform stage gives\n"
        "  hint: did you mean 'tile'?"
    )


def test_a_malformed_override_quotes_the_variable(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_TRANSFORM_SIZES", "block=64,x")
    with pytest.raises(PipelineSpecError) as info:
        catalog.size_overrides()
    assert str(info.value) == (
        "error: $MLIRPIPE_TRANSFORM_SIZES='block=64,x': 'block=64,x' is not NAME=N[,N...] "
        "(a kebab-case name, positive integers)\n"
        "  hint: e.g. MLIRPIPE_TRANSFORM_SIZES='block=32,128 register=8,32,1' (names are the "
        "sizes of a transform stage: `mlirpipe list` shows them)"
    )


def test_parse_sizes_refuses_zero():
    assert parse_sizes("a=1,2 b-c=3") == {"a": (1, 2), "b-c": (3,)}
    with pytest.raises(SizesSyntaxError, match="'a=0': sizes must be positive"):
        parse_sizes("a=0")


def test_a_size_the_script_uses_without_a_value_fails_at_the_script_line(tmp_path):
    write(tmp_path, sizes="{ other = [2] }")
    with pytest.raises(StageFailure) as info:
        run_stages(FILL, load_catalog([tmp_path]).get("t"))
    text = str(info.value)
    assert (
        f"{tmp_path / 's.mlir'}:5:14: error: mlirpipe-transform: size 'tile' has no value "
        "(sizes given: other)"
    ) in text


def test_a_size_list_of_the_wrong_length_names_the_op(tmp_path):
    write(tmp_path, sizes="{ tile = [2, 2] }")
    with pytest.raises(StageFailure) as info:
        run_stages(FILL, load_catalog([tmp_path]).get("t"))
    assert (
        "error: mlirpipe-transform: transform.structured.tile_using_for takes 1 sizes, "
        "mlirpipe.sizes gives 2 [2, 2]"
    ) in str(info.value)


def test_an_unknown_entry_point_lists_the_script_s_sequences(tmp_path):
    path = write(tmp_path)
    path.write_text(path.read_text() + 'entry-point = "main"\n')
    with pytest.raises(StageFailure) as info:
        run_stages(FILL, load_catalog([tmp_path]).get("t"))
    assert (
        "error: mlirpipe-transform: the script has no named sequence @main "
        "(it has: @__transform_main)"
    ) in str(info.value)


# Tiles every linalg.fill by the size `tile` in an action of transform.foreach_match.
MATCHING_SCRIPT = """\
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    %done = transform.foreach_match in %funcs @match_fill -> @tile_fill
      : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
  transform.named_sequence @match_fill(%op: !transform.any_op {transform.readonly})
      -> !transform.any_op {
    transform.match.operation_name %op ["linalg.fill"] : !transform.any_op
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @tile_fill(%op: !transform.any_op {transform.consumed}) {
    %t, %l = transform.structured.tile_using_for %op tile_sizes [2]
      {mlirpipe.sizes = ["tile"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""


def test_the_actions_of_foreach_match_get_their_sizes(tmp_path):
    write(tmp_path)
    (tmp_path / "s.mlir").write_text(MATCHING_SCRIPT)
    out = run_stages(FILL, load_catalog([tmp_path]).get("t")).final_ir
    assert "step %c4" in out and "tensor<4xf32>" in out


# Splits the reduction of a row sum into lanes of the size `tile`.
SPLITTING_SCRIPT = """\
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root
      : (!transform.any_op) -> !transform.any_op
    %fill, %lanes, %merge, %loop = transform.structured.tile_reduction_using_for %g
      by tile_sizes = [0, 2] {mlirpipe.sizes = [0, "tile"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op,
                                !transform.any_op)
    transform.yield
  }
}
"""

ROW_SUM = """\
func.func @f(%x: tensor<2x8xf32>, %o: tensor<2xf32>) -> tensor<2xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x8xf32>) outs(%o : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}
"""


def test_the_tile_sizes_of_tile_reduction_using_for_are_set(tmp_path):
    write(tmp_path)
    (tmp_path / "s.mlir").write_text(SPLITTING_SCRIPT)
    out = run_stages(ROW_SUM, load_catalog([tmp_path]).get("t")).final_ir
    assert "tensor<2x4xf32>" in out and "step %c4" in out
