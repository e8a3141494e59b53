"""Arbitrary input never raises an internal exception: the parsers, the pipeline loader, the
lit-output readers, the ini reader and mlirpipe-opt answer with our errors only."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_mlirpipe.errors import MlirpipeError, PipelineSpecError
from pytest_mlirpipe.filetests.config import read_settings
from pytest_mlirpipe.filetests.expect import judge, read_expectations
from pytest_mlirpipe.filetests.failure import format_failure
from pytest_mlirpipe.filetests.verdict import CommandResult, FileVerdict, RunStep, steps_of
from pytest_mlirpipe.lowering.pipeline_text import (
    PipelineSyntaxError,
    parse_options,
    parse_pipeline,
)
from pytest_mlirpipe.lowering.spec import check_pipeline_text, load_catalog
from pytest_mlirpipe.tools import opt

# hypothesis's failure report imports mypy_extensions, which warns on import.
pytestmark = pytest.mark.filterwarnings(
    "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
)
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Text biased towards each grammar's own characters, so examples get past the first token.
PIPELINE_CHARS = st.sampled_from([*"abc-_.(){}=,' \"\\tx1", "func.func", "builtin.module"])
pipeline_text = st.lists(PIPELINE_CHARS, max_size=40).map("".join) | st.text(max_size=40)


@FUZZ
@given(pipeline_text)
@example("a{b='}")
@example('a(b{c="x)"}')
def test_the_pipeline_parser_raises_only_its_syntax_error(text):
    try:
        elements = parse_pipeline(text)
    except PipelineSyntaxError as exc:
        assert 0 <= exc.offset <= len(text)
        return
    for el in elements:
        el.passes()


@FUZZ
@given(pipeline_text)
@example("a='unclosed")
@example('k="x')
def test_pass_options_parse_or_raise_a_syntax_error(text):
    try:
        options = parse_options(text)
    except PipelineSyntaxError:
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in options.items())


@FUZZ
@given(pipeline_text)
def test_a_pass_pipeline_check_raises_only_a_spec_error(text):
    try:
        check_pipeline_text(text, lambda n: n in {"a", "b", "canonicalize"}, lambda: ["a", "b"])
    except PipelineSpecError as exc:
        assert "error:" in str(exc)


TOML_PIECES = st.sampled_from(
    [
        "[pipeline]\n",
        "[[stage]]\n",
        'name = "p"\n',
        'name = "s"\n',
        "name = 3\n",
        'description = "d"\n',
        'input = "linalg-on-tensors"\n',
        'output = "llvm"\n',
        'input = "nope"\n',
        'reason = "r"\n',
        'passes = ["canonicalize"]\n',
        'passes = ["func.func(cse"]\n',
        "passes = []\n",
        "passes = [1, 2]\n",
        'extends = "refbackend"\n',
        'extends = "p"\n',
        'insert_after = "bufferize"\n',
        'replace = "nope"\n',
        "remove = true\n",
        "stage = 1\n",
        "[pipeline.x]\n",
        "= broken\n",
        '"\n',
        "\n",
    ]
)
toml_text = st.lists(TOML_PIECES, max_size=14).map("".join) | st.text(max_size=60)


@FUZZ
@given(toml_text)
@example('[pipeline]\nname = "p"\n[[stage]]\n[[stage]]\nname = "s"\n')
def test_the_pipeline_loader_raises_only_a_spec_error(text):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "p.toml").write_text(text)
        try:
            load_catalog([d], pass_exists=lambda n: n in {"canonicalize", "cse"})
        except PipelineSpecError as exc:
            assert "error:" in str(exc)


INI_PIECES = st.sampled_from(
    [
        "[pytest]\n",
        "[tool.pytest.ini_options]\n",
        "[tool]\n",
        "mlirpipe_tools = foo-opt\n",
        'mlirpipe_tools = ["foo-opt=build/bin/foo-opt --x"]\n',
        "mlirpipe_tools = 3\n",
        'mlirpipe_tool_dirs = ["a", "b"]\n',
        "mlirpipe_features = a b\n",
        'mlirpipe_suffixes = [".mlir"]\n',
        "mlirpipe_suffixes = {}\n",
        "ini_options = 1\n",
        "pytest = 1\n",
        "  continued\n",
        "%(x)s = y\n",
        "key\n",
        "\n",
    ]
)


@FUZZ
@given(st.lists(INI_PIECES, max_size=8).map("".join) | st.text(max_size=60), st.booleans())
@example("[pytest]\nmlirpipe_tools = %(x)s\n", True)
@example("[tool.pytest]\nini_options = 1\n", False)
def test_reading_the_ini_never_raises(text, as_pytest_ini):
    with tempfile.TemporaryDirectory() as d:
        name = "pytest.ini" if as_pytest_ini else "pyproject.toml"
        (Path(d) / name).write_text(text)
        settings_ = read_settings(d)
    assert isinstance(settings_.tools, tuple)


@FUZZ
@given(st.text(max_size=200))
@example("// MLIRPIPE-TIMEOUT: nan\n")
@example("// MLIRPIPE-TIMEOUT: 1e999\n// MLIRPIPE-EXPECT: timeout\n")
def test_expectation_lines_never_raise(text):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.mlir"
        path.write_text(text)
        expected = read_expectations(path)
    for code in ("PASS", "FAIL", "TIMEOUT", "UNRESOLVED"):
        judge(code, text, expected, str(path))


LIT_LINES = st.sampled_from(
    [
        "# shell parser error on RUN: at line 3: foo 'x\n",
        "shell parser error on: \": 'RUN: at line 3';   foo 'x\"\n",  # lit 17
        "error: command failed with exit status: -6\n",  # lit 17
        "+ : 'RUN: at line 2'\n",  # lit 17's external shell, traced
        "expected: 'x'\nhave: y\nin expression: 'a ||'\nin REQUIRES: directive on test line 2\n",
        "# error: command failed with exit status: -6\n",
        "/x.mlir:0: error: MLIRPIPE-EXPECT: crash, but\n  hint: h\n",
        "Current position at <stdin>:99:1\n",
        "Current position at /nonexistent:1:1\n",
        "t.mlir:5: error: Couldn't match\n",
        "'foo-opt': command not found\n",
        "No check strings found with prefix CHECK:\n",
        "x\n",
    ]
)
lit_text = st.lists(LIT_LINES, max_size=6).map("".join) | st.text(max_size=80)


def _result(args, code=0, stdout="", stderr=""):
    return SimpleNamespace(
        command=SimpleNamespace(args=args), exitCode=code, stdout=stdout, stderr=stderr
    )


@FUZZ
@given(
    st.sampled_from(["PASS", "FAIL", "XPASS", "UNRESOLVED", "TIMEOUT", "XFAIL"]),
    lit_text,
    lit_text,
    st.lists(st.tuples(st.integers(-9, 3), lit_text), max_size=3),
    st.text(max_size=30),
)
def test_the_failure_report_reads_any_lit_output(code, output, stderr, commands, run_text):
    results = [_result(["@echo", f"# RUN: at line {len(commands)}"]), _result(["@echo", run_text])]
    for status, err in commands:
        results.append(_result(["filecheck", "x"], status, "", err + stderr))
    steps = steps_of(results)
    stdin_step = RunStep(1, run_text, tuple(s for st_ in steps for s in st_.results))
    verdict = FileVerdict(code, output, True, steps=(*steps, stdin_step), crash=run_text)
    text = format_failure(Path("t.mlir"), verdict, verbose=True)
    assert text.startswith("t.mlir")


@pytest.fixture(scope="module")
def warm_opt():
    """Load the bindings and the catalog once, outside the examples' time."""
    opt.run(
        ["-", "--pass-pipeline", "builtin.module(cse)"],
        io.StringIO("module {}"),
        io.StringIO(),
        io.StringIO(),
    )


