"""What lit 17, 18 and 23 each write about a script is read the same: each RUN line's
command."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_mlirpipe.filetests.shell_trace import run_commands
from pytest_mlirpipe.filetests.verdict import steps_of


def test_each_run_line_s_command_is_read_from_the_script_lit_s_shell_is_given() -> None:
    script = ["%dbg(RUN: at line 2) a %s && b", "%dbg(RUN: at line 5)", "c without a mark"]
    assert run_commands(script) == {2: "a %s && b", 5: ""}


def _result(args: list[str], code: int = 0) -> SimpleNamespace:
    return SimpleNamespace(command=SimpleNamespace(args=args), exitCode=code, stdout="", stderr="")


def test_lit_17_s_run_lines_are_the_script_s_commands_not_their_programs_joined() -> None:
    results = [_result([":", "RUN: at line 2"]), _result(["a"]), _result(["b"], 1)]
    (step,) = steps_of(results, commands={2: "a && b"})
    assert (step.line, step.command, step.failed) == (2, "a && b", True)
