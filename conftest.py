"""Repository-level pytest setup: pytester for the plugin's own tests, torch's cache, and a
$TMPDIR of the run's own."""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules an inner session imported; native extensions
# (MLIR's bindings, numpy) cannot be imported twice in one process, so load them up front.
# The core install (no `[mlir]` extra) has neither: the tests that need them are skipped there.
try:
    import numpy  # noqa: F401

    import pytest_mlirpipe.lowering.stages  # noqa: F401

    HAS_MLIR = True
except ImportError:
    HAS_MLIR = False

# The project's own tests assert the Python FileCheck port's messages; the tests of the engine
# choice set it themselves (README: "Which FileCheck").
os.environ.setdefault("MLIRPIPE_FILECHECK", "python")

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session", autouse=True)
def _torch_cache_outside_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """torch.export imports torch._dynamo, which makes its cache folder
    `$TMPDIR/torchinductor_<user>` unless $TORCHINDUCTOR_CACHE_DIR names one: the run's own
    folder instead, so `pytest test/` leaves $TMPDIR as it found it (every process a test
    starts inherits it)."""
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("torchinductor")))
        yield


@pytest.fixture(scope="session", autouse=True)
def _kept_folders_outside_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What the code under test keeps in $TMPDIR on purpose (a command-line run's repro
    folder, named in its message) goes to the run's own temporary folder, so `pytest test/`
    leaves the machine's $TMPDIR as it found it; processes the tests start inherit it."""
    folder = tmp_path_factory.mktemp("tmpdir")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(folder))
        mp.setattr(tempfile, "tempdir", None)  # tempfile reads $TMPDIR again
        yield


@pytest.fixture
def tmpdir_(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder standing for $TMPDIR (tempfile's folder for the test)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder
