"""pytest items for RUN/CHECK files: one file, one test, lit's verdict mapped onto pytest's."""

from __future__ import annotations

import os
import re
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .model import ResultCode

if TYPE_CHECKING:  # loaded when a file is collected (plugin.file_runner), not with the plugin
    from .filetests.runner import FileTestRunner
    from .filetests.verdict import FileVerdict

# The run's file-test runner, built from its RunConfig when the first file is collected.
RUNNER_KEY: pytest.StashKey[FileTestRunner] = pytest.StashKey()

# user_properties key of a file whose in-process run crashed or timed out (then contained).
CONTAINED = "mlirpipe_contained"
# user_properties key of lit's result code for the file (PASS, FLAKYPASS, FAIL, UNRESOLVED, ...).
VERDICT = "mlirpipe_verdict"
# user_properties key of why a failing file failed (one line, kept in --mlirpipe-json).
REASON = "mlirpipe_reason"
# user_properties key of what --mlirpipe-update-checks did to the file (report lines).
UPDATED = "mlirpipe_updated"
# user_properties key of what --mlirpipe-preload did with the file's Python commands: "F P D",
# forked (check: run both ways), run as processes all the same, differed (check).
PRELOADED = "mlirpipe_preloaded"
# user_properties key of the stage report of a file whose stage check failed (a path).
STAGE_REPORT = "mlirpipe_stage_report"
# lit's codes that are not failures and are not a plain pass: pytest's outcome for each. Any
# other code that lit does not count as a failure (PASS, FLAKYPASS, ...) passes.
NOT_FAILING = {
    ResultCode.XFAIL: "xfailed",
    ResultCode.UNSUPPORTED: "skipped",
    ResultCode.SKIPPED: "skipped",
    ResultCode.EXCLUDED: "skipped",
}


class MlirFile(pytest.File):
    def collect(self):
        yield MlirItem.from_parent(self, name=self.path.name)


class LintFailure(Exception):
    """The file's CHECK lines FileCheck would ignore, when findings fail it (one per line)."""


def _lint(item: MlirItem, runner: FileTestRunner) -> None:
    """The file's CHECK lines that FileCheck would ignore (mlirpipe_lint), checked as its test
    starts (each file once, by the process that runs it, and never at collection): a warning
    each, or with `error` (or a filter that names MlirpipeLintWarning as an error) the file
    fails with every finding before its RUN lines run. A filter that makes every warning an
    error (`filterwarnings = error`, meant for deprecations) leaves them warnings:
    `mlirpipe_lint` says whether they fail."""
    from .filetests.lint import MlirpipeLintWarning, lint_file

    if runner.config.lint == "off":
        return
    engine = runner.config.suite.filecheck
    findings = lint_file(runner.make_test(item.path), item.path, engine) or []
    if not findings:
        return
    shown = os.path.relpath(item.path, Path.cwd())
    first = MlirpipeLintWarning(findings[0].describe())
    named = _lint_filter(first, str(item.path), findings[0].line)
    if runner.config.lint == "error" or named == "error":
        item.user_properties.append((REASON, f"mlirpipe_lint: {findings[0].describe()}"))
        raise LintFailure("\n".join(f.format(shown, "error") for f in findings))
    with warnings.catch_warnings():
        if named is None:  # the filters that apply are not about this warning
            warnings.simplefilter("always", MlirpipeLintWarning)
        for finding in findings:
            warning = MlirpipeLintWarning(finding.describe())
            warnings.warn_explicit(warning, MlirpipeLintWarning, str(item.path), finding.line)


def _lint_filter(warning: Warning, filename: str, line: int) -> str | None:
    """The action of the first warning filter that applies to `warning` and names its class
    (or a subclass of it); None when the first that applies names a broader one."""
    module = filename[:-3] if filename.endswith(".py") else filename
    text = str(warning)
    for action, message, category, module_re, lineno in warnings.filters:
        if not isinstance(category, type):  # a filter's category is one class
            continue
        if not issubclass(type(warning), category) or lineno not in (0, line):
            continue
        if (message is None or message.match(text)) and (
            module_re is None or module_re.match(module)
        ):
            return action if issubclass(category, type(warning)) else None
    return None


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


