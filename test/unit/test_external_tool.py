"""Stages run by an external `*-opt` tool (the torch-mlir wheel's own `torch-mlir-opt`)."""

from __future__ import annotations

import dataclasses
import io
import math
import os
import stat
from pathlib import Path

import pytest

from pytest_mlirpipe.cli import main as cli
from pytest_mlirpipe.errors import IRParseError, PipelineSpecError, StageFailure
from pytest_mlirpipe.lowering import external
from pytest_mlirpipe.lowering.prefix_cache import prefix_cache
from pytest_mlirpipe.lowering.spec import load_catalog
from pytest_mlirpipe.lowering.stages import run_stages
from pytest_mlirpipe.tools import opt

SEED = Path(__file__).parents[1] / "pipelines" / "torch-to-linalg" / "matmul-2x2.mlir"


@pytest.fixture(scope="module")
def native_opt() -> str:
    torch_mlir = pytest.importorskip("torch_mlir")
    path = Path(next(iter(torch_mlir.__path__))) / "_mlir_libs" / "torch-mlir-opt"
    if not os.access(path, os.X_OK):
        pytest.skip("the torch-mlir wheel has no native torch-mlir-opt")
    return str(path)


@pytest.fixture
def tool_dir(tmp_path: Path, native_opt: str) -> Path:
    """A pipeline folder with `torch-to-linalg` run by torch-mlir-opt, and a 3-stage pipeline."""
    d = tmp_path / "pipelines"
    d.mkdir()
    (d / "tool.toml").write_text(
        # the tool does not run the project's Python passes (decompose-tanh-gelu's)
        f'[pipeline]\nname = "t2l-tool"\nextends = "torch-to-linalg"\ntool = "{native_opt}"\n'
        'remove = ["decompose-tanh-gelu"]\n'
    )
    (d / "clean.toml").write_text(
        f"""[pipeline]
name = "clean"
input = "torch"
output = "torch"
tool = "{native_opt}"

[[stage]]
name = "canon"
reason = "fold constants"
passes = ["canonicalize"]

[[stage]]
name = "cse"
reason = "one constant each"
passes = ["func.func(cse)"]

[[stage]]
name = "backend"
reason = "value semantics"
passes = ["torchdynamo-export-to-torch-backend-pipeline", "symbol-dce"]
"""
    )
    return d


def catalog(*dirs: Path):
    return load_catalog(
        [str(d) for d in dirs],
        pass_exists=lambda name: True,
        tool_passes=external.tool_passes,
    )


def in_process(pipeline):
    """The same pipeline with its stages run by the bindings."""
    return dataclasses.replace(pipeline, tool=None)


@pytest.mark.parametrize("name", ["t2l-tool", "clean"])
def test_the_tool_gives_the_same_ir_per_stage_as_the_bindings(tool_dir, name):
    pipe = catalog(tool_dir).get(name)
    source = SEED.read_text()

    by_tool = run_stages(source, pipe, source_name="m.mlir")
    by_bindings = run_stages(source, in_process(pipe), source_name="m.mlir")

    assert [s.stage for s in by_tool.snapshots] == pipe.stage_names()
    assert [s.ir for s in by_tool.snapshots] == [s.ir for s in by_bindings.snapshots]
    assert by_tool.final_ir == by_bindings.final_ir
    assert all(math.isfinite(s.seconds) and s.seconds >= 0 for s in by_tool.snapshots)


def test_stage_checks_stage_diffs_and_the_list_work_with_the_tool(tool_dir, native_opt):
    out, err = io.StringIO(), io.StringIO()
    argv = [str(SEED), "--pipeline", "t2l-tool", "--stop-after", "torch-backend"]
    status = opt.run([*argv, "--pipelines-dir", str(tool_dir)], io.StringIO(), out, err)
    assert (status, err.getvalue()) == (0, "")
    assert "torch.aten.mm %arg0, %0" in out.getvalue()
    assert "torch.aten.full_like" not in out.getvalue()

    out = io.StringIO()
    argv = ["stages", str(SEED), "--pipeline", "t2l-tool", "--diff"]
    assert cli.run([*argv, "--pipelines-dir", str(tool_dir)], io.StringIO(), out, err) == 0
    assert "// ===== stage 2/2: torch-to-linalg (" in out.getvalue()
    assert "+    %2 = linalg.matmul ins(%arg0, %cst_0" in out.getvalue()

    out = io.StringIO()
    assert cli.run(["list", "--pipelines-dir", str(tool_dir)], io.StringIO(), out, err) == 0
    assert f"  tool: {native_opt} (runs the stages, not the bindings)\n" in out.getvalue()


