"""The `mlirpipe` command run in-process on a model file, for the command-line tests."""

from __future__ import annotations

import io
import sys

from pytest_mlirpipe.cli.main import run

# A model file's text: `MM` multiplies its two inputs.
MODEL = (
    "import torch\n\n"
    "class MM(torch.nn.Module):\n"
    "    def forward(self, a, b):\n"
    "        return a @ b\n"
)

# `mlirpipe` in a process of its own (what torch prints or leaves is seen there).
MLIRPIPE = (sys.executable, "-m", "pytest_mlirpipe.cli.main")


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `mlirpipe ARGV`."""
    out, err = io.StringIO(), io.StringIO()
    code = run(argv, io.StringIO(), out, err)
    return code, out.getvalue(), err.getvalue()