class LitSuiteDir(pytest.Directory):
    """A folder of a lit suite whose config loads. As lit, it looks only at the files lit runs
    there: pytest's hooks hear of those, of the files pytest's Python and doctest plugins may
    take, and of every file once another plugin collects files; the rest (a source tree's
    C++ files and build rules) are passed by without a hook call each, and so is a folder
    whose tree holds none of those."""

    def collect(self):
        """The folder's nodes, found once: pytest collects a folder again for each file of it
        given on the command line (so that a file given twice runs twice), and 1,000 files
        given one by one would otherwise cost 1,000 scans of their folders' children."""
        found = getattr(self, "_found", None)
        if found is None:
            found = self._found = list(self._scan())
        return found

    def _scan(self):
        from _pytest.pathlib import scandir

        discovery = self.config.stash[RUNNER_KEY].discovery
        tests = discovery.tests_in(self.path) or frozenset()
        offered = _Offered(self, discovery)
        offered_here = offered.files_of(self.path)
        ihook = self.ihook
        for entry in scandir(self.path):
            if entry.is_dir():
                path = Path(entry.path)
                if not offered.tree(path):
                    continue
                if not self.session.isinitpath(path, with_parents=True) and (
                    ihook.pytest_ignore_collect(collection_path=path, config=self.config)
                ):
                    continue
                directory = ihook.pytest_collect_directory(path=path, parent=self)
                if directory is not None:
                    yield directory
            elif entry.is_file() and (entry.name in tests or offered_here(entry.name)):
                path = Path(entry.path)
                if not self.session.isinitpath(path) and (
                    ihook.pytest_ignore_collect(collection_path=path, config=self.config)
                ):
                    continue
                yield from ihook.pytest_collect_file(file_path=path, parent=self)


# Per run: folder -> whether its tree holds a file pytest's hooks are to hear of.
_TREES = pytest.StashKey[dict]()
# The names of lit's config files that make a folder a suite's root.
SUITE_CONFIGS = ("lit.site.cfg.py", "lit.site.cfg", "lit.cfg.py", "lit.cfg")


class _Offered:
    """Which files lit does not run pytest's hooks should hear of, by name: Python files,
    pytest's doctest files, the run's own arguments; every file (and folder) when a plugin
    other than pytest's own and this one collects files or folders."""

    def __init__(self, directory: pytest.Directory, discovery):
        import fnmatch

        config = directory.config
        self.session = directory.session
        self.discovery = discovery
        self.trees = config.stash.setdefault(_TREES, {})
        hooks = config.pluginmanager.hook
        impls = [
            *hooks.pytest_collect_file.get_hookimpls(),
            *hooks.pytest_collect_directory.get_hookimpls(),
        ]
        self.everything = any(
            i.plugin_name not in ("main", "python", "doctest")
            and not i.function.__module__.startswith(f"{__package__}.")
            for i in impls
        )
        doctest = config.pluginmanager.has_plugin("doctest")
        globs = (config.getoption("doctestglob", None) or ["test*.txt"]) if doctest else []
        self.by_name = re.compile("|".join(fnmatch.translate(g) for g in globs if os.sep not in g))
        self.by_path = [g for g in globs if os.sep in g]

    def files_of(self, folder: Path) -> Callable[[str], bool]:
        """Whether the hooks are to hear of a file of `folder`, by its name (what does not
        depend on the name is worked out once: a source tree's folders hold thousands)."""
        from _pytest.pathlib import fnmatch_ex

        if self.everything:
            return lambda name: True
        # the run's arguments: only a folder that is one or holds one holds a file among them
        holds_arguments = self.session.isinitpath(folder, with_parents=True)
        by_name = self.by_name.match if self.by_name.pattern else None
        by_path = self.by_path

        def offered(name: str) -> bool:
            return (
                name.endswith(".py")
                or (holds_arguments and self.session.isinitpath(folder / name))
                or (by_name is not None and by_name(name) is not None)
                or any(fnmatch_ex(g, folder / name) for g in by_path)
            )

        return offered

    def tree(self, folder: Path) -> bool:
        """Whether the folder's tree holds a file lit runs or one the hooks are to hear of
        (or a suite's config, or a symbolic link to a folder: not looked into)."""
        if self.everything or self.session.isinitpath(folder, with_parents=True):
            return True
        if not any(self.session.isinitpath(up) for up in folder.parents):
            return True  # beside the run's arguments: pytest does not look into it
        if folder not in self.trees:
            self.trees[folder] = self._look_into(folder)
        return self.trees[folder]

    def _look_into(self, folder: Path) -> bool:
        if self.discovery.tests_in(folder):
            return True
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            return True  # pytest reports it
        offered = self.files_of(folder)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if self.tree(Path(entry.path)):
                    return True
            elif entry.is_dir() or entry.name in SUITE_CONFIGS or offered(entry.name):
                return True
        return False


