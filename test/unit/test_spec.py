"""Pipeline files: loading, `extends` composition, and every validation message with its place."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_mlirpipe.errors import PipelineSpecError
from pytest_mlirpipe.lowering.spec import check_pipeline_text, load_catalog
from pytest_mlirpipe.model import IRLevel, Location

LEVELS = "torch, onnx, tosa, linalg-on-tensors, llvm"

# The smallest valid pipeline; tests append stages or change keys.
HEAD = """\
[pipeline]
name = "{name}"
input = "linalg-on-tensors"
output = "llvm"
"""

STAGE = """
[[stage]]
name = "{name}"
reason = "r"
passes = ["{passes}"]
"""


def spec_error(directory: Path, **checks) -> str:
    """The full message of the PipelineSpecError that loading `directory` raises."""
    with pytest.raises(PipelineSpecError) as info:
        load_catalog([directory], **checks)
    return str(info.value)


def only_known(*names: str) -> Callable[[str], bool]:
    """A pass_exists that knows the shipped pipelines' passes and `names` (no MLIR needed)."""
    shipped = {
        p
        for pipe in load_catalog()
        for st in pipe.stages
        for frag in st.passes
        for p in _names(frag)
    }
    return lambda n: n in shipped or n in names


def _names(fragment: str) -> list[str]:
    from pytest_mlirpipe.lowering.pipeline_text import parse_pipeline

    return [p.name for el in parse_pipeline(fragment) for p, _ in el.passes()]


# --- the shipped catalog and composition -------------------------------------------------------


def test_shipped_catalog_loads_with_every_pass_registered(shipped_catalog):
    assert {"refbackend", "tosa", "onnx-linalg", "torch-to-linalg"} <= set(shipped_catalog.names())
    for pipe in shipped_catalog:
        assert pipe.stages, pipe.name
        assert all(stage.reason for stage in pipe.stages), pipe.name


def test_refbackend_takes_linalg_on_tensors_to_llvm_through_finalizing_bufferize(refbackend):
    assert (refbackend.input, refbackend.output) == (IRLevel.LINALG_ON_TENSORS, IRLevel.LLVM)
    names = refbackend.stage_names()
    assert "finalizing-bufferize" in names
    assert names.index("bufferize") + 1 == names.index("finalizing-bufferize")
    assert refbackend.stage_index("finalizing-bufferize") == names.index("finalizing-bufferize")
    assert refbackend.extends is None


def test_a_pipeline_text_is_every_stage_inside_one_builtin_module(refbackend):
    every_pass = [p for stage in refbackend.stages for p in stage.passes]

    assert refbackend.pipeline_text == "builtin.module(" + ",".join(every_pass) + ")"
    assert every_pass[0] == "func.func(refback-generalize-tensor-pad)"


def test_stage_keeps_its_passes_reason_and_the_line_of_its_name(refbackend):
    stage = refbackend.stages[refbackend.stage_index("finalizing-bufferize")]

    assert stage.passes[-1] == "refback-mlprogram-bufferize"
    assert stage.reason.startswith("function signatures become memrefs")
    assert stage.location.path.endswith("refbackend.toml")
    text = Path(stage.location.path).read_text().splitlines()
    assert text[stage.location.line - 1] == 'name = "finalizing-bufferize"'


def test_extending_pipeline_with_one_inserted_stage_has_exactly_one_more_stage(
    tmp_path, write_file, real_pass_checks, refbackend
):
    write_file(
        "strict.toml",
        """
        [pipeline]
        name = "rb-strict"
        extends = "refbackend"

        [[stage]]
        name = "no-linalg"
        after = "linalg-to-loops"
        reason = "no linalg op may survive the loop lowering"
        passes = ["mlirpipe-forbid-ops{ops=linalg.*}"]
    """,
    )

    catalog = load_catalog([tmp_path], **real_pass_checks)

    strict = catalog.get("rb-strict")
    names = refbackend.stage_names()
    at = names.index("linalg-to-loops") + 1
    assert strict.stage_names() == [*names[:at], "no-linalg", *names[at:]]
    assert len(strict.stages) == len(refbackend.stages) + 1
    assert (strict.extends, strict.input, strict.output) == (
        "refbackend",
        refbackend.input,
        refbackend.output,
    )
    assert strict.description == refbackend.description
    assert catalog.sources["rb-strict"] == tmp_path / "strict.toml"


