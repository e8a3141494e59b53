"""capture_fds: what C and C++ code writes to descriptors 1 and 2 is captured, and put back."""

from __future__ import annotations

import ctypes
import os

import pytest

from pytest_mlirpipe.capture import capture_fds


def test_writes_to_the_descriptors_are_captured_and_the_descriptors_restored(capfd):
    with capture_fds() as got:
        os.write(1, b"to fd 1\n")
        os.write(2, b"to fd 2\n")
        ctypes.CDLL(None).puts(b"from C stdio")  # buffered by C: flushed on the way out
    os.write(2, b"after\n")
    assert got.stdout == b"to fd 1\nfrom C stdio\n"
    assert got.stderr == b"to fd 2\n"
    assert capfd.readouterr().err == "after\n"


def test_the_descriptors_are_restored_when_the_block_raises(capfd):
    with pytest.raises(ValueError), capture_fds():
        os.write(2, b"swallowed\n")
        raise ValueError
    os.write(2, b"seen\n")
    assert capfd.readouterr().err == "seen\n"


def test_nothing_is_left_in_the_temporary_folder(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with capture_fds():
        os.write(1, b"x")
    assert list(tmp_path.iterdir()) == []


def test_a_stage_served_from_the_prefix_cache_prints_what_its_passes_printed(capfd):
    from pytest_mlirpipe.lowering.prefix_cache import prefix_cache
    from pytest_mlirpipe.lowering.stages import run_pass_pipeline

    ir = "func.func @f(%a: f32) -> f32 {\n  %0 = arith.addf %a, %a : f32\n  return %0 : f32\n}\n"
    with prefix_cache() as cache:
        for _ in range(2):
            run_pass_pipeline(ir, "builtin.module(print-op-stats)")
            assert "Operations encountered" in capfd.readouterr().err
    assert cache.hits == 1


def test_what_was_written_before_the_block_raised_is_kept():
    with pytest.raises(RuntimeError), capture_fds() as got:
        os.write(2, b"said before failing\n")
        raise RuntimeError
    assert got.stderr == b"said before failing\n"