class BrokenPipelineFiles(pytest.Item):
    """The user's pipeline files that do not load, said once at the start of the run: the
    tests whose pipelines they define fail with the same problems, the others run."""

    def __init__(self, *, problems, **kwargs):
        super().__init__(**kwargs)
        self.problems = tuple(problems)

    @classmethod
    def for_problems(cls, session: pytest.Session, problems) -> BrokenPipelineFiles:
        first = next((p.location for p in problems if p.location), None)
        path = Path(first.path) if first else session.path
        name = os.path.relpath(path, session.config.rootpath) if first else "pipelines"
        return cls.from_parent(session, name=name, nodeid=name, path=path, problems=problems)

    def runtest(self) -> None:
        from .errors import PipelineSpecError

        raise PipelineSpecError(self.problems)

    def repr_failure(self, excinfo, style=None):
        files = {p.location.path for p in self.problems if p.location}
        count = f"{len(files)} pipeline file{'s' if len(files) != 1 else ''}"
        return (
            f"{count} of the run did not load; the tests that use their pipelines fail, "
            f"the others run\n{excinfo.value}"
        )

    def reportinfo(self):
        return self.path, 0, f"pipelines: {self.name}"


class FileTestFailure(Exception):
    """lit reported a failing verdict; carries its output for the report."""

    def __init__(self, verdict: FileVerdict, report=None):
        super().__init__(str(verdict.code))
        self.verdict = verdict
        self.report = report  # filetests.stage_report.ReportOutcome, or None


class MlirItem(pytest.Item):
    def runtest(self) -> None:
        runner = self.config.stash[RUNNER_KEY]
        _lint(self, runner)
        verdict = runner.run(self.path)
        if verdict.code is ResultCode.FAIL and self.config.getoption(
            "--mlirpipe-update-checks", False
        ):
            verdict = self._update_checks(verdict)
        timed_out = verdict.code is ResultCode.TIMEOUT
        contained = "timeout" if timed_out else "crash" if verdict.crash else None
        if contained:  # plain data: it reaches the xdist controller with the report
            self.user_properties.append((CONTAINED, contained))
        if any(verdict.preloaded):
            self.user_properties.append((PRELOADED, " ".join(map(str, verdict.preloaded))))
        # in --junitxml, for CI and tools; a plain string, as xdist sends it to the controller
        self.user_properties.append((VERDICT, str(verdict.code)))
        _remove_old_reports(runner, self.path)
        if verdict.is_failure:  # lit's own isFailure of the code: FAIL, XPASS, UNRESOLVED, ...
            from .filetests.stage_report import report_failed_file
            from .filetests.verdict import failure_reason

            self.user_properties.append((REASON, failure_reason(verdict)))

            report = report_failed_file(runner, self.path, verdict)
            if report is not None and report.path:
                self.user_properties.append((STAGE_REPORT, report.path))
            raise FileTestFailure(verdict, report)  # the report shows FileCheck disagreements
        _warn_of_filecheck_disagreements(self.path, verdict)
        outcome = NOT_FAILING.get(verdict.code, "passed")
        if outcome == "skipped":  # located at this file (pytest's own skip marks do the same)
            raise pytest.skip.Exception(
                _reason(verdict.output) or str(verdict.code), _use_item_location=True
            )
        if outcome == "xfailed":
            first = _reason(verdict.output)
            if "as MLIRPIPE-EXPECT:" in first:
                pytest.xfail(f"XFAIL: {first}")
            if verdict.xfail_listed:
                from .filetests.failure import LISTED_XFAIL

                pytest.xfail(LISTED_XFAIL)
            pytest.xfail("XFAIL: failed as the file's XFAIL line expects")

    def _update_checks(self, verdict: FileVerdict) -> FileVerdict:
        """Regenerate the failing RUN lines' checks; the verdict of the file run again."""
        from .filetests.update import update_file

        report = update_file(self.config.stash[RUNNER_KEY], self.path)
        self.user_properties.append((UPDATED, "\n".join(report.lines())))
        return report.verdict or verdict

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, FileTestFailure):
            from .filetests.failure import format_failure

            path = Path(os.path.relpath(self.path, Path.cwd()))
            verbose = self.config.get_verbosity() > 1
            notes = [v for k, v in self.user_properties if k == UPDATED and v]
            engine = self.config.stash[RUNNER_KEY].config.suite.filecheck
            text = format_failure(path, excinfo.value.verdict, verbose, engine)
            return "\n".join([*notes, text + _report_line(excinfo.value.report)])
        if isinstance(excinfo.value, pytest.xfail.Exception | LintFailure):
            # reported with its reason, or the findings: a traceback would be formatted for
            # nothing
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"mlir: {self.name}"