def test_extending_pipeline_can_insert_before_replace_and_remove_stages(
    tmp_path, write_file, refbackend
):
    write_file(
        "p.toml",
        """
        [pipeline]
        name = "p"
        extends = "refbackend"
        description = "mine"
        remove = "expand-ops-for-llvm"

        [[stage]]
        name = "first"
        before = "generalize-tensor-pad"
        reason = "r"
        passes = "canonicalize"

        [[stage]]
        name = "bufferize"
        replaces = "bufferize"
        reason = "r"
        passes = ["one-shot-bufferize"]
    """,
    )

    pipe = load_catalog([tmp_path]).get("p")

    names = [n for n in refbackend.stage_names() if n != "expand-ops-for-llvm"]
    assert pipe.stage_names() == ["first", *names]
    assert pipe.stages[0].passes == ("canonicalize",)
    assert pipe.stages[pipe.stage_index("bufferize")].passes == ("one-shot-bufferize",)
    assert pipe.description == "mine"


def test_a_user_directory_shadows_a_shipped_pipeline_of_the_same_name(tmp_path, write_file):
    mine = HEAD.format(name="torch-to-linalg") + STAGE.format(name="s", passes="cse")
    write_file("mine.toml", mine)

    catalog = load_catalog([tmp_path])

    assert catalog.get("torch-to-linalg").stage_names() == ["s"]
    assert catalog.sources["torch-to-linalg"] == tmp_path / "mine.toml"
    assert "tosa" in catalog


def test_unknown_pipeline_name_suggests_the_close_one(shipped_catalog):
    with pytest.raises(PipelineSpecError) as info:
        shipped_catalog.get("torch-to-linalgg", Location("t.mlir", 1, 5))

    assert str(info.value) == (
        "t.mlir:1:5: error: unknown pipeline 'torch-to-linalgg'\n"
        "  hint: did you mean 'torch-to-linalg'?"
    )


def test_unknown_pipeline_name_without_close_match_lists_the_known_ones(shipped_catalog):
    with pytest.raises(PipelineSpecError) as info:
        shipped_catalog.get("zzz")

    assert str(info.value) == (
        "error: unknown pipeline 'zzz'\n"
        f"  hint: known pipelines: {', '.join(shipped_catalog.names())}"
    )


# --- one file's problems ----------------------------------------------------------------------


def test_malformed_toml_is_located_at_file_line_and_column(tmp_path, write_file):
    path = write_file(
        "bad.toml",
        """
        [pipeline]
        name = "a"
        input =
    """,
    )

    assert spec_error(tmp_path) == (
        f"{path}:3:8: error: malformed TOML: Invalid value\n"
        "  hint: see pipelines/refbackend.toml for the format"
    )


def test_file_without_a_pipeline_table_is_reported_at_its_first_line(tmp_path, write_file):
    path = write_file("a.toml", STAGE.format(name="s", passes="cse"))

    assert spec_error(tmp_path) == (
        f"{path}:1: error: a pipeline file needs a [pipeline] table\n"
        '  hint: start the file with [pipeline] and name = "..."'
    )


def test_pipeline_file_that_is_not_utf8_is_reported(tmp_path):
    path = tmp_path / "a.toml"
    path.write_bytes(b'[pipeline]\nname = "\xff"\n')

    assert spec_error(tmp_path) == (
        f"{path}: error: pipeline file is not UTF-8 (bad byte at offset 19)\n"
        "  hint: save the file as UTF-8"
    )


