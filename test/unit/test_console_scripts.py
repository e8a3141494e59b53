"""The console scripts as a shell runs them: a closed pipe, and exit statuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ADD = """\
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""

# Each console script's entry point (pyproject's [project.scripts]).
SCRIPTS = {
    "mlirpipe": "pytest_mlirpipe.cli.main",
    "mlirpipe-opt": "pytest_mlirpipe.tools.opt",
    "mlirpipe-assert": "pytest_mlirpipe.tools.ir_assert",
}


def script(name: str, *argv: str | Path) -> list[str]:
    """The command line running console script `name` from this checkout."""
    code = f"import sys; sys.argv[0] = {name!r}; from {SCRIPTS[name]} import main; main()"
    return [sys.executable, "-c", code, *map(str, argv)]


def script_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.fixture
def add_file(tmp_path: Path) -> Path:
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["mlirpipe", "list"],
        ["mlirpipe", "passes"],
        ["mlirpipe", "stages", "{add}", "--pipeline", "refbackend"],
        ["mlirpipe-opt", "{add}", "--pipeline", "refbackend"],
    ],
    ids=" ".join,
)
def test_a_reader_that_closed_the_pipe_ends_the_tool_quietly_as_sigpipe_would(argv, add_file):
    command = script(argv[0], *(a.format(add=add_file) for a in argv[1:]))
    tool = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=script_env()
    )
    tool.stdout.close()  # as `| head -0` would: every write to stdout breaks the pipe
    with tool.stderr:
        stderr = tool.stderr.read().decode()
    assert (tool.wait(), stderr) == (141, "")


def test_a_pipe_closed_after_the_first_line_ends_the_tool_quietly_in_a_shell():
    shell = f"set -o pipefail; {' '.join(map(repr, script('mlirpipe', 'passes')))} | head -1"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=script_env())
    assert done.stderr == ""
    assert done.returncode in (0, 141)  # 0: every line was written before head left
    assert done.stdout.count("\n") == 1
