"""Every command a failing check prints runs as printed, from another folder, and reproduces."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# A miscompile in a pass of the suite's own module, loaded through $MLIRPIPE_PASS_MODULES and
# used by a pipeline of the suite's own folder, named by the ini's mlirpipe_pipelines.
BUGGY_PASSES = """
from pytest_mlirpipe.lowering.passes import register
from pytest_mlirpipe.mlir_env import ir


@register("test-double-constants", "every nonzero float constant doubles")
def double_constants(options):
    def run_pass(op, pass_):
        found = []

        def visit(inner):
            if inner.name == "arith.constant":
                value = inner.attributes["value"]
                if isinstance(value, ir.FloatAttr) and value.value != 0:
                    found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        for constant in found:
            value = constant.attributes["value"]
            with constant.location:
                constant.attributes["value"] = ir.FloatAttr.get(value.type, value.value * 2)

    return run_pass
"""

BUGGY_PIPELINE = """\
[pipeline]
name = "refbackend-buggy"
extends = "refbackend"

[[stage]]
name = "wrong"
after = "bufferize"
reason = "a miscompile"
passes = ["test-double-constants"]
"""

SUITE = """
import torch


class Shift(torch.nn.Module):
    def forward(self, x):
        return x + 0.5


def test_shift(mlirpipe):
    mlirpipe.check(Shift(), torch.ones(4), pipelines=["refbackend-buggy"])
"""

LEADS = (
    "reproduce the lowering with: ",
    "rerun the stage with: ",
    "check it again outside pytest (seeded random inputs of these shapes): ",
)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "pipelines").mkdir()
    (pytester.path / "pipelines" / "refbackend-buggy.toml").write_text(BUGGY_PIPELINE)
    (pytester.path / "buggy_passes.py").write_text(BUGGY_PASSES)
    pytester.makeini("[pytest]\nmlirpipe_pipelines = pipelines\n")
    pytester.makepyfile(test_shift=SUITE)
    return pytester


def _printed_commands(output: str) -> dict[str, str]:
    """The command after each lead, as printed (to the end of its line or sentence)."""
    commands = {}
    for line in output.splitlines():
        for lead in LEADS:
            if lead in line:
                commands[lead] = line.split(lead, 1)[1]
    return commands


def _shell(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """`command` run by a POSIX shell in `folder`, in an environment without the pass
    modules that the pytest run had (a fresh terminal's)."""
    env = {k: v for k, v in os.environ.items() if k != "MLIRPIPE_PASS_MODULES"}
    return subprocess.run(
        ["sh", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )


def test_every_command_a_failing_check_prints_reproduces_it_from_another_folder(
    suite: pytest.Pytester, tmp_path_factory
) -> None:
    # as a user runs it: pytest finds buggy_passes beside the test file (its folder is on
    # sys.path under pytest), a shell's mlirpipe-opt would not
    env = {**os.environ, "MLIRPIPE_PASS_MODULES": "buggy_passes"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--mlirpipe-bisect"],
        cwd=suite.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = run.stdout
    assert run.returncode == 1 and "1 failed" in output, output + run.stderr
    assert "outputs diverge after stage 'wrong' of pipeline 'refbackend-buggy'" in output
    commands = _printed_commands(output)
    assert set(commands) == set(LEADS), output
    elsewhere = tmp_path_factory.mktemp("elsewhere")

    lowering = commands[LEADS[0]]
    assert "--pipelines-dir " in lowering and "MLIRPIPE_PASS_MODULES=buggy_passes " in lowering
    lowered = _shell(lowering, elsewhere)
    assert lowered.returncode == 0, lowered.stderr
    output_file = Path(lowering.split(" -o ")[1].split()[0])
    assert "llvm.func @forward" in output_file.read_text()

    stage = commands[LEADS[1]]
    rerun = _shell(stage, elsewhere)
    assert rerun.returncode == 0, rerun.stderr
    folder = Path(output.split("IR before and after: ")[1].split()[0]).parent
    assert rerun.stdout == (folder / "wrong.output.mlir").read_text()

    check = _shell(commands[LEADS[2]] + " --no-time --bisect", elsewhere)
    assert check.returncode == 1, check.stderr
    assert "through pipeline 'refbackend-buggy' (jit, refbackend-callback): result 0 " in (
        check.stderr
    )
    assert "4 of 4 elements differ (100.00%)" in check.stderr
    # and what `mlirpipe run` prints runs too
    again = _printed_commands(check.stderr)
    assert set(again) == set(LEADS[:2]), check.stderr
    for lead in LEADS[:2]:
        rerun = _shell(again[lead], elsewhere)
        assert rerun.returncode == 0, rerun.stderr