def test_unknown_keys_and_tables_are_reported_with_did_you_mean(tmp_path, write_file):
    path = write_file(
        "a.toml",
        HEAD.format(name="a")
        + """descripton = "typo"

[extra]
x = 1

[[stage]]
name = "s"
reason = "r"
passes = ["cse"]
pases = ["cse"]
frobnicate = 1
""",
    )

    assert spec_error(tmp_path) == (
        f"{path}:14:1: error: unknown key 'pases' in [[stage]]\n"
        "  hint: did you mean 'passes' or 'replaces' or 'sizes'?\n"
        f"{path}:15:1: error: unknown key 'frobnicate' in [[stage]]\n"
        "  hint: known keys: after, before, cpu, entry-point, name, passes, reason, replaces, "
        "sizes, transform\n"
        f"{path}:7:2: error: unknown table [extra]\n"
        "  hint: a pipeline file holds [pipeline] and [[stage]] tables only\n"
        f"{path}:5:1: error: unknown key 'descripton' in [pipeline]\n"
        "  hint: did you mean 'description'?"
    )


def test_every_problem_of_a_file_is_reported_at_once_with_its_place(
    tmp_path, write_file, real_pass_checks
):
    path = write_file(
        "all.toml",
        """
        [pipeline]
        name = "My_Pipe"
        input = "linalg"
        output = "llvm"
        descripton = "typo"

        [[stage]]
        name = "Bad_Name"
        reason = "r"
        passes = ["canonicalize"]

        [[stage]]
        name = "no-passes"
        reason = "r"
        pases = ["cse"]

        [[stage]]
        name = "no-reason"
        passes = ["canonicalize", "one-shot-bufferise"]

        [[stage]]
        name = "nested"
        reason = "r"
        passes = [
            "func.func(cse,convert-linalg-to-loopz)",
        ]
    """,
    )

    assert spec_error(tmp_path, **real_pass_checks) == (
        f"{path}:2:1: error: pipeline name 'My_Pipe' is not kebab-case\n"
        "  hint: use lower-case words joined by '-'\n"
        f"{path}:3:1: error: unknown input IR level 'linalg'\n"
        f"  hint: use one of: {LEVELS}\n"
        f"{path}:8:1: error: stage name 'Bad_Name' is not kebab-case\n"
        "  hint: use lower-case words joined by '-', e.g. 'finalizing-bufferize'\n"
        f"{path}:15:1: error: unknown key 'pases' in [[stage]]\n"
        "  hint: did you mean 'passes' or 'replaces' or 'sizes'?\n"
        f"{path}:12: error: stage 'no-passes' has no passes\n"
        '  hint: give passes = ["pass-a", "func.func(pass-b)"]\n'
        f"{path}:17: error: stage 'no-reason' has no reason\n"
        '  hint: add reason = "one line saying why the stage is there"\n'
        f"{path}:5:1: error: unknown key 'descripton' in [pipeline]\n"
        "  hint: did you mean 'description'?\n"
        f"{path}:19:28: error: unknown pass 'one-shot-bufferise' in stage 'no-reason' of "
        "pipeline 'My_Pipe'\n"
        "  hint: did you mean 'one-shot-bufferize'?\n"
        f"{path}:25:20: error: unknown pass 'convert-linalg-to-loopz' in stage 'nested' of "
        "pipeline 'My_Pipe'\n"
        "  hint: did you mean 'convert-linalg-to-loops' or 'convert-linalg-to-affine-loops' or "
        "'convert-linalg-to-std'?"
    )


def test_stage_without_passes_is_reported_at_its_passes_key(tmp_path, write_file):
    path = write_file(
        "a.toml",
        HEAD.format(name="a")
        + """
[[stage]]
name = "s"
reason = "r"
passes = []

[[stage]]
name = "t"
reason = "r"
passes = ["cse", " "]
""",
    )

    assert spec_error(tmp_path) == (
        f"{path}:9:1: error: stage 's' has no passes\n"
        '  hint: give passes = ["pass-a", "func.func(pass-b)"]\n'
        f"{path}:14:1: error: stage 't' has no passes\n"
        '  hint: give passes = ["pass-a", "func.func(pass-b)"]\n'
        f"{path}:1: error: pipeline 'a' has no stages\n"
        "  hint: add [[stage]] tables"
    )


