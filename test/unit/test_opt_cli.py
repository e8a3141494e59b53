"""`mlirpipe-opt` run in-process: flags, output, exit status and failure reports with repros."""

from __future__ import annotations

import io
import os
import shlex
import stat
import tempfile
from pathlib import Path

import pytest

from pytest_mlirpipe.lowering.catalog import PIPELINES_PATH_ENV
from pytest_mlirpipe.tools import opt

BUFFERIZE_PASSES = (
    "one-shot-bufferize{allow-unknown-ops allow-return-allocs-from-loops "
    "unknown-type-conversion=identity-layout-map},"
    "func.func(tm-tensor-bufferize)"
)

# A pipeline whose inserted stage fails on the matmul: linalg is still there after bufferize.
STRICT_PIPELINE = """
[pipeline]
name = "rb-strict"
extends = "refbackend"

[[stage]]
name = "no-linalg"
after = "bufferize"
reason = "linalg must be gone"
passes = ["convert-func-to-llvm", "mlirpipe-forbid-ops{ops=linalg.*}"]
"""


def run_opt(*argv: str | Path, stdin: str = "") -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `mlirpipe-opt argv`."""
    out, err = io.StringIO(), io.StringIO()
    status = opt.run([str(a) for a in argv], io.StringIO(stdin), out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No pipeline path from the environment; default repro directories land in tmp_path."""
    monkeypatch.delenv(PIPELINES_PATH_ENV, raising=False)
    monkeypatch.delenv(opt.REPRO_DIR_ENV, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def mm(write_file, mm_linalg) -> Path:
    return write_file("mm.mlir", mm_linalg)


@pytest.fixture
def strict_dir(write_file) -> Path:
    return write_file("pipes/strict.toml", STRICT_PIPELINE).parent


# --- running ----------------------------------------------------------------------------------


def test_pipeline_lowers_the_input_and_prints_the_module(mm):
    status, out, err = run_opt(mm, "--pipeline", "refbackend")

    assert (status, err) == (0, "")
    assert out.startswith("module {\n")
    assert "llvm.func @forward(" in out
    assert "linalg." not in out


def test_stop_after_prints_the_ir_after_that_stage(mm):
    status, out, err = run_opt(mm, "--pipeline", "refbackend", "--stop-after", "bufferize")

    assert (status, err) == (0, "")
    assert "bufferization.to_tensor" in out
    assert "llvm." not in out


def test_start_after_takes_the_input_as_the_ir_after_that_stage(mm, write_file):
    _, middle, _ = run_opt(mm, "--pipeline", "refbackend", "--stop-after", "finalizing-bufferize")
    rest = write_file("rest.mlir", middle)

    status, out, err = run_opt(
        rest, "--pipeline", "refbackend", "--start-after", "finalizing-bufferize"
    )

    assert (status, err) == (0, "")
    assert out == run_opt(mm, "--pipeline", "refbackend")[1]


def test_print_after_dumps_that_stage_to_stderr_under_a_header(mm):
    status, out, err = run_opt(
        mm,
        "--pipeline",
        "refbackend",
        "--print-after",
        "bufferize",
        "--stop-after",
        "finalizing-bufferize",
    )

    assert status == 0
    header = f"// -----// IR Dump After stage 'bufferize' ({BUFFERIZE_PASSES}) //----- //\n"
    assert err.startswith(header + "module {\n")
    assert err.count("// -----// IR Dump After") == 1
    assert "bufferization.to_tensor" in err
    assert "bufferization.to_tensor" not in out


def test_print_after_all_dumps_every_stage_in_order(mm, refbackend):
    status, out, err = run_opt(mm, "--pipeline", "refbackend", "--print-after", "all")

    assert status == 0
    dumped = [ln.split("'")[1] for ln in err.splitlines() if ln.startswith("// -----// IR Dump")]
    assert dumped == refbackend.stage_names()
    assert err.endswith(out + "\n")


def test_output_goes_to_the_file_given_by_dash_o(mm, tmp_path):
    target = tmp_path / "out" / "mm.ll.mlir"
    target.parent.mkdir()

    status, out, err = run_opt(mm, "--pipeline", "refbackend", "-o", target)

    assert (status, out, err) == (0, "", "")
    assert target.read_text().startswith("module {\n  llvm.func")


def test_dash_reads_standard_input(mm_linalg):
    status, out, err = run_opt(
        "-", "--pipeline", "refbackend", "--stop-after", "bufferize", stdin=mm_linalg
    )

    assert (status, err) == (0, "")
    assert "bufferization.to_tensor" in out


def test_diagnostics_of_standard_input_are_located_in_stdin():
    status, out, err = run_opt("--pass-pipeline", "builtin.module(cse)", stdin="func.func @f(\n")

    assert (status, out) == (1, "")
    assert err.startswith("<stdin>:1:14: error: cannot parse MLIR: expected non-function type\n")


def test_pass_pipeline_runs_in_its_builtin_module_anchor(mm):
    status, out, err = run_opt(
        mm, "--pass-pipeline", "builtin.module(func.func(linalg-generalize-named-ops))"
    )

    assert (status, err) == (0, "")
    assert "linalg.generic" in out
    assert "linalg.matmul" not in out
    assert run_opt(mm, "--pass-pipeline", "any(func.func(linalg-generalize-named-ops))") == (
        status,
        out,
        err,
    )


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        (
            "canonicalize",
            "expected pass pipeline to be wrapped with the anchor operation type, e.g. "
            "'builtin.module(...)'",
            "write --pass-pipeline='builtin.module(canonicalize)', as mlir-opt requires",
        ),
        (
            "func.func(canonicalize)",
            "can't run 'func.func' pass manager on 'builtin.module' op",
            "write --pass-pipeline='builtin.module(func.func(canonicalize))', as mlir-opt requires",
        ),
        (
            "builtin.module(canonicalize),builtin.module(cse)",
            "expected pass pipeline to be wrapped with the anchor operation type, e.g. "
            "'builtin.module(...)'",
            "give one builtin.module(...) holding all the passes",
        ),
        (
            "",
            "expected pass pipeline to be wrapped with the anchor operation type, e.g. "
            "'builtin.module(...)'",
            "name the passes to run: --pass-pipeline='builtin.module(canonicalize)'",
        ),
    ],
)
def test_a_pass_pipeline_without_its_module_anchor_is_refused_as_mlir_opt_does(
    mm, text, message, hint
):
    assert run_opt(mm, f"--pass-pipeline={text}") == (
        2,
        "",
        f"mlirpipe-opt: error: --pass-pipeline: {message}\n  hint: {hint}\n",
    )


