"""pytest items for RUN/CHECK files: one file, one test, lit's verdict mapped onto pytest's."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # loaded when a file is collected (plugin.file_runner), not with the plugin
    from .filetests.runner import FileTestRunner
    from .filetests.verdict import FileVerdict

# The run's file-test runner, built from its RunConfig when the first file is collected.
RUNNER_KEY: pytest.StashKey[FileTestRunner] = pytest.StashKey()

# user_properties key of a file whose in-process run crashed or timed out (then contained).
CONTAINED = "mlirpipe_contained"
# user_properties key of lit's result code for the file (PASS, FLAKYPASS, FAIL, UNRESOLVED, ...).
VERDICT = "mlirpipe_verdict"
# lit's codes that are not failures and are not a plain pass: pytest's outcome for each. Any
# other code that lit does not count as a failure (PASS, FLAKYPASS, ...) passes.
NOT_FAILING = {
    "XFAIL": "xfailed",
    "UNSUPPORTED": "skipped",
    "SKIPPED": "skipped",
    "EXCLUDED": "skipped",
}


class MlirFile(pytest.File):
    def collect(self):
        yield MlirItem.from_parent(self, name=self.path.name)


class BrokenSuite(pytest.File):
    """A file of a lit suite whose config does not load: its collection error says why."""

    def __init__(self, *, error, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def collect(self):
        raise self.CollectError(self.error.message(Path.cwd()))


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
        self.user_properties.append((VERDICT, verdict.code))  # in --junitxml, for CI and tools
        if verdict.is_failure:  # lit's own isFailure of the code: FAIL, XPASS, UNRESOLVED, ...
            raise FileTestFailure(verdict)  # the report shows any FileCheck disagreement
        _warn_of_filecheck_disagreements(self.path, verdict)
        outcome = NOT_FAILING.get(verdict.code, "passed")
        if outcome == "skipped":
            pytest.skip(_reason(verdict.output) or verdict.code)
        if outcome == "xfailed":
            first = _reason(verdict.output)
            if "as MLIRPIPE-EXPECT:" in first:
                pytest.xfail(f"XFAIL: {first}")
            pytest.xfail("XFAIL: failed as the file's XFAIL line expects")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, FileTestFailure):
            from .filetests.failure import format_failure

            path = Path(os.path.relpath(self.path, Path.cwd()))
            verbose = self.config.get_verbosity() > 1
            return format_failure(path, excinfo.value.verdict, verbose=verbose)
        if isinstance(excinfo.value, pytest.xfail.Exception):
            # reported as xfailed with its reason: a traceback would be formatted for nothing
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"mlir: {self.name}"


class FileCheckDisagreement(UserWarning):
    """With mlirpipe_filecheck = both: LLVM FileCheck and the Python port judged differently."""


def _warn_of_filecheck_disagreements(path: Path, verdict: FileVerdict) -> None:
    for line, report in verdict.warnings:
        warnings.warn_explicit(
            FileCheckDisagreement(f"{path}:{line}: {report}"),
            FileCheckDisagreement,
            str(path),
            line,
        )


def _reason(output: str) -> str:
    return output.strip().splitlines()[0] if output.strip() else ""