def test_stage_without_name_is_reported_at_its_table(tmp_path, write_file):
    path = write_file(
        "a.toml",
        HEAD.format(name="a")
        + """
[[stage]]
reason = "r"
passes = ["cse"]
"""
        + STAGE.format(name="s", passes="cse"),
    )

    assert spec_error(tmp_path) == (
        f'{path}:6: error: a [[stage]] has no name\n  hint: add name = "kebab-case-name"'
    )


def test_stage_entries_that_are_not_tables_are_reported(tmp_path, write_file):
    path = write_file("a.toml", 'stage = ["s"]\n' + HEAD.format(name="a"))

    assert spec_error(tmp_path) == (
        f"{path}:2: error: pipeline 'a' has no stages\n"
        "  hint: add [[stage]] tables\n"
        f"{path}:1:1: error: 'stage' must be [[stage]] tables"
    )


def test_malformed_pass_pipeline_in_a_stage_points_at_the_bad_character(tmp_path, write_file):
    path = write_file(
        "a.toml", HEAD.format(name="a") + STAGE.format(name="s", passes="func.func(cse")
    )

    assert spec_error(tmp_path) == (
        f"{path}:9:21: error: malformed pass pipeline 'func.func(cse' in stage 's': "
        "'(' after 'func.func' is never closed\n"
        "  hint: use MLIR's textual syntax: pass{opt=value}, op-name(nested-passes)\n"
        f"{path}:1: error: pipeline 'a' has no stages\n"
        "  hint: add [[stage]] tables"
    )
    line = path.read_text().splitlines()[8]
    assert line[21 - 1] == "("


def test_pipeline_without_levels_or_stages_says_which_keys_to_add(tmp_path, write_file):
    path = write_file("a.toml", '[pipeline]\nname = "a"\n')

    assert spec_error(tmp_path) == (
        f"{path}:1: error: pipeline 'a' does not say its input IR level\n"
        f'  hint: add input = "..." with one of: {LEVELS}\n'
        f"{path}:1: error: pipeline 'a' does not say its output IR level\n"
        f'  hint: add output = "..." with one of: {LEVELS}\n'
        f"{path}:1: error: pipeline 'a' has no stages\n"
        "  hint: add [[stage]] tables"
    )


def test_unknown_ir_level_lists_the_accepted_ones(tmp_path, write_file):
    path = write_file(
        "a.toml",
        '[pipeline]\nname = "a"\ninput = "linalg"\noutput = "llvmir"\n'
        + STAGE.format(name="s", passes="cse"),
    )

    assert spec_error(tmp_path) == (
        f"{path}:3:1: error: unknown input IR level 'linalg'\n"
        f"  hint: use one of: {LEVELS}\n"
        f"{path}:4:1: error: unknown output IR level 'llvmir'\n"
        f"  hint: use one of: {LEVELS}"
    )


def test_stage_names_must_be_unique_within_a_pipeline(tmp_path, write_file):
    path = write_file(
        "a.toml",
        HEAD.format(name="a")
        + STAGE.format(name="s", passes="cse")
        + STAGE.format(name="s", passes="canonicalize"),
    )

    assert spec_error(tmp_path) == (
        f"{path}:12:1: error: stage 's' is defined twice in pipeline 'a'\n"
        "  hint: stage names must be unique within a pipeline"
    )


def test_placing_keys_in_a_pipeline_that_extends_nothing_are_one_problem_each(tmp_path, write_file):
    path = write_file(
        "a.toml",
        HEAD.format(name="a")
        + 'remove = ["t"]\n'
        + """
[[stage]]
name = "s"
after = "t"
reason = "r"
passes = ["cse"]
""",
    )

    assert spec_error(tmp_path) == (
        f"{path}:9:1: error: stage 's' uses 'after', which only a pipeline that `extends` "
        "another may use\n"
        "  hint: list the stages in order instead\n"
        f"{path}:5:1: error: 'remove' is only for a pipeline that `extends` another\n"
        "  hint: delete the stage instead"
    )


