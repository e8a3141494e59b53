"""Running a pipeline stage by stage: snapshots, stage selection, and how a stage fails."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pytest_mlirpipe.errors import (
    IRParseError,
    MlirpipeError,
    PipelineSpecError,
    StageFailure,
    UsageError,
)
from pytest_mlirpipe.lowering.prefix_cache import prefix_cache
from pytest_mlirpipe.lowering.stages import run_pass_pipeline, run_stages, select_stages
from pytest_mlirpipe.mlir_env import ir
from pytest_mlirpipe.model import IRLevel, Location, Pipeline, Stage

FORBID_LINALG = "mlirpipe-forbid-ops{ops=linalg.*}"


def pipeline(*stages: tuple[str, list[str]]) -> Pipeline:
    """A test pipeline from (stage name, passes) pairs."""
    built = tuple(
        Stage(name, tuple(passes), "for the test", Location("test.toml", i + 1))
        for i, (name, passes) in enumerate(stages)
    )
    return Pipeline(
        "test", "", IRLevel.LINALG_ON_TENSORS, IRLevel.LLVM, built, Location("test.toml", 1)
    )


def op_names(module: object) -> set[str]:
    names: set[str] = set()

    def visit(op: object) -> object:
        names.add(op.name)  # type: ignore[attr-defined]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)  # type: ignore[attr-defined]
    return names


# --- a whole run ------------------------------------------------------------------------------


def test_refbackend_run_keeps_one_snapshot_per_stage_in_order(mm_linalg, refbackend):
    run = run_stages(mm_linalg, refbackend, source_name="mm.mlir")

    assert [s.stage for s in run.snapshots] == refbackend.stage_names()
    assert [s.passes for s in run.snapshots] == [s.passes for s in refbackend.stages]
    assert all(s.ir and s.ir.startswith("module {") for s in run.snapshots)
    assert all(s.seconds >= 0 and s.diagnostics == () for s in run.snapshots)
    assert run.final_ir == run.snapshots[-1].ir


def test_to_tensor_is_left_by_bufferize_and_removed_by_finalizing_bufferize(mm_linalg, refbackend):
    run = run_stages(mm_linalg, refbackend)
    after = {s.stage: s.ir for s in run.snapshots}

    assert "bufferization.to_tensor" in after["bufferize"]
    assert "bufferization.to_tensor" not in after["finalizing-bufferize"]
    assert "func.func @forward(%arg0: memref<2x2xf32>" in after["finalizing-bufferize"]


def test_only_llvm_dialect_ops_are_left_after_refbackend(mm_linalg, refbackend):
    run = run_stages(mm_linalg, refbackend)

    names = op_names(run.module) - {"builtin.module"}
    assert names
    assert {n for n in names if not n.startswith("llvm.")} == set()
    assert "llvm.func" in names


def test_stop_after_runs_the_stages_up_to_and_including_it(mm_linalg, refbackend):
    run = run_stages(mm_linalg, refbackend, stop_after="bufferize")

    assert [s.stage for s in run.snapshots] == ["generalize-tensor-pad", "bufferize"]
    assert "bufferization.to_tensor" in run.final_ir


def test_start_after_continues_from_the_ir_after_that_stage(mm_linalg, refbackend):
    whole = run_stages(mm_linalg, refbackend)
    after_bufferize = whole.snapshots[refbackend.stage_index("bufferize")].ir

    run = run_stages(after_bufferize, refbackend, start_after="bufferize", stop_after="lower-to-cf")

    names = refbackend.stage_names()
    expected = names[names.index("bufferize") + 1 : names.index("lower-to-cf") + 1]
    assert [s.stage for s in run.snapshots] == expected
    assert run.final_ir == whole.snapshots[refbackend.stage_index("lower-to-cf")].ir


def test_without_capture_snapshots_hold_no_ir_but_the_final_module_is_kept(mm_linalg, refbackend):
    run = run_stages(mm_linalg, refbackend, capture=False)

    assert [s.ir for s in run.snapshots] == [None] * len(refbackend.stages)
    assert run.final_ir == run_stages(mm_linalg, refbackend).final_ir


def test_select_stages_reports_both_unknown_names_at_once_with_close_matches(refbackend):
    with pytest.raises(UsageError) as info:
        select_stages(refbackend, start_after="bufferise", stop_after="lower-to-cff")

    assert str(info.value) == (
        "error: --start-after: pipeline 'refbackend' has no stage 'bufferise'\n"
        "  hint: did you mean 'bufferize'?\n"
        "error: --stop-after: pipeline 'refbackend' has no stage 'lower-to-cff'\n"
        "  hint: did you mean 'lower-to-cf'?"
    )


def test_select_stages_without_close_match_lists_the_stages():
    pipe = pipeline(("one", ["cse"]), ("two", ["cse"]))

    with pytest.raises(UsageError) as info:
        select_stages(pipe, stop_after="zzz")

    assert str(info.value) == (
        "error: --stop-after: pipeline 'test' has no stage 'zzz'\n  hint: its stages: one, two"
    )


def test_start_after_not_before_stop_after_leaves_no_stage_to_run():
    pipe = pipeline(("one", ["cse"]), ("two", ["cse"]))

    with pytest.raises(UsageError) as info:
        select_stages(pipe, start_after="two", stop_after="one")

    assert str(info.value) == (
        "error: no stage to run: --start-after two is not before --stop-after one\n"
        "  hint: stages in order: one, two"
    )


def test_a_pass_pipeline_runs_with_or_without_the_builtin_module_wrapper(mm_linalg):
    bare = run_pass_pipeline(mm_linalg, "func.func(linalg-generalize-named-ops)")
    wrapped = run_pass_pipeline(mm_linalg, "builtin.module(func.func(linalg-generalize-named-ops))")

    assert bare.final_ir == wrapped.final_ir
    assert "linalg.generic" in bare.final_ir
    assert "linalg.matmul" not in bare.final_ir
    assert [s.stage for s in bare.snapshots] == ["pass-pipeline"]


# --- option defaults of Python passes ----------------------------------------------------------


class _Unreadable(Mapping):
    """Option defaults whose values must not be read (the text sets every option)."""

    def __getitem__(self, key):
        raise AssertionError(f"default {key!r} was read")

    def __iter__(self):
        return iter(("ops",))

    def __len__(self):
        return 1


def test_a_python_pass_takes_an_option_default_the_text_does_not_set(mm_linalg):
    defaults = {"mlirpipe-forbid-ops": {"ops": "linalg.*"}}

    with pytest.raises(StageFailure) as info:
        run_pass_pipeline(mm_linalg, "mlirpipe-forbid-ops", pass_options=defaults)

    assert info.value.reason == "pass 'mlirpipe-forbid-ops' failed"
    assert len(info.value.diagnostics) == 2


def test_an_option_in_the_text_wins_over_its_default_which_is_then_not_read(mm_linalg):
    run = run_pass_pipeline(
        mm_linalg,
        "mlirpipe-forbid-ops{ops=tosa.*}",
        pass_options={"mlirpipe-forbid-ops": _Unreadable()},
    )

    assert "linalg.matmul" in run.final_ir


def test_option_defaults_reach_the_pass_by_pass_rerun_that_names_the_culprit(mm_linalg):
    pipe = pipeline(("check", ["cse", "mlirpipe-forbid-ops"]))

    with pytest.raises(StageFailure) as info:
        run_stages(mm_linalg, pipe, pass_options={"mlirpipe-forbid-ops": {"ops": "linalg.*"}})

    assert info.value.reason == "pass 'mlirpipe-forbid-ops' failed"


def test_a_cached_prefix_is_not_reused_under_other_option_defaults(mm_linalg):
    pipe = pipeline(("tidy", ["canonicalize"]), ("check", ["mlirpipe-forbid-ops"]))
    with prefix_cache() as cache:
        run_stages(mm_linalg, pipe, pass_options={"mlirpipe-forbid-ops": {"ops": "tosa.*"}})
        with pytest.raises(StageFailure):
            run_stages(mm_linalg, pipe, pass_options={"mlirpipe-forbid-ops": {"ops": "linalg.*"}})
        run_stages(mm_linalg, pipe, pass_options={"mlirpipe-forbid-ops": {"ops": "tosa.*"}})

    # The second run reused only the stage the defaults do not reach; the third all of it.
    assert (cache.hits, cache.stages_reused) == (2, 1 + 2)


# --- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("capture", [True, False], ids=["captured", "recomputed"])
def test_failing_python_pass_raises_stage_failure_naming_stage_pass_and_input(mm_linalg, capture):
    pipe = pipeline(
        ("tidy", ["canonicalize"]),
        ("to-llvm", ["convert-func-to-llvm", FORBID_LINALG]),
        ("never-run", ["cse"]),
    )

    with pytest.raises(StageFailure) as info:
        run_stages(mm_linalg, pipe, source_name="mm.mlir", capture=capture)

    failure = info.value
    assert (failure.pipeline, failure.stage) == ("test", "to-llvm")
    assert failure.passes == ("convert-func-to-llvm", FORBID_LINALG)
    assert failure.reason == "pass 'mlirpipe-forbid-ops' failed"
    assert [(str(d.location), d.severity, d.message) for d in failure.diagnostics] == [
        ("mm.mlir:6:10", "error", "'linalg.fill' is forbidden here by mlirpipe-forbid-ops"),
        ("mm.mlir:7:10", "error", "'linalg.matmul' is forbidden here by mlirpipe-forbid-ops"),
    ]
    assert failure.stage_input == run_stages(mm_linalg, pipe, stop_after="tidy").final_ir
    assert str(failure) == (
        "error: pipeline 'test', stage 'to-llvm' failed: pass 'mlirpipe-forbid-ops' failed\n"
        f"  passes: convert-func-to-llvm,{FORBID_LINALG}\n"
        "mm.mlir:6:10: error: 'linalg.fill' is forbidden here by mlirpipe-forbid-ops\n"
        "mm.mlir:7:10: error: 'linalg.matmul' is forbidden here by mlirpipe-forbid-ops"
    )


def test_a_failure_in_the_first_stage_keeps_the_source_as_the_stage_input(mm_linalg):
    pipe = pipeline(("check", [FORBID_LINALG]))

    with pytest.raises(StageFailure) as info:
        run_stages(mm_linalg, pipe, capture=False)

    assert info.value.stage_input == mm_linalg


def test_stage_failure_with_repro_ends_with_the_command(mm_linalg):
    with pytest.raises(StageFailure) as info:
        run_stages(mm_linalg, pipeline(("check", [FORBID_LINALG])), source_name="mm.mlir")

    failure = info.value.with_repro("mlirpipe-opt x.mlir --pipeline test")

    assert failure.stage_input == info.value.stage_input
    assert str(failure).splitlines()[-1] == "  reproduce with: mlirpipe-opt x.mlir --pipeline test"


def test_forbidden_ops_inside_regions_of_unlocated_ops_are_reported_at_a_located_ancestor(
    mm_linalg,
):
    # arith.mulf lives in the implicit body of linalg.matmul, which the parser leaves unlocated.
    with pytest.raises(StageFailure) as info:
        run_stages(
            mm_linalg,
            pipeline(("check", ["mlirpipe-forbid-ops{ops=arith.mulf}"])),
            source_name="mm.mlir",
        )

    assert [d.format() for d in info.value.diagnostics] == [
        "mm.mlir:7:10: error: 'arith.mulf' is forbidden here by mlirpipe-forbid-ops"
    ]


@pytest.mark.parametrize(
    "passes",
    [
        ["func.func(tosa-to-linalg)"],
        ["canonicalize", "func.func(tosa-to-linalg)"],
        ["func.func(cse,tosa-to-linalg)"],
    ],
    ids=["alone", "after-another", "nested-with-another"],
)
def test_a_failing_nested_pass_is_named_not_its_anchor(unlowerable_tosa, passes):
    with pytest.raises(StageFailure) as info:
        run_stages(unlowerable_tosa, pipeline(("lower", passes)), source_name="c.mlir")

    assert info.value.reason == "pass 'tosa-to-linalg' failed"
    (diag,) = info.value.diagnostics
    assert str(diag.location) == "c.mlir:2:8"
    assert diag.message.startswith("failed to legalize operation 'tosa.custom'")
    assert [str(n.location) for n in diag.notes] == ["c.mlir:2:8"]


@pytest.mark.parametrize(
    ("passes", "detail"),
    [
        (
            ["canonicalize{bogus=1}"],
            "<Pass-Options-Parser>: no such option bogus; "
            "failed to add `canonicalize` with options `bogus=1`",
        ),
        (
            ["func.func(tosa-validate)"],
            "Can't add pass 'TosaValidation' restricted to 'builtin.module' on a PassManager "
            "intended to run on 'func.func', did you intend to nest?; "
            "failed to add `tosa-validate` with options ``; "
            "failed to add `func.func` with options `` to inner pipeline",
        ),
    ],
    ids=["bad-option", "bad-nesting"],
)
def test_a_stage_mlir_cannot_build_is_a_pipeline_error_at_the_stage(mm_linalg, passes, detail):
    with pytest.raises(PipelineSpecError) as info:
        run_stages(mm_linalg, pipeline(("fine", ["cse"]), ("broken", passes)))

    assert str(info.value) == (
        f"test.toml:2: error: stage 'broken' of pipeline 'test' cannot be built: {detail}\n"
        "  hint: check the pass options and the op each pass is nested in "
        "(e.g. a module pass inside func.func(...))"
    )


def test_a_pass_pipeline_mlir_cannot_build_is_located_at_the_option(mm_linalg):
    with pytest.raises(PipelineSpecError) as info:
        run_pass_pipeline(mm_linalg, "canonicalize{bogus=1}", source_name="mm.mlir")

    assert str(info.value).startswith(
        "--pass-pipeline: error: stage 'pass-pipeline' of pipeline '--pass-pipeline' cannot be "
        "built: <Pass-Options-Parser>: no such option bogus"
    )


def test_a_python_pass_nested_in_an_anchor_is_a_usage_error(mm_linalg):
    with pytest.raises(UsageError) as info:
        run_stages(mm_linalg, pipeline(("check", [f"func.func({FORBID_LINALG})"])))

    assert str(info.value) == (
        "error: Python-defined pass 'mlirpipe-forbid-ops' must run on the module, not nested in "
        "func.func(...)\n"
        "  hint: move 'mlirpipe-forbid-ops' to the top level of the pipeline"
    )


def test_an_unknown_option_of_a_python_pass_is_a_usage_error(mm_linalg):
    with pytest.raises(UsageError) as info:
        run_stages(mm_linalg, pipeline(("check", ["mlirpipe-forbid-ops{op=linalg.* x=1}"])))

    assert str(info.value) == (
        "error: pass 'mlirpipe-forbid-ops' has no option 'op', 'x'\n  hint: its options: ops"
    )


def test_mlir_that_does_not_parse_is_located_in_the_named_source():
    source = "func.func @f() {\n  %0 = foo.bar : i32\n}\n"

    with pytest.raises(IRParseError) as info:
        run_stages(source, pipeline(("s", ["cse"])), source_name="bad.mlir")

    assert info.value.path == "bad.mlir"
    assert str(info.value) == (
        "bad.mlir:2:8: error: cannot parse MLIR: Dialect `foo' not found for custom op 'foo.bar'\n"
        "  hint: fix the IR at that position, or check that its dialects are registered "
        "(torch, linalg, tosa, ... are; a custom dialect is not)"
    )


@pytest.mark.parametrize("source", ["", "  \n\n"], ids=["empty", "blank"])
def test_an_empty_input_is_reported_by_its_name(source):
    with pytest.raises(MlirpipeError) as info:
        run_stages(source, pipeline(("s", ["cse"])), source_name="empty.mlir")

    assert str(info.value) == (
        "empty.mlir: error: the input is empty: there is no MLIR to run\n"
        "  hint: give a file with at least one operation, e.g. a func.func"
    )


# --- the error types on their own -------------------------------------------------------------


def test_a_parse_error_without_diagnostics_still_names_the_file():
    assert str(IRParseError("x.mlir", [])) == (
        "x.mlir: error: cannot parse MLIR (no diagnostic was given)"
    )


def test_a_stage_failure_outside_a_named_pipeline_names_only_the_stage():
    failure = StageFailure(None, "s", ["cse", "canonicalize"], [], "pass 'cse' failed")

    assert str(failure) == (
        "error: stage 's' failed: pass 'cse' failed\n  passes: cse,canonicalize"
    )


def test_a_cache_that_cannot_be_written_is_skipped_quietly_and_says_why(tmp_path, capsys):
    from pytest_mlirpipe.mlir_env import _write_cache

    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "passes.txt"

    reason = _write_cache(target, "cse\n")

    assert capsys.readouterr() == ("", "")  # the lowering layer never prints
    assert reason.startswith(f"cannot write cache {target}: ")
    assert "File exists" in reason
    assert _write_cache(tmp_path / "cache" / "passes.txt", "cse\n") is None
    assert (tmp_path / "cache" / "passes.txt").read_text() == "cse\n"
