"""What a FileCheck run under --mlirpipe-repeat records: the project's own records (input
inline) and the shims' (input in a file beside the record) read back in order."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pytest_mlirpipe.filetests.external_shell import SHIM_DIR
from pytest_mlirpipe.tools.filecheck import input_record, read_input_records


def test_records_read_back_in_order_with_arguments_and_bytes_as_given(tmp_path: Path) -> None:
    kept = tmp_path / "record.123"
    kept.write_bytes(b"kept\0input\n")
    data = (
        input_record(["a b", "--check-prefix=X"], b"first\nline\0\n")
        + b"mlirpipe-filecheck-input 1 @"
        + bytes(kept)
        + b"\n"
        + b"x y\0"
        + input_record([], b"")
    )
    assert read_input_records(data) == [
        (["a b", "--check-prefix=X"], b"first\nline\0\n"),
        (["x y"], b"kept\0input\n"),
        ([], b""),
    ]
    assert not kept.exists()  # read once, then removed


def test_a_record_cut_short_ends_the_list(tmp_path: Path) -> None:
    whole = input_record(["p"], b"abc")
    assert read_input_records(whole + input_record(["q"], b"defgh")[:-2]) == [(["p"], b"abc")]
    missing = b"mlirpipe-filecheck-input 0 @" + bytes(tmp_path / "gone") + b"\n"
    assert read_input_records(whole + missing) == [(["p"], b"abc")]
    assert read_input_records(b"not a record\n") == []


def test_the_shim_records_and_runs_the_program_the_path_had(tmp_path: Path) -> None:
    program = tmp_path / "checker"
    program.write_text('#!/bin/sh\necho "checked $# args:"\ncat\nexit 3\n')
    program.chmod(0o755)
    record = tmp_path / "t.filecheck-inputs"
    env = {"PATH": "/usr/bin:/bin", "MLIRPIPE_FILECHECK_DIRECT": str(program)}
    env["MLIRPIPE_FILECHECK_PATH"] = "/usr/bin:/bin"
    env["MLIRPIPE_FILECHECK_INPUTS"] = str(record)
    for given in (b"one\0\n", b"two"):
        ran = subprocess.run(
            [str(SHIM_DIR / "FileCheck"), "x y", "-z"], input=given, env=env, capture_output=True
        )
        assert (ran.returncode, ran.stdout) == (3, b"checked 2 args:\n" + given)
    assert read_input_records(record.read_bytes()) == [
        (["x y", "-z"], b"one\0\n"),
        (["x y", "-z"], b"two"),
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checker", "t.filecheck-inputs"]


def test_a_filecheck_that_calls_filecheck_by_name_finds_what_it_would_find(tmp_path: Path):
    """A suite's FileCheck wrapper that takes its own folder off PATH and calls `FileCheck`
    reaches the program behind it, not the shim again (which looped, the record growing)."""
    wrappers, real = tmp_path / "bin", tmp_path / "real"
    wrappers.mkdir()
    real.mkdir()
    (wrappers / "FileCheck").write_text(
        f'#!/bin/sh\nPATH=$(echo "$PATH" | sed "s#{wrappers}:##") exec FileCheck "$@"\n'
    )
    (real / "FileCheck").write_text('#!/bin/sh\necho "real: $*"\n')
    for program in (wrappers / "FileCheck", real / "FileCheck"):
        program.chmod(0o755)
    own_path = f"{wrappers}:{real}:/usr/bin:/bin"
    env = {
        "PATH": f"{SHIM_DIR}:{own_path}",
        "MLIRPIPE_FILECHECK_PATH": own_path,
        "MLIRPIPE_FILECHECK_DIRECT": str(wrappers / "FileCheck"),
        "MLIRPIPE_FILECHECK_INPUTS": str(tmp_path / "t.filecheck-inputs"),
    }
    ran = subprocess.run(
        [str(SHIM_DIR / "FileCheck"), "x"], input=b"in", env=env, capture_output=True, timeout=20
    )
    assert (ran.returncode, ran.stdout) == (0, b"real: x\n")
    assert read_input_records((tmp_path / "t.filecheck-inputs").read_bytes()) == [(["x"], b"in")]


def test_a_test_s_records_are_removed_by_its_own_name_not_a_pattern(tmp_path: Path) -> None:
    from pytest_mlirpipe.filetests.repeat import _remove_records

    mine = tmp_path / "t[12].mlir.tmp.filecheck-inputs"
    theirs = tmp_path / "t1.mlir.tmp.filecheck-inputs"
    for path in (mine, Path(f"{mine}.a1b2c3"), theirs, Path(f"{theirs}.d4e5f6")):
        path.write_text("")
    _remove_records(mine)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "t1.mlir.tmp.filecheck-inputs",
        "t1.mlir.tmp.filecheck-inputs.d4e5f6",
    ]


def test_outputs_that_are_not_utf8_stay_different() -> None:
    from pytest_mlirpipe.filetests.repeat import shown_bytes

    assert shown_bytes(b"a\xff") != shown_bytes(b"a\xfe")
    assert shown_bytes("é".encode()) == "é"
