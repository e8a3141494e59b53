"""WorkDir: a given folder stays; a private one is made on first use and removed by its maker."""

from __future__ import annotations

import gc
import os

import pytest

from pytest_mlirpipe.execution.workdir import WorkDir


def test_a_given_folder_is_used_as_it_is_and_stays(tmp_path, tmpdir_):
    work = WorkDir(tmp_path / "out")

    built = work.new_folder("aot-")
    work.close()

    assert work.path == tmp_path / "out"
    assert built.parent == tmp_path / "out" and built.is_dir()
    assert list(tmpdir_.iterdir()) == []


def test_a_private_folder_is_made_on_first_use_and_removed_by_close(tmpdir_):
    work = WorkDir()
    assert list(tmpdir_.iterdir()) == []

    built = work.new_folder("aot-")
    (built / "lib.so").write_bytes(b"")
    assert work.path.parent == tmpdir_ and work.path.name.startswith("mlirpipe-work-")

    work.close()
    assert list(tmpdir_.iterdir()) == []


def test_a_private_folder_goes_with_its_workdir(tmpdir_):
    work = WorkDir()
    work.prepare()
    assert len(list(tmpdir_.iterdir())) == 1

    del work
    gc.collect()

    assert list(tmpdir_.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_leaves_the_private_folder_to_its_parent(tmpdir_):
    work = WorkDir()
    work.prepare()

    pid = os.fork()
    if pid == 0:  # the child: what it would do on its way out
        work.close()
        os._exit(0)
    os.waitpid(pid, 0)

    assert work.path.is_dir()
    work.close()
    assert list(tmpdir_.iterdir()) == []


def test_a_repro_folder_goes_under_a_given_folder(tmp_path, tmpdir_):
    folder = WorkDir(tmp_path / "out").kept_folder("mlirpipe-repro-")

    assert folder.parent == tmp_path / "out"
    assert list(tmpdir_.iterdir()) == []


def test_without_a_given_folder_a_repro_folder_outlives_close(tmpdir_):
    work = WorkDir()
    folder = work.kept_folder("mlirpipe-repro-")

    work.close()

    assert folder.parent == tmpdir_ and folder.is_dir()