def test_split_input_file_keeps_real_line_numbers_and_prints_the_other_chunks(
    write_file, unlowerable_tosa
):
    ok = "func.func @ok{n}(%a: i32) -> i32 {{\n  return %a : i32\n}}\n"
    path = write_file(
        "split.mlir",
        ok.format(n=1)
        + "// -----\n\n"
        + unlowerable_tosa
        + "// -----   \n"
        + ok.format(n=2)
        + "// -----\n"
        + "func.func @(\n",
    )

    status, out, err = run_opt(
        path, "--split-input-file", "--pass-pipeline", "builtin.module(func.func(tosa-to-linalg))"
    )

    assert status == 1
    assert out.count("// -----\n") == 1
    first, second = out.split("// -----\n")
    assert "func.func @ok1" in first and "func.func @ok2" in second
    # tosa.custom is on line 7 of the file (line 2 of its chunk, after a blank line).
    assert f"\n{path}:7:8: error: failed to legalize operation 'tosa.custom'" in err
    # The last chunk starts on line 15.
    assert f"\n{path}:15:12: error: cannot parse MLIR: @ identifier expected to start with " in err
    assert err.startswith(
        "error: pipeline '--pass-pipeline', stage 'pass-pipeline' failed: "
        "pass 'tosa-to-linalg' failed\n"
    )