# --- several files: extends, duplicates, directories -------------------------------------------


def test_a_cycle_of_extends_is_reported_once(tmp_path, write_file):
    a = write_file("a.toml", '[pipeline]\nname = "a"\nextends = "b"\n')
    write_file("b.toml", '[pipeline]\nname = "b"\nextends = "a"\n')

    assert spec_error(tmp_path) == (
        f"{a}:1: error: pipelines extend each other in a cycle: a -> b -> a\n"
        "  hint: remove one of the `extends` keys"
    )


def test_a_pipeline_extending_itself_is_a_cycle(tmp_path, write_file):
    a = write_file("a.toml", '[pipeline]\nname = "a"\nextends = "a"\n')

    assert spec_error(tmp_path) == (
        f"{a}:1: error: pipelines extend each other in a cycle: a -> a\n"
        "  hint: remove one of the `extends` keys"
    )


def test_extending_an_unknown_pipeline_suggests_a_close_name_and_still_checks_the_stages(
    tmp_path, write_file
):
    path = write_file(
        "a.toml",
        """
        [pipeline]
        name = "a"
        extends = "torch-to-linalgg"

        [[stage]]
        name = "s"
        after = "torch-backend"
        passes = ["bogus-pass"]
    """,
    )

    assert spec_error(tmp_path, pass_exists=only_known()) == (
        f"{path}:3:1: error: pipeline 'a' extends unknown pipeline 'torch-to-linalgg'\n"
        "  hint: did you mean 'torch-to-linalg'?\n"
        f"{path}:5: error: stage 's' has no reason\n"
        '  hint: add reason = "one line saying why the stage is there"\n'
        f"{path}:8:12: error: unknown pass 'bogus-pass' in stage 's' of pipeline 'a'\n"
        "  hint: run `mlirpipe passes` to list the passes available"
    )


def test_placing_a_stage_at_an_unknown_stage_suggests_close_names(tmp_path, write_file):
    path = write_file(
        "a.toml",
        """
        [pipeline]
        name = "a"
        extends = "refbackend"
        remove = ["lower-to-cff"]

        [[stage]]
        name = "x1"
        after = "bufferise"
        reason = "r"
        passes = ["cse"]

        [[stage]]
        name = "x2"
        before = "finalizing-bufferise"
        reason = "r"
        passes = ["cse"]

        [[stage]]
        name = "x3"
        replaces = "linalg-to-loop"
        reason = "r"
        passes = ["cse"]

        [[stage]]
        name = "x4"
        after = "zzz"
        reason = "r"
        passes = ["cse"]
    """,
    )

    assert spec_error(tmp_path) == (
        f"{path}:8:1: error: stage 'x1' is placed after unknown stage 'bufferise'\n"
        "  hint: did you mean 'bufferize'?\n"
        f"{path}:14:1: error: stage 'x2' is placed before unknown stage 'finalizing-bufferise'\n"
        "  hint: did you mean 'finalizing-bufferize'?\n"
        f"{path}:20:1: error: stage 'x3' replaces unknown stage 'linalg-to-loop'\n"
        "  hint: did you mean 'linalg-to-loops'?\n"
        f"{path}:26:1: error: stage 'x4' is placed after unknown stage 'zzz'\n"
        "  hint: stages of 'refbackend': generalize-tensor-pad, bufferize, finalizing-bufferize, "
        "buffer-deallocation, munge-calling-conventions, linalg-to-loops, lower-to-cf, "
        "expand-ops-for-llvm, convert-to-llvm\n"
        f"{path}:4:11: error: pipeline 'a' removes unknown stage 'lower-to-cff'\n"
        "  hint: did you mean 'lower-to-cf'?"
    )