def test_a_run_is_cached_for_the_next_run_lines(tool_dir):
    pipe = catalog(tool_dir).get("clean")
    with prefix_cache() as cache:
        whole = run_stages(SEED.read_text(), pipe, source_name="m.mlir")
        part = run_stages(SEED.read_text(), pipe, source_name="m.mlir", stop_after="cse")
        assert (cache.hits, cache.stages_reused) == (1, 2)
    assert part.final_ir == whole.snapshots[1].ir


def test_a_tool_named_without_a_path_is_found_in_the_tool_dirs_first(
    tmp_path, native_opt, monkeypatch
):
    # The venv's PATH holds a Python wrapper of the same name; the tool dirs win over it.
    (tmp_path / "t.toml").write_text(
        '[pipeline]\nname = "t"\nextends = "torch-to-linalg"\ntool = "torch-mlir-opt"\n'
        'remove = ["decompose-tanh-gelu"]\n'
    )
    monkeypatch.setenv(external.TOOL_DIRS_ENV, str(Path(native_opt).parent))
    tool = catalog(tmp_path).get("t").tool
    assert tool is not None and external.find_tool(tool) == native_opt


def test_a_pass_the_tool_does_not_register_is_reported_with_close_matches(tmp_path, native_opt):
    (tmp_path / "p.toml").write_text(
        f"""[pipeline]
name = "p"
input = "torch"
output = "torch"
tool = "{native_opt}"

[[stage]]
name = "s"
reason = "r"
passes = ["canonicalise", "one-shot-bufferize"]
"""
    )
    with pytest.raises(PipelineSpecError) as info:
        catalog(tmp_path)
    assert info.value.format() == (
        f"{tmp_path}/p.toml:10:12: error: unknown pass 'canonicalise' in stage 's' of pipeline "
        "'p': torch-mlir-opt does not register it\n"
        "  hint: did you mean 'canonicalize'?\n"
        f"{tmp_path}/p.toml:10:28: error: unknown pass 'one-shot-bufferize' in stage 's' of "
        "pipeline 'p': torch-mlir-opt does not register it\n"
        f"  hint: `{native_opt} --help` lists the passes it registers"
    )


def test_an_inherited_stage_of_the_project_s_python_passes_is_refused_for_a_tool(
    tmp_path, native_opt
):
    (tmp_path / "p.toml").write_text(
        f'[pipeline]\nname = "p"\nextends = "torch-to-linalg"\ntool = "{native_opt}"\n'
    )
    with pytest.raises(PipelineSpecError) as info:
        catalog(tmp_path)
    assert info.value.format() == (
        f"{tmp_path}/p.toml:3:1: error: pipeline 'p' runs its stages with torch-mlir-opt, which "
        "cannot run stage 'decompose-tanh-gelu' (from 'torch-to-linalg'): "
        "mlirpipe-decompose-tanh-gelu is a pass of pytest-mlirpipe's own, run only in-process\n"
        '  hint: leave the stage out: remove = ["decompose-tanh-gelu"]'
    )


def test_a_failing_pass_is_reported_with_its_stage_and_located_diagnostics(tool_dir):
    text = (
        (tool_dir / "clean.toml")
        .read_text()
        .replace(
            '"symbol-dce"',
            '"symbol-dce"]\n\n'
            + (
                '[[stage]]\nname = "verify"\nreason = "r"\n'
                'passes = ["cse", "torch-verify-linalg-on-tensors-backend-contract"'
            ),
        )
    )
    (tool_dir / "clean.toml").write_text(text)
    with pytest.raises(StageFailure) as info:
        run_stages(SEED.read_text(), catalog(tool_dir).get("clean"), source_name="m.mlir")
    text = info.value.format()
    assert text.startswith(
        "error: pipeline 'clean', stage 'verify' failed: pass "
        "'torch-verify-linalg-on-tensors-backend-contract' failed\n"
        "  passes: cse,torch-verify-linalg-on-tensors-backend-contract\n"
        "m.mlir:27:3: error: failed to legalize operation 'func.func'"
    )
    assert "m.mlir:26:1: error: Module does not conform to the linalg-on-tensors" in text
    assert info.value.stage_input.count("torch.aten.mm") == 1  # the IR after 'backend'


