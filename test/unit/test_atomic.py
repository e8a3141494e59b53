"""Files we write are replaced whole: no half-written file after a failure or Ctrl-C, no
temporary file left behind, no shared temporary name between writers."""

from __future__ import annotations

import os

import pytest

from pytest_mlirpipe import atomic
from pytest_mlirpipe.atomic import write_atomic


def test_the_file_gets_the_new_text_and_no_temporary_file_remains(tmp_path):
    target = tmp_path / "out.mlir"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["out.mlir"]


def test_an_interrupt_while_writing_keeps_the_old_file_and_removes_the_temporary(
    tmp_path, monkeypatch
):
    target = tmp_path / "out.mlir"
    target.write_text("old")

    def interrupted(fd, *args, **kwargs):
        os.close(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fdopen", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.mlir"]


def test_two_writers_in_one_process_use_different_temporary_names(tmp_path, monkeypatch):
    names = []
    real_replace = os.replace

    def record(src, dst):
        names.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", record)
    write_atomic(tmp_path / "a.mlir", "1")
    write_atomic(tmp_path / "a.mlir", "2")
    assert len(set(names)) == 2 and all(n.startswith(".a.mlir.") for n in names)


def test_a_missing_folder_is_an_error_unless_asked_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "x.mlir", "t")
    write_atomic(tmp_path / "no" / "x.mlir", "t", make_parents=True)
    assert (tmp_path / "no" / "x.mlir").read_text() == "t"


def test_the_file_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "x.mlir", "t")
    finally:
        os.umask(umask)
    assert (tmp_path / "x.mlir").stat().st_mode & 0o777 == 0o644