def _remove_old_reports(runner: FileTestRunner, path: Path) -> None:
    """The file's stage report from an earlier run, which named it in its failure: in this
    run's `Output/` and in those of the other runs beside it (`-n` gives each xdist worker its
    own folder: build/pytest/gw0, gw1, ..., and main without it)."""
    import lit.TestRunner

    from .filetests.names import REPORT_SUFFIX

    _, tmp_base = lit.TestRunner.getTempPaths(runner.make_test(path))
    report = Path(tmp_base + REPORT_SUFFIX)
    reports = [report]
    runs = runner.exec_root.parent
    if report.is_relative_to(runner.exec_root) and runs.is_dir():  # not a suite's own root
        inside = report.relative_to(runner.exec_root)
        reports += [run / inside for run in runs.iterdir() if run.is_dir()]
    for old in reports:
        old.unlink(missing_ok=True)


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


def exits_at_import(path: Path, root: Path, exit: SystemExit) -> str:
    """A Python module that exits at import (a script's `sys.exit()` when an optional
    dependency is missing), as its collection error: where, with what status, what to do."""
    shown = os.path.relpath(path, root)
    frames = [f for f, _ in traceback.walk_tb(exit.__traceback__)]
    lines = [f.f_lineno for f in frames if os.path.abspath(f.f_code.co_filename) == str(path)]
    where = f"{shown}:{lines[-1]}" if lines else shown
    code = exit.code
    status = f"1 ({code})" if isinstance(code, str) else str(code or 0)
    return (
        f"{where}: exits at import with status {status} (SystemExit): pytest collects no test"
        " from it\n"
        "  hint: a script, not a pytest module: keep pytest away from it (testpaths in the pytest"
        f" ini file, or --ignore={shown}), or have it skip instead of exit"
        " (pytest.importorskip, or pytest.skip(..., allow_module_level=True))"
    )


class OptionNotApplied(UserWarning):
    """A flag given to the run that the kind of lit suite it collected cannot apply."""


def suffixes_not_applied_warning(suites: list[Path], root: Path) -> OptionNotApplied:
    shown = ", ".join(f"{os.path.relpath(s, root)}/" for s in suites)
    return OptionNotApplied(
        f"mlirpipe: --mlirpipe-suffixes does not choose the files of the lit suite {shown}: "
        "its config.suffixes do, as lit's; the flag chooses files outside lit suites (a "
        "suite whose lit.cfg.py calls configure() takes the ini key mlirpipe_suffixes)"
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
