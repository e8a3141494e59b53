"""pytest items for RUN/CHECK files: one file, one test, lit's verdict mapped onto pytest's."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from .filetests.failure import format_failure
from .filetests.runner import FileTestRunner
from .filetests.stage_report import report_failed_file
from .filetests.verdict import FileVerdict

# The run's file-test runner, built from its RunConfig in pytest_configure.
RUNNER_KEY = pytest.StashKey[FileTestRunner]()

# user_properties key of a file whose in-process run crashed or timed out (then contained).
CONTAINED = "mlirpipe_contained"
# user_properties key of lit's result code for the file (PASS, FLAKYPASS, FAIL, UNRESOLVED, ...).
VERDICT = "mlirpipe_verdict"
# user_properties key of what --mlirpipe-update-checks did to the file (report lines).
UPDATED = "mlirpipe_updated"
# user_properties key of the stage report of a file whose stage check failed (a path).
STAGE_REPORT = "mlirpipe_stage_report"
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


class BrokenSuite(pytest.Directory):
    """The folder of a lit suite whose config does not load: one collection error says why,
    and nothing under it is collected."""

    def __init__(self, *, error, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def collect(self):
        raise self.CollectError(self.error.message(Path.cwd()))


class BrokenSuiteFile(pytest.File):
    """A file of a broken lit suite whose folder pytest does not collect (a suite root above
    the rootdir): the first such file shows the error, once for the suite; the others
    (`error` None) collect nothing, and a Python one is never imported."""

    def __init__(self, *, error, **kwargs):
        super().__init__(**kwargs)
        self.error = error

    def collect(self):
        if self.error is not None:
            raise self.CollectError(self.error.message(Path.cwd()))
        return []


class FileTestFailure(Exception):
    """lit reported a failing verdict; carries its output for the report."""

    def __init__(self, verdict: FileVerdict, report=None):
        super().__init__(verdict.code)
        self.verdict = verdict
        self.report = report  # filetests.stage_report.ReportOutcome, or None


class MlirItem(pytest.Item):
    def runtest(self) -> None:
        runner = self.config.stash[RUNNER_KEY]
        verdict = runner.run(self.path)
        if verdict.code == "FAIL" and self.config.getoption("--mlirpipe-update-checks", False):
            verdict = self._update_checks(verdict)
        contained = "timeout" if verdict.code == "TIMEOUT" else "crash" if verdict.crash else None
        if contained:  # plain data: it reaches the xdist controller with the report
            self.user_properties.append((CONTAINED, contained))
        self.user_properties.append((VERDICT, verdict.code))  # in --junitxml, for CI and tools
        if verdict.is_failure:  # lit's own isFailure of the code: FAIL, XPASS, UNRESOLVED, ...
            report = report_failed_file(runner, self.path, verdict)
            if report is not None and report.path:
                self.user_properties.append((STAGE_REPORT, report.path))
            raise FileTestFailure(verdict, report)  # the report shows FileCheck disagreements
        _warn_of_filecheck_disagreements(self.path, verdict)
        outcome = NOT_FAILING.get(verdict.code, "passed")
        if outcome == "skipped":
            pytest.skip(_reason(verdict.output) or verdict.code)
        if outcome == "xfailed":
            first = _reason(verdict.output)
            if "as MLIRPIPE-EXPECT:" in first:
                pytest.xfail(f"XFAIL: {first}")
            pytest.xfail("XFAIL: failed as the file's XFAIL line expects")

    def _update_checks(self, verdict: FileVerdict) -> FileVerdict:
        """Regenerate the failing RUN lines' checks; the verdict of the file run again."""
        from .filetests.update import update_file

        report = update_file(self.config.stash[RUNNER_KEY], self.path)
        self.user_properties.append((UPDATED, "\n".join(report.lines())))
        return report.verdict or verdict

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, FileTestFailure):
            path = Path(os.path.relpath(self.path, Path.cwd()))
            verbose = self.config.get_verbosity() > 1
            notes = [v for k, v in self.user_properties if k == UPDATED and v]
            text = format_failure(path, excinfo.value.verdict, verbose=verbose)
            return "\n".join([*notes, text + _report_line(excinfo.value.report)])
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"mlir: {self.name}"


class FileCheckDisagreement(UserWarning):
    """With mlirpipe_filecheck = both: LLVM FileCheck and the Python port judged differently."""


class IgnoredLocalConfig(UserWarning):
    """lit.local.cfg files outside any lit suite: neither pytest nor lit reads them."""


def ignored_local_configs_warning(paths: list[Path], root: Path) -> IgnoredLocalConfig:
    shown = ", ".join(os.path.relpath(p, root) for p in paths)
    return IgnoredLocalConfig(
        f"{shown}: ignored, as no lit suite holds them (no lit.cfg.py or lit.site.cfg.py in"
        " their folder or above it): their suffixes, excludes and settings apply to no test\n"
        "  hint: put a lit.cfg.py in the suite's top folder (README: \"Using it from another"
        ' compiler repository" has a two-line one), or remove these files'
    )


def _warn_of_filecheck_disagreements(path: Path, verdict: FileVerdict) -> None:
    for line, report in verdict.warnings:
        warnings.warn_explicit(
            FileCheckDisagreement(f"{path}:{line}: {report}"),
            FileCheckDisagreement,
            str(path),
            line,
        )


def _report_line(report) -> str:
    if report is None:
        return ""
    if report.path:
        return f"\nstage report: {report.path}"
    hint = f"\n  hint: make one by hand: {report.hint}" if report.hint else ""
    return f"\nstage report: not written: {report.why_not}{hint}"


def _reason(output: str) -> str:
    return output.strip().splitlines()[0] if output.strip() else ""
