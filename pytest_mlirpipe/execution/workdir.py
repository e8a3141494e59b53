"""The folder build products go to: one given (a test's tmp_path), or a private one removed."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TORCH_CACHE_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"


class WorkDir:
    """`given` as it is; without it, a private `mlirpipe-work-*` folder in $TMPDIR, made on
    first use and removed by close(), when this object is collected, or at exit.

    Only the process that made the private folder removes it: a forked child that compiled
    into it leaves it to its parent. Hold a WorkDir as long as something uses its files (a
    shared library loaded from it)."""

    def __init__(self, given: Path | str | None = None):
        self._given = Path(given) if given is not None else None
        self._own: Path | None = None
        self._finalizer: weakref.finalize | None = None

    @property
    def path(self) -> Path:
        if self._given is not None:
            return self._given
        if self._own is None:
            self._own = Path(tempfile.mkdtemp(prefix="mlirpipe-work-"))
            self._finalizer = weakref.finalize(self, _remove, self._own, os.getpid())
        return self._own

    def prepare(self) -> None:
        """Make the private folder now, in this process: one made in a forked child would
        be left behind by it."""
        self.path.mkdir(parents=True, exist_ok=True)

    def new_folder(self, prefix: str) -> Path:
        """A new, empty folder under `path` (which is made if missing)."""
        self.path.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=self.path))

    def kept_folder(self, prefix: str) -> Path:
        """A new folder for files a message names (a repro): under the given folder; without
        one, a new `prefix*` folder in $TMPDIR that is kept, since it is read after the run."""
        if self._given is not None:
            return self.new_folder(prefix)
        return Path(tempfile.mkdtemp(prefix=prefix))

    def close(self) -> None:
        """Remove the private folder (a given folder stays)."""
        if self._finalizer is not None:
            self._finalizer()
        self._own = None
        self._finalizer = None


def _remove(folder: Path, owner: int) -> None:
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


class TorchCache:
    """torch's cache folder for the length of a run: importing torch._dynamo (torch.export
    does) makes `$TMPDIR/torchinductor_<user>` and leaves it, unless $TORCHINDUCTOR_CACHE_DIR
    names a folder. open() names a private `mlirpipe-torch-*` folder there, close() removes it
    and unsets the variable again; one the user set is left as it is."""

    def __init__(self) -> None:
        self._own: str | None = None

    def open(self) -> None:
        if self._own is not None or os.environ.get(TORCH_CACHE_VARIABLE):
            return
        self._own = tempfile.mkdtemp(prefix="mlirpipe-torch-")
        os.environ[TORCH_CACHE_VARIABLE] = self._own

    def close(self) -> None:
        if self._own is None:
            return
        if os.environ.get(TORCH_CACHE_VARIABLE) == self._own:
            del os.environ[TORCH_CACHE_VARIABLE]
        shutil.rmtree(self._own, ignore_errors=True)
        self._own = None


@contextmanager
def private_torch_cache() -> Iterator[None]:
    """torch's cache in a private folder while the body runs (see TorchCache)."""
    cache = TorchCache()
    cache.open()
    try:
        yield
    finally:
        cache.close()
