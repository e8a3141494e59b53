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
