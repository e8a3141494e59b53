"""lit's temporary folder for a run's tests (lit.main.execute_in_tmp_dir)."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref

# What lit's run sets to its own temporary folder (lit.main.execute_in_tmp_dir).
TMP_VARIABLES = ("TMP", "TMPDIR", "TEMP", "TEMPDIR")
PRESERVES_TMP = "LIT_PRESERVES_TMP"


class LitTmp:
    """The temporary folder lit gives a run's tests: unless $LIT_PRESERVES_TMP is set, a
    `lit-tmp-*` folder made in $TMPDIR when the run starts, named by TMP, TMPDIR, TEMP and
    TEMPDIR in every test's environment, and removed with what the tests left in it when the run
    ends (here: when the runner goes, at the latest at exit, by the process that made it). A
    test that leaves files in $TMPDIR (torch's cache folder, mktemp) leaves them nowhere."""

    def __init__(self) -> None:
        self.folder: str | None = None
        if PRESERVES_TMP not in os.environ:
            self.folder = tempfile.mkdtemp(prefix="lit-tmp-")
            weakref.finalize(self, _remove_folder, self.folder, os.getpid())

    def apply(self, config) -> None:
        """Name the folder in a lit TestingConfig's environment, as lit does before running."""
        if self.folder is not None:
            config.environment.update(dict.fromkeys(TMP_VARIABLES, self.folder))


def _remove_folder(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # not a forked child (a pool worker, a contained run)
        shutil.rmtree(folder, ignore_errors=True)
