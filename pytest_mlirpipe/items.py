"""pytest items for RUN/CHECK files: one file, one test, lit's verdict mapped onto pytest's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .filetests.failure import format_failure
from .filetests.runner import FileTestRunner
from .filetests.verdict import FileVerdict

# The run's file-test runner, built from its RunConfig in pytest_configure.
RUNNER_KEY = pytest.StashKey[FileTestRunner]()

# user_properties key of a file whose in-process run crashed or timed out (then contained).
CONTAINED = "mlirpipe_contained"


class MlirFile(pytest.File):
    def collect(self):
        yield MlirItem.from_parent(self, name=self.path.name)


class FileTestFailure(Exception):
    """lit reported a failing verdict; carries its output for the report."""

    def __init__(self, verdict: FileVerdict):
        super().__init__(verdict.code)
        self.verdict = verdict


class MlirItem(pytest.Item):
    def runtest(self) -> None:
        verdict = self.config.stash[RUNNER_KEY].run(self.path)
        contained = "timeout" if verdict.code == "TIMEOUT" else "crash" if verdict.crash else None
        if contained:  # plain data: it reaches the xdist controller with the report
            self.user_properties.append((CONTAINED, contained))
        if verdict.code == "PASS":
            return
        if verdict.code == "UNSUPPORTED":
            pytest.skip(_reason(verdict.output) or "UNSUPPORTED")
        if verdict.code == "XFAIL":
            first = _reason(verdict.output)
            if "as MLIRPIPE-EXPECT:" in first:
                pytest.xfail(f"XFAIL: {first}")
            pytest.xfail("XFAIL: failed as the file's XFAIL line expects")
        raise FileTestFailure(verdict)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, FileTestFailure):
            path = Path(os.path.relpath(self.path, Path.cwd()))
            verbose = self.config.get_verbosity() > 1
            return format_failure(path, excinfo.value.verdict, verbose=verbose)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"mlir: {self.name}"


def _reason(output: str) -> str:
    return output.strip().splitlines()[0] if output.strip() else ""