def test_input_the_tool_cannot_parse_is_a_parse_error_in_the_users_file(tool_dir):
    pipe = catalog(tool_dir).get("clean")
    with pytest.raises(IRParseError) as info:
        run_stages('func.func @f() {\n  "foo.bar"() : () -> ()\n', pipe, source_name="x.mlir")
    assert info.value.format().startswith(
        "x.mlir:2:12: error: cannot parse MLIR: operation being parsed with an unregistered dialect"
    )


def test_a_missing_tool_is_reported_at_the_pipeline_file(tmp_path, monkeypatch):
    monkeypatch.setenv(external.TOOL_DIRS_ENV, str(tmp_path))
    (tmp_path / "m.toml").write_text(
        '[pipeline]\nname = "m"\nextends = "torch-to-linalg"\ntool = "nope-opt"\n'
        'remove = ["decompose-tanh-gelu"]\n'
    )
    (tmp_path / "r.toml").write_text(
        '[pipeline]\nname = "r"\nextends = "torch-to-linalg"\ntool = "build/bin/nope-opt"\n'
        'remove = ["decompose-tanh-gelu"]\n'
    )
    cat = catalog(tmp_path)  # a missing tool does not stop the other pipelines
    with pytest.raises(PipelineSpecError) as info:
        run_stages(SEED.read_text(), cat.get("m"))
    assert info.value.format() == (
        f"{tmp_path}/m.toml:4:1: error: pipeline 'm' runs its stages with nope-opt, which is "
        "not in $MLIRPIPE_TOOL_DIRS (mlirpipe_tool_dirs) or on PATH\n"
        "  hint: build it and add its folder to mlirpipe_tool_dirs or PATH, or give its path: "
        'tool = "build/bin/nope-opt" (relative to the pipeline file)'
    )
    with pytest.raises(PipelineSpecError) as info:
        run_stages(SEED.read_text(), cat.get("r"))
    assert info.value.format() == (
        f"{tmp_path}/r.toml:4:1: error: pipeline 'r' runs its stages with "
        f"{tmp_path}/build/bin/nope-opt, which does not exist or is not executable\n"
        "  hint: build it, or fix the path (a relative one is relative to the pipeline file)"
    )


# --- a tool that crashes, hangs or lacks the marker pass: shell scripts standing in ----------

FAKE_HELP = "  Compiler passes to run\\n    Passes:\\n      --boom  - b\\n{marker}"


def fake_tool(tmp_path: Path, body: str, marker: bool = True) -> Path:
    """An executable `fake-opt` whose --help lists `boom` (and the marker); `body` runs else."""
    help_text = FAKE_HELP.format(marker="      --print-op-stats  - s\\n" if marker else "")
    path = tmp_path / "bin" / "fake-opt"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        "#!/bin/sh\nulimit -c 0\n"
        f"case \"$*\" in *--help*) printf '{help_text}'; exit 0;; esac\n{body}\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "f.toml").write_text(
        """[pipeline]
name = "f"
input = "torch"
output = "torch"
tool = "bin/fake-opt"
timeout = 0.5

[[stage]]
name = "one"
reason = "r"
passes = ["boom"]

[[stage]]
name = "two"
reason = "r"
passes = ["boom"]
"""
    )
    return path


def test_a_crashing_tool_is_reported_with_the_stage_pass_and_signal(tmp_path):
    fake_tool(
        tmp_path,
        'case "$*" in *before-all*) echo "// -----// IR Dump Before Boom (boom) //----- //" >&2;; '
        "esac\nkill -SEGV $$",
    )
    with pytest.raises(StageFailure) as info:
        run_stages("module {\n}\n", catalog(tmp_path).get("f"))
    assert info.value.format() == (
        "error: pipeline 'f', stage 'one' failed: fake-opt crashed in pass 'boom': killed by "
        "SIGSEGV (a segmentation fault)\n"
        "  passes: boom"
    )


def test_a_hanging_tool_is_killed_at_the_pipelines_timeout(tmp_path):
    fake_tool(tmp_path, "exec sleep 5")
    with pytest.raises(StageFailure) as info:
        run_stages("module {\n}\n", catalog(tmp_path).get("f"))
    assert info.value.format() == (
        "error: pipeline 'f', stage 'one' failed: fake-opt did not finish within 0.5 s "
        "(the pipeline's timeout) and was killed\n"
        "  passes: boom"
    )