def test_inserting_an_existing_stage_or_using_two_placing_keys_is_reported(tmp_path, write_file):
    path = write_file(
        "a.toml",
        """
        [pipeline]
        name = "a"
        extends = "refbackend"

        [[stage]]
        name = "bufferize"
        after = "lower-to-cf"
        reason = "r"
        passes = ["cse"]

        [[stage]]
        name = "q"
        after = "lower-to-cf"
        before = "lower-to-cf"
        reason = "r"
        passes = ["cse"]
    """,
    )

    assert spec_error(tmp_path) == (
        f"{path}:6:1: error: stage 'bufferize' already exists in 'refbackend'\n"
        '  hint: to change it, write replaces = "bufferize"\n'
        f"{path}:14:1: error: stage 'q' gives more than one of after/before/replaces\n"
        "  hint: keep one"
    )


def test_two_files_of_one_directory_defining_one_pipeline_is_an_error(tmp_path, write_file):
    a = write_file("a.toml", HEAD.format(name="x") + STAGE.format(name="s", passes="cse"))
    b = write_file("b.toml", HEAD.format(name="x") + STAGE.format(name="s", passes="cse"))

    assert spec_error(tmp_path) == (
        f"{b}:1: error: pipeline 'x' is defined twice\n"
        f"  hint: it is also defined at {a}:1; rename one"
    )


def test_a_pipeline_directory_that_does_not_exist_is_reported(tmp_path):
    missing = tmp_path / "nope"

    assert spec_error(missing) == (
        f"error: pipeline directory '{missing}' does not exist\n"
        "  hint: fix the path given by --mlirpipe-pipelines / mlirpipe_pipelines / "
        "--pipelines-dir / $MLIRPIPE_PIPELINES_PATH"
    )


# --- pass names -------------------------------------------------------------------------------


def test_unknown_pass_is_located_at_the_pass_not_at_a_longer_name_or_the_stage_name(
    tmp_path, write_file
):
    path = write_file(
        "a.toml",
        HEAD.format(name="a")
        + """
[[stage]]
name = "foo-bar"
reason = "runs foo-bar"
passes = [
    "foo-bar-baz",
    "func.func(foo-bar)",
]
""",
    )

    message = spec_error(
        tmp_path, pass_exists=only_known("foo-bar-baz"), known_passes=lambda: ["foo-bar-baz", "cse"]
    )

    assert message == (
        f"{path}:11:16: error: unknown pass 'foo-bar' in stage 'foo-bar' of pipeline 'a'\n"
        "  hint: did you mean 'foo-bar-baz'?"
    )


def test_unknown_passes_of_a_parent_are_reported_once_in_the_file_that_has_them(
    tmp_path, write_file
):
    parent = write_file(
        "parent.toml", HEAD.format(name="parent") + STAGE.format(name="s", passes="bogus")
    )
    write_file(
        "child.toml",
        '[pipeline]\nname = "child"\nextends = "parent"\n'
        + STAGE.format(name="t", passes="cse").replace("reason", 'after = "s"\nreason'),
    )

    assert spec_error(tmp_path, pass_exists=only_known("cse")) == (
        f"{parent}:9:12: error: unknown pass 'bogus' in stage 's' of pipeline 'parent'\n"
        "  hint: run `mlirpipe passes` to list the passes available"
    )


def test_a_pass_pipeline_with_known_passes_passes_the_check():
    check_pipeline_text(
        "builtin.module(func.func(cse),canonicalize)", {"cse", "canonicalize"}.__contains__, list
    )


def test_a_pass_pipeline_reports_every_unknown_pass_with_its_column(real_pass_checks):
    with pytest.raises(PipelineSpecError) as info:
        check_pipeline_text(
            "canonicalise,cse,func.func(convert-linalg-to-loopz)",
            real_pass_checks["pass_exists"],
            real_pass_checks["known_passes"],
            Location("--pass-pipeline"),
        )

    lines = str(info.value).splitlines()
    assert lines[0] == (
        "--pass-pipeline: error: unknown pass 'canonicalise' (at column 1 of the pass pipeline)"
    )
    assert lines[1].startswith("  hint: did you mean 'canonicalize'")
    assert lines[2] == (
        "--pass-pipeline: error: unknown pass 'convert-linalg-to-loopz' "
        "(at column 28 of the pass pipeline)"
    )
    assert lines[3].startswith("  hint: did you mean 'convert-linalg-to-loops'")
    assert len(lines) == 4


