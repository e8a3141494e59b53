"""Content-keyed cache of lowered modules and shared libraries (atomic writes, safe under xdist)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from ..atomic import write_atomic

CACHE_ENV = "MLIRPIPE_CACHE_DIR"
# Bump when what is stored, or how it is produced, changes meaning.
FORMAT = "1"


def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pytest-mlirpipe" / "artifacts"


def _toolchain_tag() -> str:
    """What else decides the artifact: the torch-mlir build that lowers and compiles."""
    try:
        from importlib.metadata import version

        return "torch-mlir " + version("torch-mlir")
    except Exception:  # pragma: no cover - metadata missing in odd installs
        return "torch-mlir unknown"


def cache_key(parts: Iterable[str]) -> str:
    h = hashlib.sha256()
    for p in (FORMAT, _toolchain_tag(), *parts):
        data = p.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:32]


class ArtifactCache:
    """Files under `root/<key[:2]>/<key>/`; a reader sees a whole file or none.

    Every write goes through `atomic.write_atomic` (a uniquely named temporary file in the
    same directory, then one rename), so two xdist workers compiling the same case both
    succeed and either copy wins. `root=None` disables the cache.
    """

    def __init__(self, root: Path | str | None):
        self.root = Path(root) if root is not None else None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def _dir(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / key

    def path(self, key: str, name: str) -> Path | None:
        """The cached file, if present."""
        if self.root is None:
            return None
        p = self._dir(key) / name
        return p if p.is_file() else None

    def read_text(self, key: str, name: str) -> str | None:
        p = self.path(key, name)
        if p is None:
            return None
        try:
            return p.read_text()
        except OSError:
            return None

    def write_text(self, key: str, name: str, text: str) -> None:
        self._write(key, name, text.encode())

    def store_file(self, key: str, name: str, source: Path) -> Path | None:
        """Copy `source` into the cache; returns the cached path (None when disabled)."""
        try:
            content = source.read_bytes()
        except OSError:
            return None
        return self._write(key, name, content)

    def _write(self, key: str, name: str, content: bytes) -> Path | None:
        if self.root is None:
            return None
        target = self._dir(key) / name
        try:
            write_atomic(target, content, make_parents=True)
        except OSError:
            return None  # a read-only or full disk costs the cache, not the test
        return target