def test_a_tool_without_the_marker_pass_is_refused_for_several_stages(tmp_path):
    fake_tool(tmp_path, "exit 0", marker=False)
    with pytest.raises(PipelineSpecError) as info:
        run_stages("module {\n}\n", catalog(tmp_path).get("f"))
    assert info.value.format() == (
        f"{tmp_path}/f.toml:5:1: error: fake-opt does not register print-op-stats, which the "
        "stage runner puts after each stage to see where it ends\n"
        "  hint: run one stage at a time (--start-after/--stop-after), or register MLIR's "
        "transforms passes in the tool"
    )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            'tool = "x-opt"\ntimeout = -1',
            "p.toml:6:1: error: timeout must be a positive number of seconds, not -1\n"
            "  hint: e.g. timeout = 60",
        ),
        (
            "timeout = 5",
            "p.toml:5:1: error: timeout is for a pipeline whose stages an external tool runs\n"
            '  hint: name the tool, e.g. tool = "foo-opt", or remove the timeout',
        ),
        (
            "tool = 3",
            "p.toml:5:1: error: tool must name an *-opt program, not 3\n"
            '  hint: e.g. tool = "foo-opt" (found in the tool folders or on PATH), or a path',
        ),
    ],
)
def test_bad_tool_keys_are_reported(tmp_path, lines, message):
    (tmp_path / "p.toml").write_text(
        f'[pipeline]\nname = "p"\ninput = "torch"\noutput = "torch"\n{lines}\n\n'
        '[[stage]]\nname = "s"\nreason = "r"\npasses = ["canonicalize"]\n'
    )
    with pytest.raises(PipelineSpecError) as info:
        catalog(tmp_path)
    assert info.value.format() == f"{tmp_path}/{message}"


def test_a_stage_may_not_run_the_marker_pass_before_the_last(tmp_path):
    fake_tool(tmp_path, "exit 0")
    text = (tmp_path / "f.toml").read_text().replace('["boom"]', '["print-op-stats"]', 1)
    (tmp_path / "f.toml").write_text(text)
    with pytest.raises(PipelineSpecError) as info:
        run_stages("module {\n}\n", catalog(tmp_path).get("f"))
    assert info.value.format() == (
        f"{tmp_path}/f.toml:9:1: error: stage 'one' of pipeline 'f' runs print-op-stats, which "
        "marks where each stage ends when a tool runs the stages\n"
        "  hint: move print-op-stats to the last stage, or run the pipeline in-process (no tool)"
    )


def test_help_lists_passes_and_pipelines_not_their_options(native_opt):
    import subprocess

    text = subprocess.run([native_opt, "--help"], capture_output=True, text=True).stdout
    names = external.parse_help_passes(text)
    assert {
        "canonicalize",
        "print-op-stats",
        "torch-backend-to-linalg-on-tensors-backend-pipeline",
    } <= set(names)
    assert "torch-finalizing-backend-type-conversion-for-stablehlo" in names
    assert "max-iterations" not in names and "cse-between-iterations" not in names


def test_the_tools_stderr_is_split_into_stages_with_their_diagnostics_and_output():
    stderr = (
        "<stdin>:2:3: warning: slow op\n"
        "  %0 = foo\n"
        "  ^\n"
        "<stdin>:1:1: note: in here\n"
        "a pass's own line\n"
        "Operations encountered:\n"
        "  builtin.module , 1\n"
        "// -----// IR Dump After PrintOpStatsPass: print-op-stats{json=false} //----- //\n"
        "module {\n  func.func @f()\n}\n\n\n"
        "<unknown>:0: remark: done\n"
    )
    out = external.split_output(stderr)
    assert out.dumps == ["module {\n  func.func @f()\n}\n"]
    first, printed = external.parse_diagnostics(out.texts[0], "m.mlir")
    assert [d.format() for d in first] == [
        "m.mlir:2:3: warning: slow op\n  m.mlir:1:1: note: in here"
    ]
    assert printed == ["a pass's own line"]
    second, _ = external.parse_diagnostics(out.texts[1], "m.mlir")
    assert [d.format() for d in second] == ["remark: done"]
