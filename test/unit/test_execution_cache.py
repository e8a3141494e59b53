"""The artifact cache: content keys, atomic writes, and a disabled cache."""

from __future__ import annotations

from pathlib import Path

from pytest_mlirpipe.execution.cache import ArtifactCache, cache_key


def test_keys_depend_on_every_part_and_on_their_boundaries() -> None:
    assert cache_key(["ab", "c"]) != cache_key(["a", "bc"])
    assert cache_key(["ir", "pipeline"]) == cache_key(["ir", "pipeline"])


def test_a_written_artifact_is_read_back_and_no_temporary_file_remains(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path)
    key = cache_key(["module"])
    assert cache.read_text(key, "lowered.mlir") is None
    cache.write_text(key, "lowered.mlir", "llvm.func @f()")
    assert cache.read_text(key, "lowered.mlir") == "llvm.func @f()"
    assert [p.name for p in (tmp_path / key[:2] / key).iterdir()] == ["lowered.mlir"]


def test_a_disabled_cache_stores_nothing(tmp_path: Path) -> None:
    cache = ArtifactCache(None)
    cache.write_text("k" * 32, "x", "text")
    assert cache.read_text("k" * 32, "x") is None and not cache.enabled