def test_a_malformed_pass_pipeline_is_reported_with_its_column():
    with pytest.raises(PipelineSpecError) as info:
        check_pipeline_text("func.func(cse", lambda n: True, list)

    assert str(info.value) == (
        "error: malformed pass pipeline: '(' after 'func.func' is never closed "
        "(at column 10 of 'func.func(cse')\n"
        "  hint: use MLIR's textual syntax: pass{opt=value}, op-name(nested-passes)"
    )


def test_unknown_pass_without_close_match_points_to_the_pass_listing():
    with pytest.raises(PipelineSpecError) as info:
        check_pipeline_text("zzzz", lambda n: False, lambda: ["cse"])

    assert str(info.value) == (
        "error: unknown pass 'zzzz' (at column 1 of the pass pipeline)\n"
        "  hint: run `mlirpipe passes` to list the passes available"
    )


def test_a_pipeline_file_that_cannot_be_read_is_reported(tmp_path):
    (tmp_path / "dir.toml").mkdir()

    assert spec_error(tmp_path) == (
        f"{tmp_path / 'dir.toml'}: error: cannot read pipeline file: Is a directory"
    )


@pytest.mark.parametrize(
    ("pipeline", "front", "stages"),
    [
        ("tosa-vectorized", "tosa", ["tosa-to-linalg"]),
        (
            "onnx-linalg-vectorized",
            "onnx-linalg",
            ["onnx-to-torch", "decompose-tanh-gelu", "onnx-to-linalg"],
        ),
    ],
)
def test_a_vectorized_front_end_runs_the_stages_of_its_own_pipeline(pipeline, front, stages):
    """The front stages are copied into the -vectorized pipelines: they must stay the same."""
    catalog = load_catalog([])
    copied = {s.name: s.passes for s in catalog.get(pipeline).stages}
    original = {s.name: s.passes for s in catalog.get(front).stages}
    assert [copied[name] for name in stages] == [original[name] for name in stages]


def test_keeping_going_past_a_broken_file_leaves_the_other_pipelines_usable(tmp_path, write_file):
    write_file("good.toml", HEAD.format(name="good") + STAGE.format(name="s", passes="cse"))
    broken = HEAD.format(name="bad") + STAGE.format(name="s", passes="cse").replace(
        "passes", "pases"
    )
    write_file("bad.toml", broken)
    child = HEAD.format(name="child").replace("[pipeline]\n", '[pipeline]\nextends = "bad"\n')
    write_file("child.toml", child)

    catalog = load_catalog([tmp_path], keep_going=True)

    assert catalog.get("good").stage_names() == ["s"]
    assert catalog.get("refbackend").name == "refbackend"
    assert "bad" in catalog and "bad" not in catalog.names()
    unknown_key = f"{tmp_path / 'bad.toml'}:9:1: error: unknown key 'pases' in [[stage]]"
    for name in ("bad", "child"):  # its own file, or a file it extends
        with pytest.raises(PipelineSpecError) as info:
            catalog.get(name)
        assert str(info.value).startswith(unknown_key)
    with pytest.raises(PipelineSpecError) as info:
        catalog.get("nope")
    assert str(info.value).splitlines()[0] == "error: unknown pipeline 'nope'"
    assert unknown_key in str(info.value)  # it may be what the broken file meant to define
    with pytest.raises(PipelineSpecError) as info:
        catalog.check()
    assert str(info.value).startswith(unknown_key)


def test_keeping_going_still_stops_at_a_problem_of_no_file(tmp_path):
    message = f"error: pipeline directory '{tmp_path / 'nope'}' does not exist"
    with pytest.raises(PipelineSpecError, match=re.escape(message)):
        load_catalog([tmp_path / "nope"], keep_going=True)