MLIR_PIECES = st.sampled_from(
    [
        "module {",
        "}",
        "func.func @f(%a: i32) -> i32 {",
        "return %a : i32",
        "%0 = arith.addi %a, %a : i32",
        '"foo.bar"() : () -> ()',
        "foo.bar",
        "tensor<4xf32>",
        "// -----",
        "#map = affine_map<(d0) -> (d0)>",
        "\x00",
        "\\",
        '"',
        "\n",
    ]
)
mlir_text = st.lists(MLIR_PIECES, max_size=12).map("\n".join) | st.text(max_size=80)


@FUZZ
@given(
    mlir_text,
    st.sampled_from(
        [[], ["--split-input-file"], ["--pipeline", "refbackend", "--stop-after", "nope"]]
    ),
)
def test_mlirpipe_opt_answers_any_input_with_a_status_and_no_traceback(warm_opt, text, flags):
    out, err = io.StringIO(), io.StringIO()
    argv = ["-", *flags]
    if "--pipeline" not in flags:
        argv += ["--pass-pipeline", "builtin.module(canonicalize)"]
    status = opt.run(argv, io.StringIO(text), out, err)
    assert status in (0, 1, 2)
    assert "Traceback" not in err.getvalue()
    if status:
        assert "error" in err.getvalue()


