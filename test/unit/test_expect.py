"""MLIRPIPE-* lines found by lit's keyword scanner: values, line numbers, bad bytes."""

from __future__ import annotations

from pytest_mlirpipe.filetests.expect import read_expectations


def test_lines_are_found_with_their_line_numbers(tmp_path):
    f = tmp_path / "t.mlir"
    f.write_text("// RUN: true\n\n// MLIRPIPE-EXPECT: crash\n// MLIRPIPE-TIMEOUT: 3\n")
    got = read_expectations(f)
    assert (got.kind, got.kind_line, got.timeout, got.timeout_line) == ("crash", 3, 3.0, 4)
    assert got.problems == ()


def test_a_line_that_is_not_utf8_is_a_located_problem(tmp_path):
    f = tmp_path / "t.mlir"
    f.write_bytes(b"// RUN: true\n// MLIRPIPE-EXPECT: cr\xe9sh\n")
    got = read_expectations(f)
    assert got.problems == (
        f"{f}: error: a MLIRPIPE- line is not UTF-8 text (byte 0xe9)\n"
        "  hint: write these lines in plain ASCII",
    )


def test_a_file_without_such_lines_expects_nothing(tmp_path):
    f = tmp_path / "t.mlir"
    f.write_bytes(b"// RUN: true\n// caf\xe9\n")
    assert read_expectations(f) == read_expectations(tmp_path / "missing.mlir")
