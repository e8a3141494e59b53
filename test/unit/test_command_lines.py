"""The commands a failure prints: quoted for a shell, with the folders and environment they need."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_mlirpipe.execution.commands import PLAIN, CommandContext


def test_a_plain_command_is_its_words_quoted_for_a_shell() -> None:
    line = PLAIN.line("mlirpipe-opt", Path("/tmp/a b/m.mlir"), "--pipeline", "refbackend")
    assert line == "mlirpipe-opt '/tmp/a b/m.mlir' --pipeline refbackend"


def test_pipeline_folders_environment_and_folder_come_with_the_command() -> None:
    context = CommandContext(("/repo/pipelines",), (("MLIRPIPE_PASS_MODULES", "my_passes"),))
    line = context.line("mlirpipe", "run", "t.py::M", "--inputs", "", cwd=Path("/repo"))
    assert line == (
        "cd /repo && MLIRPIPE_PASS_MODULES=my_passes mlirpipe run t.py::M --inputs '' "
        "--pipelines-dir /repo/pipelines"
    )


def test_a_pass_module_outside_the_installation_brings_its_folder_on_pythonpath(
    tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "own_passes_for_a_line.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", "own_passes_for_a_line, ")
    monkeypatch.setenv("PYTHONPATH", f"/elsewhere:{tmp_path}")
    context = CommandContext.here(["pipelines"])
    assert context.pipeline_dirs == (str(Path.cwd() / "pipelines"),)
    assert context.env == (
        ("MLIRPIPE_PASS_MODULES", "own_passes_for_a_line"),
        ("PYTHONPATH", f"{tmp_path}:/elsewhere"),
    )
    assert "own_passes_for_a_line" not in sys.modules  # found, not imported


def test_without_pass_modules_no_environment_is_printed(monkeypatch) -> None:
    monkeypatch.delenv("MLIRPIPE_PASS_MODULES", raising=False)
    assert CommandContext.here().env == ()