def test_our_errors_are_the_only_ones_expected_here():
    assert issubclass(PipelineSpecError, MlirpipeError)


# --- what the properties found, pinned ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ('k="x', 'a " in the pass options is never closed', 2),
        ("a=1 b='x y", "a ' in the pass options is never closed", 6),
        ("'a\"b'\"", 'a " in the pass options is never closed', 5),
    ],
)
def test_an_unclosed_quote_in_pass_options_is_a_located_syntax_error(text, message, offset):
    with pytest.raises(PipelineSyntaxError) as info:
        parse_options(text)
    assert (str(info.value), info.value.offset) == (message, offset)


def test_a_percent_sign_in_pytest_ini_is_taken_literally_as_pytest_does(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nmlirpipe_tools = foo=%(x)s\n")
    assert read_settings(tmp_path).tools == ("foo=%(x)s",)


@pytest.mark.parametrize(
    "text",
    ["[tool.pytest]\nini_options = 1\n", "tool = 3\n", "[tool]\npytest = [1]\n"],
)
def test_a_pyproject_whose_tables_are_values_gives_the_defaults(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    assert read_settings(tmp_path).tools == ()


def test_a_pytest_ini_pytest_cannot_read_gives_the_defaults(tmp_path):
    (tmp_path / "pytest.ini").write_bytes(b"[pytest]\n[pytest]\nx = \xff\n")
    assert read_settings(tmp_path).tools == ()


def test_an_expectation_with_problems_leaves_the_verdict_alone(tmp_path):
    path = tmp_path / "t.mlir"
    path.write_text("// MLIRPIPE-EXPECT: timeout\n")  # no MLIRPIPE-TIMEOUT: a problem
    expected = read_expectations(path)
    assert expected.problems
    assert judge("TIMEOUT", "out", expected, str(path)) == ("TIMEOUT", "out")


def test_a_shell_error_on_an_operator_is_kept_as_a_command_without_arguments():
    seq = SimpleNamespace(lhs=None, op="&", rhs=None)  # lit's Seq: no `args`
    error = SimpleNamespace(command=seq, exitCode=127, stdout="", stderr="unsupported")
    echoes = [_result(["@echo"], stdout="# RUN: at line 2\n"), _result(["@echo"], stdout="a & b")]
    steps = steps_of([*echoes, error])
    assert steps == (RunStep(2, "a & b", (CommandResult((), 127, "", "unsupported"),)),)
