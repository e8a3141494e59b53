"""`mlirpipe-opt -verify-diagnostics` in-process, and against the reference: torch-mlir's native
`torch-mlir-opt` (mlir-opt's driver) gives every file the same exit status and messages."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest

from pytest_mlirpipe.tools import opt

CANON = "builtin.module(canonicalize)"

RETURN_MISMATCH = """\
func.func @g(%a: i32) -> i64 {
  // expected-error@+1 {{doesn't match function result type ('i64')}}
  return %a : i32
}
"""


def run_opt(*argv: str | Path, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = opt.run([str(a) for a in argv], io.StringIO(stdin), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(opt.REPRO_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)


# --- in-process -------------------------------------------------------------------------------


def test_a_bare_flag_before_the_file_verifies_and_exits_zero(write_file):
    path = write_file("v.mlir", RETURN_MISMATCH)
    assert run_opt("-verify-diagnostics", path, "--pass-pipeline", CANON) == (0, "", "")
    assert run_opt(path, "--verify-diagnostics", "--pass-pipeline", CANON) == (0, "", "")


def test_a_wrong_expectation_exits_one_with_both_messages(write_file, tmp_path):
    path = write_file("v.mlir", RETURN_MISMATCH.replace("('i64')", "('f32')"))
    status, out, err = run_opt(path, "-verify-diagnostics", "--pass-pipeline", CANON)
    assert (status, out) == (1, "")
    assert err == (
        f"{path}:3:3: error: unexpected error: type of return operand 0 ('i32') doesn't match "
        "function result type ('i64') in function @g\n"
        "  return %a : i32\n"
        "  ^\n"
        f"{path}:2:6: error: expected error \"doesn't match function result type ('f32')\" "
        "was not produced\n"
        "  // expected-error@+1 {{doesn't match function result type ('f32')}}\n"
        "     ^" + "~" * (len("doesn't match function result type ('f32')") - 1) + "\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.mlir"]  # no repro file


def test_a_file_without_expectations_verifies_when_nothing_is_emitted(write_file):
    path = write_file("ok.mlir", "func.func @f() {\n  return\n}\n")
    status, out, err = run_opt(path, "-verify-diagnostics", "--pass-pipeline", CANON)
    assert (status, err) == (0, "")
    assert "func.func @f()" in out


def test_errors_of_a_pass_are_verified_and_an_unmet_one_is_reported(write_file):
    path = write_file(
        "forbid.mlir",
        """\
        func.func @f(%a: f32) -> f32 {
          %0 = arith.addf %a, %a : f32 // expected-error {{'arith.addf' is forbidden here}}
          %1 = arith.mulf %0, %a : f32 // expected-error {{'arith.mulf' is forbidden here}}
          return %1 : f32
        }
        """,
    )
    every = "builtin.module(mlirpipe-forbid-ops{ops=arith.*})"
    assert run_opt(path, "-verify-diagnostics", "--pass-pipeline", every) == (0, "", "")
    only_add = "builtin.module(mlirpipe-forbid-ops{ops=arith.addf})"
    status, _, err = run_opt(path, "-verify-diagnostics", "--pass-pipeline", only_add)
    assert status == 1
    assert err.startswith(
        f"{path}:3:35: error: expected error \"'arith.mulf' is forbidden here\" was not produced\n"
    )


def test_a_named_pipeline_stage_that_fails_is_verified(write_file, unlowerable_tosa):
    lines = unlowerable_tosa.splitlines(keepends=True)
    lines.insert(1, "  // expected-error@+1 {{failed to legalize operation 'tosa.custom'}}\n")
    path = write_file("tosa.mlir", "".join(lines))
    assert run_opt(path, "-verify-diagnostics", "--pipeline", "tosa") == (0, "", "")


def test_split_chunks_keep_the_files_line_numbers(write_file):
    path = write_file(
        "split.mlir",
        RETURN_MISMATCH + "\n// -----\n\n" + RETURN_MISMATCH.replace("@g", "@h") + "// -----\n",
    )
    argv = (path, "-verify-diagnostics", "--split-input-file", "--pass-pipeline", CANON)
    assert run_opt(*argv) == (0, "", "")


def test_an_unmet_expectation_in_a_later_chunk_is_at_its_line_in_the_file(write_file):
    path = write_file(
        "split.mlir",
        "func.func @f() {\n  return\n}\n// -----\nfunc.func @g() {\n"
        "  return // expected-error {{never}}\n}\n",
    )
    status, out, err = run_opt(
        path, "-verify-diagnostics", "--split-input-file", "--pass-pipeline", CANON
    )
    assert status == 1
    assert err.startswith(f'{path}:6:13: error: expected error "never" was not produced\n')
    assert out.count("// -----\n") == 1


def test_only_expected_ignores_the_rest(write_file):
    path = write_file("v.mlir", "func.func @g(%a: i32) -> i64 {\n  return %a : i32\n}\n")
    assert run_opt(path, "-verify-diagnostics=only-expected", "--pass-pipeline", CANON) == (
        0,
        "",
        "",
    )
    status, _, err = run_opt(path, "--verify-diagnostics=all", "--pass-pipeline", CANON)
    assert status == 1
    assert "error: unexpected error: type of return operand 0" in err


def test_standard_input_is_named_stdin():
    status, _, err = run_opt(
        "-", "-verify-diagnostics", "--pass-pipeline", CANON, stdin="func.func @f() {\n"
    )
    assert status == 1
    assert err == (
        "<stdin>:1:17: error: unexpected error: expected operation name in quotes\n"
        "func.func @f() {\n"
        "                ^\n"
    )


def test_a_pipeline_that_cannot_be_built_is_reported_as_without_the_flag(write_file):
    path = write_file("ok.mlir", "func.func @f() {\n  return\n}\n")
    status, out, err = run_opt(
        path,
        "-verify-diagnostics",
        "--pass-pipeline",
        "builtin.module(func.func(one-shot-bufferize))",
    )
    assert (status, out) == (2, "")  # a usage error, before any input is read as expected
    assert err.startswith(
        "mlirpipe-opt: error: --pass-pipeline: MLIR cannot build it: "
        "Can't add pass 'OneShotBufferizePass' restricted to 'builtin.module'"
    )


def test_an_unknown_mode_is_a_usage_error(write_file):
    path = write_file("v.mlir", RETURN_MISMATCH)
    assert run_opt(path, "--verify-diagnostics=some", "--pass-pipeline", CANON) == (
        2,
        "",
        "mlirpipe-opt: error: argument --verify-diagnostics/-verify-diagnostics: invalid "
        "choice: 'some' (choose from 'all', 'only-expected')\n"
        "  hint: see `mlirpipe-opt --help`\n",
    )


def test_help_describes_the_flag():
    status, out, _ = run_opt("--help")
    assert status == 0
    assert "--verify-diagnostics all|only-expected, -verify-diagnostics all|only-expected" in out
    assert "a bare flag means =all" in " ".join(out.split())


# --- against mlir-opt's own driver ------------------------------------------------------------

UNKNOWN_OP = "func.func @f() {\n  // expected-error@+2 {{custom op 'foo.bar'}}\n  foo.bar\n}\n"
TOSA_CONTRACT = "builtin.module(torch-verify-tosa-backend-contract)"
TORCH_TANH = """\
// expected-error@below {{failed to legalize operation 'func.func'}}
func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %0 = torch.aten.tanh %arg0 : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
"""
# name: (file text, pass pipeline, extra flags); right and wrong expectations alike.
REFERENCE_CASES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "verifier-error-met": (RETURN_MISMATCH, CANON, ()),
    "verifier-error-wrong-text": (RETURN_MISMATCH.replace("i64')", "f32')"), CANON, ()),
    "parse-only-met": (RETURN_MISMATCH, "builtin.module()", ()),
    "unknown-op-wrong-line-and-its-note": (UNKNOWN_OP, CANON, ()),
    "unknown-op-and-its-note-met": (
        UNKNOWN_OP.replace("@+2", "@+1") + "// expected-note@-2 {{Available dialects}}\n",
        CANON,
        (),
    ),
    "above-and-dangling-below": (
        "func.func @g(%a: i32) -> i64 {\n  return %a : i32\n"
        "  // expected-error@above {{doesn't match}}\n}\n// expected-error@below {{never}}\n",
        CANON,
        (),
    ),
    "near-miss": (RETURN_MISMATCH.replace("expected-error", "expected-warning"), CANON, ()),
    "regex-met": (
        RETURN_MISMATCH.replace("error@+1 {{", "error-re@+1 {{operand {{[0-9]+}} ('i{{.*}}') "),
        CANON,
        (),
    ),
    "regex-without-end": (
        RETURN_MISMATCH.replace("error@", "error-re@+0 {{a {{b}}\n//"),
        CANON,
        (),
    ),
    "unknown-location-not-produced": (
        "func.func @f() {\n  return\n}\n// expected-remark@unknown {{nothing}}\n",
        CANON,
        (),
    ),
    "malformed-lines-are-ignored": (
        "func.func @f() {\n  return // expected-error {{x}} trailing\n}\n"
        "// expected-error@ +1 {{y}}\n// expected-errors {{z}}\n",
        CANON,
        (),
    ),
    "split-right-and-wrong": (
        RETURN_MISMATCH
        + "\n// -----\n\n"
        + UNKNOWN_OP.replace("@+2", "@+1")
        + "// -----\n"
        + RETURN_MISMATCH.replace("@+1", "@+2").replace("@g", "@h"),
        CANON,
        ("--split-input-file",),
    ),
    "pass-failure-all": (TORCH_TANH, TOSA_CONTRACT, ()),
    "pass-failure-only-expected": (
        TORCH_TANH,
        TOSA_CONTRACT,
        ("-verify-diagnostics=only-expected",),
    ),
}

HEADLINE = re.compile(r"^(?:\S+:\d+:\d+|<unknown>:0): error: .*$", re.MULTILINE)


@pytest.fixture(scope="module")
def reference_opt() -> Path:
    import torch_mlir

    path = Path(next(iter(torch_mlir.__path__))) / "_mlir_libs" / "torch-mlir-opt"
    if not path.is_file():
        pytest.skip(f"torch-mlir's native torch-mlir-opt is not at {path}")
    return path


def headlines(stderr: str) -> list[str]:
    """The first line of each message, the same for both tools: trailing blanks dropped, the
    list of registered dialects (which differ) cut, each message once (mlir-opt says an unmet
    @unknown expectation twice)."""
    lines = [m.group(0).rstrip() for m in HEADLINE.finditer(stderr)]
    lines = [re.sub(r"Available dialects: .*", "Available dialects: ...", ln) for ln in lines]
    return list(dict.fromkeys(lines))


@pytest.mark.parametrize("case", sorted(REFERENCE_CASES))
def test_exit_status_and_messages_are_mlir_opts(case, reference_opt, tmp_path):
    text, pipeline, flags = REFERENCE_CASES[case]
    (tmp_path / "v.mlir").write_text(text)
    flags = flags if any("verify" in f for f in flags) else ("-verify-diagnostics", *flags)
    argv = ["v.mlir", *flags, f"--pass-pipeline={pipeline}"]
    ref = subprocess.run(
        [str(reference_opt), *argv], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    status, _, err = run_opt(*argv)

    assert (status, headlines(err)) == (ref.returncode, headlines(ref.stderr))
    assert ref.returncode == (0 if case.endswith(("-met", "-only-expected", "-ignored")) else 1)
    assert bool(headlines(ref.stderr)) == bool(ref.returncode)  # a failure says why
