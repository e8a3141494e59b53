"""What lit 17, 18 and 23 each write about a script is read the same: the RUN line its shell
cannot parse, the RUN line an external shell started last, each RUN line's command."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_mlirpipe.filetests.lit_compat import external_run, shell_parse_error
from pytest_mlirpipe.filetests.shell_trace import run_commands
from pytest_mlirpipe.filetests.verdict import steps_of

PARSE_ERRORS = {
    "lit 17": "shell parser error on: \": 'RUN: at line 3';   foo %s --bar='x\"\n",
    "lit 18 and 23": "# shell parser error on RUN: at line 3: foo %s --bar='x\n",
}


@pytest.mark.parametrize("output", PARSE_ERRORS.values(), ids=PARSE_ERRORS.keys())
def test_a_run_line_the_shell_cannot_parse_is_read_with_its_line(output: str) -> None:
    assert shell_parse_error(f"Exit Code: 1\n\n{output}--\n") == (3, "foo %s --bar='x")


def test_output_without_a_parse_error_names_no_run_line() -> None:
    assert shell_parse_error("Exit Code: 1\nerror: command failed with exit status: 1\n") is None


LIT17_EXTERNAL = """\
Script:
--
: 'RUN: at line 1';   foo-opt a.mlir -o %t
: 'RUN: at line 2';   foo-opt %t | FileCheck a.mlir
--
Exit Code: 1

Command Output (stderr):
--
+ : 'RUN: at line 1'
+ foo-opt a.mlir -o %t
+ : 'RUN: at line 2'
+ foo-opt %t
+ FileCheck a.mlir
a.mlir:3:11: error: CHECK: expected string not found in input
--
"""
EXTERNAL_RUNS = {
    "lit 17": LIT17_EXTERNAL,
    "lit 18": "RUN: at line 1: foo-opt a.mlir -o %t\n+ foo-opt a.mlir -o %t\n"
    "RUN: at line 2: foo-opt %t | FileCheck a.mlir\n+ foo-opt %t\n",
    "lit 23": "foo-opt a.mlir -o %t # RUN: at line 1\nfoo-opt %t | FileCheck a.mlir "
    "# RUN: at line 2\n",
}


@pytest.mark.parametrize("output", EXTERNAL_RUNS.values(), ids=EXTERNAL_RUNS.keys())
def test_the_run_line_an_external_shell_started_last_is_read_with_its_command(
    output: str,
) -> None:
    assert external_run(output) == (2, "foo-opt %t | FileCheck a.mlir")


def test_an_external_shell_s_output_without_a_run_line_names_none() -> None:
    assert external_run("Exit Code: 1\n\nCommand Output (stderr):\n--\nboom\n--\n") is None


def test_each_run_line_s_command_is_read_from_the_script_lit_s_shell_is_given() -> None:
    script = ["%dbg(RUN: at line 2) a %s && b", "%dbg(RUN: at line 5)", "c without a mark"]
    assert run_commands(script) == {2: "a %s && b", 5: ""}


def _result(args: list[str], code: int = 0) -> SimpleNamespace:
    return SimpleNamespace(command=SimpleNamespace(args=args), exitCode=code, stdout="", stderr="")


def test_lit_17_s_run_lines_are_the_script_s_commands_not_their_programs_joined() -> None:
    results = [_result([":", "RUN: at line 2"]), _result(["a"]), _result(["b"], 1)]
    (step,) = steps_of(results, commands={2: "a && b"})
    assert (step.line, step.command, step.failed) == (2, "a && b", True)


def test_the_time_limit_is_put_where_the_installed_lit_reads_it() -> None:
    """lit 23 reads a test's limit from its suite's config, lit 17 and 18 from the LitConfig;
    told by the config's parameter, not by the version number (no lit 19 to 22 was tested)."""
    import lit

    from pytest_mlirpipe.filetests import lit_compat

    assert (lit.__versioninfo__ >= (23,)) == lit_compat._LIMIT_ON_TEST_CONFIG