# --- argument and input errors ----------------------------------------------------------------


def test_help_prints_the_usage_and_exits_zero():
    status, out, err = run_opt("--help")

    assert (status, err) == (0, "")
    assert out.startswith("usage: mlirpipe-opt [-h] (--pipeline NAME | --pass-pipeline TEXT)")
    for flag in (
        "--stop-after STAGE",
        "--start-after STAGE",
        "--print-after STAGE|all",
        "--split-input-file",
        "-o OUT",
        "--repro-dir DIR",
        "--pipelines-dir DIR",
    ):
        assert flag in out
    assert "Exit status: 0 success, 1 the input or a pass failed, 2 bad arguments." in " ".join(
        out.split()
    )
    # DIR itself holds the pipeline files (DIR/pipelines/*.toml is not read)
    assert "also read the pipeline files DIR/*.toml" in " ".join(out.split())


def test_pipeline_or_pass_pipeline_is_required(mm):
    assert run_opt(mm) == (
        2,
        "",
        (
            "mlirpipe-opt: error: one of the arguments --pipeline --pass-pipeline is required\n"
            "  hint: see `mlirpipe-opt --help`\n"
        ),
    )


def test_long_options_take_one_dash_as_in_mlir_opt(mm, write_file):
    path = write_file(
        "two.mlir", "func.func @f() {\n  return\n}\n// -----\nfunc.func @g() {\n  return\n}\n"
    )
    canon = "builtin.module(canonicalize)"

    single = run_opt(path, f"-pass-pipeline={canon}", "-split-input-file")

    assert single == run_opt(path, f"--pass-pipeline={canon}", "--split-input-file")
    assert single[0] == 0 and single[1].count("// -----") == 1
    status, out, err = run_opt(
        mm, "-pipeline", "refbackend", "-stop-after=bufferize", "-o", "o.mlir"
    )
    assert (status, out, err) == (0, "", "")
    assert (
        Path("o.mlir").read_text()
        == run_opt(mm, "--pipeline=refbackend", "--stop-after", "bufferize")[1]
    )


def test_a_misspelled_option_is_named_rather_than_the_missing_pipeline(mm):
    assert run_opt(mm, "-pipelin=refbackend") == (
        2,
        "",
        (
            "mlirpipe-opt: error: unrecognized arguments: -pipelin=refbackend\n"
            "  hint: did you mean '--pipeline' or '--pipelines-dir' or '--pass-pipeline'?\n"
        ),
    )


def test_pipeline_and_pass_pipeline_exclude_each_other(mm):
    assert run_opt(mm, "--pipeline", "refbackend", "--pass-pipeline", "cse") == (
        2,
        "",
        (
            "mlirpipe-opt: error: argument --pass-pipeline: not allowed with argument --pipeline\n"
            "  hint: see `mlirpipe-opt --help`\n"
        ),
    )


def test_stage_flags_need_a_named_pipeline(mm):
    assert run_opt(mm, "--pass-pipeline", "cse", "--stop-after", "x") == (
        2,
        "",
        (
            "mlirpipe-opt: error: --stop-after, --start-after and --print-after need --pipeline, "
            "not --pass-pipeline\n"
            "  hint: name the stages of a pipeline from `mlirpipe list`\n"
        ),
    )


def test_unknown_stage_names_exit_2_with_close_matches(mm):
    assert run_opt(
        mm,
        "--pipeline",
        "refbackend",
        "--start-after",
        "generalize-tensor-padd",
        "--stop-after",
        "bufferise",
    ) == (
        2,
        "",
        (
            "mlirpipe-opt: error: --start-after: pipeline 'refbackend' has no stage "
            "'generalize-tensor-padd'\n"
            "  hint: did you mean 'generalize-tensor-pad'?\n"
            "error: --stop-after: pipeline 'refbackend' has no stage 'bufferise'\n"
            "  hint: did you mean 'bufferize'?\n"
        ),
    )


