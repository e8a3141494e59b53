"""A stage's `[stage.cpu.FEATURE]` tables: the host's features (or $MLIRPIPE_CPU_FEATURES)
choose passes, sizes and reason; every table is checked on every host, each problem at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mlirpipe.errors import PipelineSpecError
from pytest_mlirpipe.lowering import catalog
from pytest_mlirpipe.lowering.host_cpu import host_cpu_features, parse_features
from pytest_mlirpipe.lowering.spec import load_catalog

SCRIPT = """\
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
"""

PIPE = """\
[pipeline]
name = "t"
input = "linalg-on-tensors"
output = "llvm"

[[stage]]
name = "simplify"
reason = "everywhere"
passes = ["canonicalize"]

[stage.cpu.avx512f]
reason = "wide"
passes = ["cse"]

[stage.cpu.avx2]
passes = ["symbol-dce"]

[[stage]]
name = "tile"
reason = "r"
transform = "s.mlir"
sizes = { block = [64, 256], register = [4, 16, 1] }

[stage.cpu.avx512f]
sizes = { register = [8, 32, 1], wide-only = [2] }
"""


def write(tmp_path: Path, text: str = PIPE) -> Path:
    (tmp_path / "s.mlir").write_text(SCRIPT)
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


def stages(tmp_path: Path, features, **kwargs):
    return load_catalog([tmp_path], cpu_features=features, **kwargs).get("t").stages


def spec_error(tmp_path: Path, features=()) -> str:
    with pytest.raises(PipelineSpecError) as info:
        load_catalog([tmp_path], cpu_features=features)
    return str(info.value)


def test_a_host_without_the_features_gets_the_stage_as_written(tmp_path):
    write(tmp_path)
    simplify, tile = stages(tmp_path, ["sse2"])
    assert (simplify.passes, simplify.reason) == (("canonicalize",), "everywhere")
    assert 'sizes="block=64,256 register=4,16,1"' in tile.passes[0]


def test_the_first_table_whose_feature_the_host_has_gives_passes_reason_and_sizes(tmp_path):
    write(tmp_path)
    simplify, tile = stages(tmp_path, ["avx2", "avx512f"])
    assert (simplify.passes, simplify.reason) == (("cse",), "wide")
    # sizes merge over the stage's, name by name
    assert 'sizes="block=64,256 register=8,32,1 wide-only=2"' in tile.passes[0]


def test_a_table_without_a_reason_keeps_the_stage_s(tmp_path):
    write(tmp_path)
    simplify, _ = stages(tmp_path, ["avx2"])
    assert (simplify.passes, simplify.reason) == (("symbol-dce",), "everywhere")


def test_the_environment_chooses_the_tables_and_the_catalog_follows_it(tmp_path, monkeypatch):
    write(tmp_path)
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "avx512f")
    assert catalog.catalog_for([tmp_path]).get("t").stages[0].passes == ("cse",)
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "")
    assert catalog.catalog_for([tmp_path]).get("t").stages[0].passes == ("canonicalize",)


def test_host_features_come_from_the_environment_when_set(monkeypatch):
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", " AVX2, fma  avx512f,")
    assert host_cpu_features() == {"avx2", "fma", "avx512f"}
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", "")
    assert host_cpu_features() == frozenset()
    assert parse_features("a b,c") == {"a", "b", "c"}


def test_an_override_may_name_a_size_only_a_cpu_table_gives(tmp_path):
    write(tmp_path)
    _, tile = stages(tmp_path, ["avx512f"], size_overrides={"wide-only": (3,)})
    assert "wide-only=3" in tile.passes[0]


def test_an_unknown_key_in_a_cpu_table_is_reported_at_its_line_on_any_host(tmp_path):
    path = write(tmp_path, PIPE.replace('reason = "wide"', 'after = "x"'))
    assert spec_error(tmp_path) == (
        f"{path}:12:1: error: unknown key 'after' in [stage.cpu.avx512f] of stage 'simplify'\n"
        "  hint: a cpu table sets passes, reason, sizes"
    )


def test_a_misspelt_key_in_a_cpu_table_gets_a_close_match(tmp_path):
    path = write(tmp_path, PIPE.replace("[stage.cpu.avx2]\npasses", "[stage.cpu.avx2]\npass"))
    assert spec_error(tmp_path) == (
        f"{path}:16:1: error: unknown key 'pass' in [stage.cpu.avx2] of stage 'simplify'\n"
        "  hint: did you mean 'passes'?"
    )


def test_a_feature_that_is_no_feature_name_is_reported(tmp_path):
    path = write(tmp_path, PIPE.replace("[stage.cpu.avx2]", '[stage.cpu."AVX 2"]'))
    assert spec_error(tmp_path) == (
        f"{path}:15:8: error: stage 'simplify': 'AVX 2' is not a CPU feature name\n"
        "  hint: name a feature in lower case as the host lists it (Linux: the flags in "
        "/proc/cpuinfo, e.g. avx512f, sse4_1)"
    )


def test_a_cpu_key_that_holds_no_tables_is_reported(tmp_path):
    text = PIPE.replace('passes = ["canonicalize"]', 'passes = ["canonicalize"]\ncpu = "avx2"')
    text = text.replace("[stage.cpu.avx512f]\nreason", "[stage.x]\nreason").replace(
        "[stage.cpu.avx2]", "[stage.y]"
    )
    path = write(tmp_path, text)
    problems = spec_error(tmp_path)
    assert (
        f"{path}:10:1: error: stage 'simplify': cpu must hold one table per CPU feature, "
        "not 'avx2'\n"
        "  hint: e.g. [stage.cpu.avx512f] below the stage, with passes = [...] and/or "
        "sizes = { ... }"
    ) in problems


def test_the_shipped_vectorized_pipeline_picks_its_tiles_by_avx512f():
    wide = load_catalog([], cpu_features=["avx2", "fma", "avx512f"]).get("refbackend-vectorized")
    narrow = load_catalog([], cpu_features=["avx2", "fma"]).get("refbackend-vectorized")
    pack = {s.name: s.passes for s in wide.stages}["pack-panels"]
    assert pack == ("mlirpipe-pack-matmul{width=64}",)
    assert {s.name: s.passes for s in narrow.stages}["pack-panels"] == (
        "mlirpipe-pack-matmul{width=16 rows=6}",
    )
    tile = {s.name: s.passes for s in wide.stages}["tile-and-vectorize"][0]
    assert "register=8,32,1" in tile and "register-panels=4,64,1" in tile
    assert "register=4,16,1" not in tile


def checked_error(tmp_path: Path, text: str, features, **kwargs) -> str:
    write(tmp_path, text)
    with pytest.raises(PipelineSpecError) as info:
        load_catalog(
            [tmp_path],
            cpu_features=features,
            pass_exists=catalog.is_known_pass,
            known_passes=catalog.known_pass_names,
            **kwargs,
        )
    return str(info.value).replace(str(tmp_path / "t.toml"), "t.toml")


@pytest.mark.parametrize("host", [(), ("avx2",), ("avx512f",)], ids=["none", "avx2", "avx512f"])
def test_a_table_the_host_does_not_pick_is_checked_all_the_same(tmp_path, host):
    malformed = PIPE.replace('passes = ["symbol-dce"]', 'passes = ["symbol-dce{"]')
    assert checked_error(tmp_path, malformed, host) == (
        "t.toml:16:22: error: malformed pass pipeline 'symbol-dce{' in [stage.cpu.avx2] of "
        "stage 'simplify': '{' is never closed\n"
        "  hint: use MLIR's textual syntax: pass{opt=value}, op-name(nested-passes)"
    )
    unknown = PIPE.replace('passes = ["cse"]', 'passes = ["csee"]')
    assert checked_error(tmp_path, unknown, host) == (
        "t.toml:13:12: error: unknown pass 'csee' in stage 'simplify' of pipeline 't'\n"
        "  hint: did you mean 'cse'?"
    )
    bad_sizes = PIPE.replace("register = [8, 32, 1], wide-only = [2]", 'register = "8x32"')
    assert checked_error(tmp_path, bad_sizes, host) == (
        "t.toml:25:1: error: [stage.cpu.avx512f] of stage 'tile': sizes must map kebab-case "
        "names to lists of positive integers, not {'register': '8x32'}\n"
        "  hint: e.g. sizes = { block = [64, 256], register = [8, 32, 1] }"
    )


def test_sizes_in_a_table_of_a_stage_without_a_script_are_reported(tmp_path):
    text = PIPE.replace('[stage.cpu.avx2]\npasses = ["symbol-dce"]', "[stage.cpu.avx2]\nsizes = {}")
    assert checked_error(tmp_path, text, ()) == (
        "t.toml:16:1: error: [stage.cpu.avx2] of stage 'simplify' gives sizes but the stage "
        "has no transform script\n"
        '  hint: give the stage transform = "script.mlir", or drop the sizes'
    )


def test_a_problem_in_the_picked_table_is_reported_at_the_table_not_the_stage(tmp_path):
    text = PIPE.replace('passes = ["cse"]', "passes = 3")
    assert checked_error(tmp_path, text, ("avx512f",)) == (
        "t.toml:13:1: error: [stage.cpu.avx512f] of stage 'simplify' has no passes\n"
        '  hint: give passes = ["pass-a", "func.func(pass-b)"]'
    )


def test_broken_sizes_of_the_stage_are_reported_even_where_a_table_adds_sizes(tmp_path):
    text = PIPE.replace("sizes = { block = [64, 256], register = [4, 16, 1] }", "sizes = 7")
    assert checked_error(tmp_path, text, ("avx512f",)) == (
        "t.toml:22:1: error: stage 'tile': sizes must map kebab-case names to lists of "
        "positive integers, not 7\n"
        "  hint: e.g. sizes = { block = [64, 256], register = [8, 32, 1] }"
    )


def test_a_key_is_located_in_its_own_table_when_another_s_name_starts_alike(tmp_path):
    text = PIPE.replace(
        '[stage.cpu.avx512f]\nreason = "wide"',
        '[stage.cpu.avx512fp16]\nreason = "x"\n\n[stage.cpu.avx512f]\npases = ["x"]',
    )
    assert checked_error(tmp_path, text, ()) == (
        "t.toml:15:1: error: unknown key 'pases' in [stage.cpu.avx512f] of stage 'simplify'\n"
        "  hint: did you mean 'passes' or 'sizes'?"
    )


def test_an_override_may_not_name_a_size_only_a_table_of_another_cpu_gives(tmp_path):
    write(tmp_path)
    with pytest.raises(PipelineSpecError, match="sets size 'wide-only', which no transform"):
        stages(tmp_path, ["avx2"], size_overrides={"wide-only": (3,)})


def test_an_override_beside_a_cpu_key_without_tables_reports_the_key(tmp_path):
    text = PIPE.replace(
        "[stage.cpu.avx512f]\nsizes = { register = [8, 32, 1], wide-only = [2] }",
        "cpu = { avx512f = 3 }",
    )
    path = write(tmp_path, text)
    with pytest.raises(PipelineSpecError) as info:
        stages(tmp_path, ["avx512f"], size_overrides={"register": (2,)})
    assert (
        f"{path}:24:1: error: stage 'tile': cpu must hold one table per CPU feature, "
        "not {'avx512f': 3}"
    ) in str(info.value)
