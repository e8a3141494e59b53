"""Files we write are replaced whole: no half-written file after a failure or Ctrl-C, no
temporary file left behind, no shared temporary name between writers."""

from __future__ import annotations

import contextlib
import os
import stat
import threading

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


def _null_device(folder):
    """A null device of the test's own (never the machine's /dev/null): root only."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    path = folder / "null"
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def test_a_null_device_is_written_in_place_and_stays_a_device(tmp_path):
    null = _null_device(tmp_path)
    write_atomic(null, "discarded")
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert os.listdir(tmp_path) == ["null"]


def test_a_symlink_to_a_null_device_stays_a_symlink_to_the_device(tmp_path):
    null = _null_device(tmp_path)
    link = tmp_path / "out.mlir"
    link.symlink_to(null)
    write_atomic(link, "discarded", make_parents=True)
    assert link.is_symlink()
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_a_fifo_is_written_in_place_for_its_reader(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    write_atomic(fifo, "through the pipe")
    reader.join(timeout=10)
    if reader.is_alive():  # the FIFO was replaced: release the blocked reader before failing
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


def test_a_symlink_to_a_regular_file_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.mlir"
    real.write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink()
    assert real.read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["link.mlir", "real.mlir"]


def test_a_folder_is_never_replaced(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomic(folder, "t")
    assert folder.is_dir()
