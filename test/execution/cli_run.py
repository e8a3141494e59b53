"""The `mlirpipe` command run in-process on a model file, for the command-line tests."""

from __future__ import annotations

import io

from pytest_mlirpipe.cli.main import run

# A model file's text: `MM` multiplies its two inputs.
MODEL = (
    "import torch\n\n"
    "class MM(torch.nn.Module):\n"
    "    def forward(self, a, b):\n"
    "        return a @ b\n"
)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `mlirpipe ARGV`."""
    out, err = io.StringIO(), io.StringIO()
    code = run(argv, io.StringIO(), out, err)
    return code, out.getvalue(), err.getvalue()