def test_unknown_print_after_stage_exits_2(mm, refbackend):
    assert run_opt(mm, "--pipeline", "refbackend", "--print-after", "zzz") == (
        2,
        "",
        (
            "mlirpipe-opt: error: --print-after: pipeline 'refbackend' has no stage 'zzz'\n"
            f"  hint: its stages: {', '.join(refbackend.stage_names())}\n"
        ),
    )


def test_start_after_that_is_not_before_stop_after_exits_2(mm):
    status, out, err = run_opt(
        mm, "--pipeline", "refbackend", "--start-after", "lower-to-cf", "--stop-after", "bufferize"
    )

    assert (status, out) == (2, "")
    assert err.startswith(
        "mlirpipe-opt: error: no stage to run: --start-after lower-to-cf is not before "
        "--stop-after bufferize\n"
    )


def test_unknown_pipeline_is_a_usage_error_suggesting_the_close_name(mm):
    status, out, err = run_opt(mm, "--pipeline", "torch-to-linalgg")
    assert (status, out) == (2, "")
    assert err.startswith(
        "mlirpipe-opt: error: --pipeline: unknown pipeline 'torch-to-linalgg'\n"
        "  hint: did you mean 'torch-to-linalg'? known pipelines: onnx-linalg, "
    )


def test_unknown_pass_in_a_pass_pipeline_is_a_usage_error_suggesting_the_close_name(mm):
    status, out, err = run_opt(mm, "--pass-pipeline", "builtin.module(canonicalise)")

    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == (
        "mlirpipe-opt: error: --pass-pipeline: unknown pass 'canonicalise' "
        "(at column 16 of the pass pipeline)"
    )
    assert lines[1].startswith("  hint: did you mean 'canonicalize'")


def test_a_pass_pipeline_mlir_cannot_build_is_a_usage_error_not_a_traceback(mm):
    status, out, err = run_opt(mm, "--pass-pipeline", "builtin.module(func.func(tosa-validate))")

    assert (status, out) == (2, "")
    assert err.startswith(
        "mlirpipe-opt: error: --pass-pipeline: MLIR cannot build it: "
        "Can't add pass 'TosaValidation' restricted to 'builtin.module'"
    )
    assert err.endswith(
        "\n  hint: check the pass options and the op each pass is nested in "
        "(e.g. a module pass inside func.func(...))\n"
    )


def test_a_missing_input_file_exits_2():
    assert run_opt("nope.mlir", "--pipeline", "refbackend") == (
        2,
        "",
        (
            "mlirpipe-opt: nope.mlir: error: cannot read input file: No such file or directory\n"
            "  hint: check the path, or pass '-' to read standard input\n"
        ),
    )


def test_an_input_that_is_not_utf8_is_located_at_the_bad_byte(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_bytes(b"module {\n  func.func @f() {\xff\n")

    assert run_opt(path, "--pipeline", "refbackend") == (
        2,
        "",
        (
            f"mlirpipe-opt: {path}:2:19: error: input is not UTF-8 text (byte 0xff)\n"
            "  hint: MLIR files are UTF-8 text; a bytecode file must be converted first\n"
        ),
    )


def test_an_empty_input_exits_1(write_file):
    path = write_file("empty.mlir", "\n")

    assert run_opt(path, "--pipeline", "refbackend") == (
        1,
        "",
        (
            f"{path}: error: the input is empty: there is no MLIR to run\n"
            "  hint: give a file with at least one operation, e.g. a func.func\n"
        ),
    )


# --- failures and their repro -----------------------------------------------------------------


def test_a_failing_stage_prints_a_repro_command_that_fails_the_same_way(mm, strict_dir, tmp_path):
    repro_dir = tmp_path / "repro"
    status, out, err = run_opt(
        mm, "--pipeline", "rb-strict", "--pipelines-dir", strict_dir, "--repro-dir", repro_dir
    )

    assert (status, out) == (1, "")
    repro = repro_dir / "mm.no-linalg.input.mlir"
    assert err == (
        "error: pipeline 'rb-strict', stage 'no-linalg' failed: pass 'mlirpipe-forbid-ops' failed\n"
        "  passes: convert-func-to-llvm,mlirpipe-forbid-ops{ops=linalg.*}\n"
        f"{mm}:6:10: error: 'linalg.fill' is forbidden here by mlirpipe-forbid-ops\n"
        f"{mm}:7:10: error: 'linalg.matmul' is forbidden here by mlirpipe-forbid-ops\n"
        f"  reproduce with: mlirpipe-opt {repro} --pipeline rb-strict --start-after bufferize "
        f"--stop-after no-linalg --pipelines-dir {strict_dir}\n"
    )
    # The repro input is the IR the failing stage started from.
    assert (
        repro.read_text() == run_opt(mm, "--pipeline", "refbackend", "--stop-after", "bufferize")[1]
    )

    command = shlex.split(err.splitlines()[-1].removeprefix("  reproduce with: "))
    assert command[0] == "mlirpipe-opt"
    again, again_out, again_err = run_opt(*command[1:], "--repro-dir", tmp_path / "again")

    assert (again, again_out) == (1, "")
    assert again_err.splitlines()[:2] == err.splitlines()[:2]
    assert [ln.split(": ", 1)[1] for ln in again_err.splitlines()[2:4]] == [
        ln.split(": ", 1)[1] for ln in err.splitlines()[2:4]
    ]
    assert again_err.splitlines()[2].startswith(f"{repro}:")


def test_a_failing_first_stage_repro_has_no_start_after(mm, write_file, tmp_path):
    pipes = write_file(
        "pipes/check.toml",
        """
        [pipeline]
        name = "check"
        input = "linalg-on-tensors"
        output = "linalg-on-tensors"

        [[stage]]
        name = "no-linalg"
        reason = "r"
        passes = ["mlirpipe-forbid-ops{ops=linalg.*}"]
    """,
    ).parent

    status, _, err = run_opt(
        mm,
        "--pipeline",
        "check",
        "--pipelines-dir",
        pipes,
        "--no-verify-each",
        "--repro-dir",
        tmp_path,
    )

    assert status == 1
    assert err.splitlines()[-1] == (
        f"  reproduce with: mlirpipe-opt {tmp_path / 'mm.no-linalg.input.mlir'} --pipeline check "
        f"--stop-after no-linalg --pipelines-dir {pipes} --no-verify-each"
    )
    assert (tmp_path / "mm.no-linalg.input.mlir").read_text() == mm.read_text()


def test_the_repro_lands_next_to_the_output_file_by_default(mm, strict_dir, tmp_path):
    (tmp_path / "out").mkdir()

    status, _, err = run_opt(
        mm,
        "--pipeline",
        "rb-strict",
        "--pipelines-dir",
        strict_dir,
        "-o",
        tmp_path / "out" / "mm.out.mlir",
    )

    assert status == 1
    assert (tmp_path / "out" / "mm.no-linalg.input.mlir").is_file()
    assert not (tmp_path / "out" / "mm.out.mlir").exists()
    assert f"reproduce with: mlirpipe-opt {tmp_path / 'out' / 'mm.no-linalg.input.mlir'} " in err


def _null_device(folder: Path) -> Path:
    """A null device of the test's own, never the machine's /dev/null (root only)."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    path = folder / "null"
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def test_output_to_a_null_device_leaves_the_device_a_device(mm, tmp_path):
    dev = tmp_path / "dev"
    dev.mkdir()
    null = _null_device(dev)

    status, out, err = run_opt(mm, "--pipeline", "refbackend", "-o", null)

    assert (status, out, err) == (0, "", "")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert os.listdir(dev) == ["null"]


def test_a_failing_stage_with_output_to_a_null_device_puts_no_repro_beside_the_device(
    mm, strict_dir, tmp_path
):
    dev = tmp_path / "dev"
    dev.mkdir()
    null = _null_device(dev)

    status, _, err = run_opt(
        mm, "--pipeline", "rb-strict", "--pipelines-dir", strict_dir, "-o", null
    )

    assert status == 1
    assert os.listdir(dev) == ["null"] and stat.S_ISCHR(os.stat(null).st_mode)
    path = Path(shlex.split(err.splitlines()[-1])[3])
    assert path.parent.name.startswith("mlirpipe-repro-") and path.parent.parent == tmp_path
    assert path.is_file()


def test_without_repro_dir_or_output_the_repro_goes_to_a_new_temporary_directory(
    mm, strict_dir, tmp_path
):
    status, _, err = run_opt(mm, "--pipeline", "rb-strict", "--pipelines-dir", strict_dir)

    assert status == 1
    path = Path(shlex.split(err.splitlines()[-1])[3])
    assert path.name == "mm.no-linalg.input.mlir"
    assert path.parent.parent == tmp_path
    assert path.parent.name.startswith("mlirpipe-repro-")
    assert path.is_file()


def test_the_repro_dir_from_the_environment_comes_before_the_output_folder(
    mm, strict_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("MLIRPIPE_REPRO_DIR", str(tmp_path / "repros"))
    out = tmp_path / "out.mlir"

    status, _, err = run_opt(
        mm, "--pipeline", "rb-strict", "--pipelines-dir", strict_dir, "-o", out
    )

    assert status == 1
    assert f"reproduce with: mlirpipe-opt {tmp_path / 'repros' / 'mm.no-linalg.input.mlir'} " in err
    assert (tmp_path / "repros" / "mm.no-linalg.input.mlir").is_file()
    assert not (tmp_path / "mm.no-linalg.input.mlir").exists()  # not next to -o


def test_the_repro_dir_flag_comes_before_the_environment(mm, strict_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MLIRPIPE_REPRO_DIR", str(tmp_path / "from-env"))

    status, _, err = run_opt(
        mm,
        "--pipeline",
        "rb-strict",
        "--pipelines-dir",
        strict_dir,
        "--repro-dir",
        tmp_path / "from-flag",
    )

    assert status == 1
    assert f"mlirpipe-opt {tmp_path / 'from-flag' / 'mm.no-linalg.input.mlir'} " in err
    assert (tmp_path / "from-flag" / "mm.no-linalg.input.mlir").is_file()
    assert not (tmp_path / "from-env").exists()


def test_repro_files_of_two_failing_chunks_do_not_overwrite_each_other(
    write_file, unlowerable_tosa, tmp_path
):
    second = unlowerable_tosa.replace('"op"', '"second"')
    path = write_file("two.mlir", unlowerable_tosa + "// -----\n" + second)

    status, _, err = run_opt(
        path,
        "--split-input-file",
        "--pass-pipeline",
        "builtin.module(func.func(tosa-to-linalg))",
        "--repro-dir",
        tmp_path / "r",
    )

    assert status == 1
    commands = [
        shlex.split(ln.removeprefix("  reproduce with: "))
        for ln in err.splitlines()
        if ln.startswith("  reproduce with: ")
    ]
    assert commands == [
        [
            "mlirpipe-opt",
            str(tmp_path / "r" / f"two.chunk-{n}.pass-pipeline.input.mlir"),
            "--pass-pipeline",
            "builtin.module(func.func(tosa-to-linalg))",
        ]
        for n in (1, 2)
    ]
    assert '"op"' in Path(commands[0][1]).read_text()
    assert '"second"' in Path(commands[1][1]).read_text()
    # Each chunk's repro keeps the chunk's line numbers in the file.
    assert Path(commands[1][1]).read_text().startswith("\n" * 5 + "func.func @f(")


def test_pipelines_on_the_environment_path_are_found_and_kept_in_the_repro(
    mm, strict_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv(PIPELINES_PATH_ENV, str(strict_dir))

    status, _, err = run_opt(mm, "--pipeline", "rb-strict", "--repro-dir", tmp_path)

    assert status == 1
    assert err.splitlines()[-1].endswith(
        f"--start-after bufferize --stop-after no-linalg --pipelines-dir {strict_dir}"
    )


def test_a_repro_that_cannot_be_written_says_why(mm, strict_dir, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("")

    status, _, err = run_opt(
        mm, "--pipeline", "rb-strict", "--pipelines-dir", strict_dir, "--repro-dir", blocker
    )

    assert status == 1
    repro = blocker / "mm.no-linalg.input.mlir"
    assert err.splitlines()[-1] == (
        f"  reproduce with: (cannot write the repro input to {repro}: File exists)"
    )


def test_an_output_that_cannot_be_written_exits_2(mm, tmp_path):
    target = tmp_path / "missing" / "out.mlir"

    assert run_opt(mm, "--pass-pipeline", "builtin.module(cse)", "-o", target) == (
        2,
        "",
        (f"mlirpipe-opt: {target}: error: cannot write output: No such file or directory\n"),
    )


def test_an_unknown_flag_exits_2(mm):
    assert run_opt(mm, "--pass-pipeline", "cse", "--bogus") == (
        2,
        "",
        (
            "mlirpipe-opt: error: unrecognized arguments: --bogus\n"
            "  hint: see `mlirpipe-opt --help`\n"
        ),
    )


def test_an_unknown_op_of_a_known_dialect_is_located_with_what_to_check():
    text = "func.func @f(%a: f32) -> f32 {\n  %0 = arith.frobnicate %a : f32\n  return %0 : f32\n}"

    status, out, err = run_opt("--pass-pipeline", "builtin.module(canonicalize)", stdin=text)

    assert (status, out) == (1, "")
    assert err == (
        "<stdin>:2:8: error: cannot parse MLIR: custom op 'arith.frobnicate' is unknown\n"
        "  hint: fix the IR at that position, or check that its dialects are registered "
        "(torch, linalg, tosa, ... are; a custom dialect is not)\n"
    )


def test_version_prints_ours_and_torch_mlirs():
    from importlib.metadata import version

    assert run_opt("--version") == (
        0,
        f"mlirpipe-opt {version('pytest-mlirpipe')}, torch-mlir {version('torch-mlir')}\n",
        "",
    )


TORCH_MM = """\
func.func @f(%a: !torch.vtensor<[2,3],f32>, %b: !torch.vtensor<[3,4],f32>)
    -> !torch.vtensor<[2,4],f32> {
  %0 = torch.aten.mm %a, %b : !torch.vtensor<[2,3],f32>, !torch.vtensor<[3,4],f32>
      -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}
"""


def test_torch_ir_given_to_a_linalg_pipeline_is_said_to_be_at_the_wrong_level(write_file, tmp_path):
    path = write_file("t.mlir", TORCH_MM)

    status, _, err = run_opt(path, "--pipeline", "refbackend", "--repro-dir", tmp_path / "r")

    assert status == 1
    assert err.splitlines()[-1] == (
        "  hint: the input is torch IR ('torch.aten.mm' at line 3), but pipeline 'refbackend' "
        "takes linalg-on-tensors IR: lower it first, e.g. with --pipeline torch-to-linalg "
        "(`mlirpipe list` shows what each pipeline takes)"
    )


def test_a_failure_on_ir_of_the_right_level_gets_no_level_hint(mm, strict_dir):
    status, _, err = run_opt(mm, "--pipeline", "rb-strict", "--pipelines-dir", strict_dir)
    assert status == 1
    assert "hint: the input is" not in err
