"""Run one RUN/CHECK file exactly as lit would: lit's discovery, parser, shell and verdicts."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

from ..model import ResultCode
from ..options import RunConfig
from .discovery import LitDiscovery
from .external_shell import uses_external_shell, with_chosen_filecheck
from .lit_controls import LitControls
from .lit_tmp import LitTmp
from .names import (
    CONTAINED_PARAM,
    DISAGREEMENTS_METRIC,
    FILECHECK_PARAM,
    PIPELINES_PARAM,
    REPRO_SUFFIX,
)
from .verdict import FileVerdict, locate_disagreements, steps_of


class FileTestRunner:
    """Runs RUN/CHECK files the way lit does, one `run(path)` per file, with one LitConfig and
    one cache of discovered suites for the whole run.

    `config` is the pytest run's configuration, whose suite settings apply to files outside
    any lit suite; without one (the showcase) the defaults apply and such a file reads the
    nearest ini's settings. `controls` are lit's own ($LIT_XFAIL, $LIT_OPTS' -D, ...): each
    test is marked and each suite configured as lit would.
    """

    def __init__(
        self,
        exec_root: str | os.PathLike,
        config: RunConfig | None = None,
        controls: LitControls | None = None,
    ):
        self.exec_root = Path(exec_root).resolve()  # lit wants absolute paths
        self.config = config or RunConfig()
        self.controls = controls or LitControls()
        self._settings = config.suite if config is not None else None
        params = {}
        if self.config.pipeline_dirs:  # the format puts them on the RUN lines' search path
            params[PIPELINES_PARAM] = os.pathsep.join(self.config.pipeline_dirs)
        if self.config.suite.filecheck:  # the run's flag or ini key, over a suite's lit.cfg.py
            params[FILECHECK_PARAM] = self.config.suite.filecheck
        params.update(self.controls.params)  # lit's -D over its built-in params
        self.lit_config = _lit_config(params)
        self.tmp = LitTmp()  # the tests' $TMPDIR, as lit's
        # For runs in a contained child, whose parent enforces the time limits.
        self._contained_lit_config = _lit_config({**params, CONTAINED_PARAM: "1"})
        self._cache: dict = {}
        self._warm: set[str] = set()
        # A lit config -> whether its substitutions may bring in a tool that runs native code.
        self._brings_native: dict = {}
        # A file of a lit suite -> lit's (suite, path in suite, local config) of it.
        self._in_suites: dict[Path, tuple] = {}
        self._lock = threading.Lock()
        self.discovery = LitDiscovery(self.lit_config, self._cache, self._lock)
        self._lit_environment: dict[str, str] | None = None  # a config's before its suite's
        self.preloader = None  # Python commands of RUN lines forked from here (preload on)
        if self.config.preload != "off":
            from .preload import Preloader

            self.preloader = Preloader(
                self.config.preload, self.config.preload_modules, self.config.preload_env
            )

    def make_test(self, path: Path):
        """lit's Test for `path`: the suite of the nearest lit.cfg.py, else our default config."""
        import lit.discovery
        import lit.Test
        import lit.TestingConfig

        path = Path(os.path.abspath(path))  # lit's suites and substitutions want absolute paths
        with self._lock:
            if path in self._in_suites:  # lit shares these between its tests too
                return self._with_tmp(lit.Test.Test(*self._in_suites[path]))
            suite, in_suite = lit.discovery.getTestSuite(str(path), self.lit_config, self._cache)
            if suite is None:
                from .config import configure

                config = lit.TestingConfig.TestingConfig.fromdefaults(self.lit_config)
                configure(
                    config,
                    source_root=path.parent,
                    exec_root=self.exec_root,
                    settings=self._settings,
                )
                suite = lit.Test.TestSuite(
                    "mlirpipe", str(path.parent), str(self.exec_root), config
                )
                in_suite = (path.name,)
                local = config
            else:
                local = lit.discovery.getLocalConfig(
                    suite, in_suite[:-1], self.lit_config, self._cache
                )
                self._in_suites[path] = (suite, in_suite, local)
        return self._with_tmp(lit.Test.Test(suite, in_suite, local))

    def _with_tmp(self, test):
        self.tmp.apply(test.config)
        return test

    def run(self, path: Path) -> FileVerdict:
        """lit's verdict on the file; with `repeat` runs (--mlirpipe-repeat), a FAIL when what
        its commands print differs between runs."""
        if self.config.repeat <= 1:
            return self._run_once(path)
        from .repeat import left_behind, repeated

        test = self.make_test(path)
        return repeated(lambda: (self._run_once(path), left_behind(test)), self.config.repeat)

    def _run_once(self, path: Path) -> FileVerdict:
        """lit's verdict on the file. Known tools run in-process (in a forked child with
        `fork` isolation); if that child crashes, the file is run again the way lit runs it,
        with every tool a subprocess, so the verdict is lit's and the crash is reported.
        A file with no time limit whose RUN lines run no native code in-process (external
        tools and the Python FileCheck) has nothing to contain: it runs here, unforked."""
        from .. import contain
        from .expect import read_expectations

        isolation = self.config.isolation
        if isolation == "subprocess":
            return self._run_here(path, in_process=False)
        if isolation == "none" or not contain.is_available():
            return self._run_here(path, in_process=True)
        expected = read_expectations(path)
        timeout = (expected.timeout if not expected.problems else None) or self.config.timeout
        if not timeout and not expected.kind and not self._runs_native_code(path):
            return self._run_here(path, in_process=True)
        self._warm_up(path)
        # The test's own %t files as they are now: a run repeated after a crash starts from
        # them again, so what the crashed run appended cannot change the verdict.
        with TempFiles.saved(self.make_test(path)) as temp:
            ended = contain.run_contained(
                lambda: self._run_here(path, in_process=True, forked=True),
                timeout=timeout or None,
            )
            if ended.ok:
                return ended.value
            if ended.kind == "timeout":
                return _timed_out(path, ended, expected, timeout, self.config.timeout_from)
            wants_repro = ended.kind == "crashed" and expected.kind != "crash"
            temp.restore()
            repro = self._crash_repro(path, ended.notes, timeout) if wants_repro else ""
            temp.restore()
            verdict = self._run_here(path, in_process=False)
        detail = ended.detail.strip().splitlines()[-1] if ended.kind == "error" else ended.detail
        return dataclasses.replace(verdict, crash=f"{detail}{_where(ended.notes)}", repro=repro)

    def _runs_native_code(self, path: Path) -> bool:
        """Whether the file's RUN lines may run native code in this process (`mlirpipe-opt`);
        True when that cannot be told without running them."""
        test = self.make_test(path)
        if getattr(test.config.test_format, "execute_external", False):
            return False  # lit runs the RUN lines in an external shell: nothing runs here
        from .inprocess import may_bring_native_code, runs_native_code
        from .script import substituted_script

        config = test.config
        if config not in self._brings_native:
            self._brings_native[config] = may_bring_native_code(config.substitutions)
        if not self._brings_native[config] and not _may_name_native_code(path):
            return False  # neither the file nor its config's substitutions name such a tool
        script = substituted_script(test)
        return script is None or runs_native_code(script)

    def _crash_repro(self, path: Path, notes: tuple[str, ...], timeout: float) -> str:
        """After a crash in a stage: run the file once more in a child that writes that stage's
        input IR under the test's output folder (`Output/NAME.repro/`) just before running it;
        return the `mlirpipe-opt` command the child noted. Only crashes pay for this."""
        import lit.TestRunner as TestRunner

        from .. import contain
        from ..tools.opt import CrashRepro

        stage = _last_stage(notes)
        if stage is None:
            return ""
        _, tmp_base = TestRunner.getTempPaths(self.make_test(path))
        repro = CrashRepro(Path(tmp_base + REPRO_SUFFIX), stage)
        ended = contain.run_contained(
            lambda: self._run_here(path, in_process=True, forked=True, crash_repro=repro),
            timeout=timeout or None,  # the file's own limit, else the run's
        )
        found = [n for n in ended.notes if n.startswith("repro: ")]
        return found[-1][len("repro: ") :] if found else ""

    def _warm_up(self, path: Path) -> None:
        """Load, once in this process, what every forked child would otherwise load again:
        the in-process shell and the Python FileCheck, and the MLIR bindings and pipelines
        once a file names `mlirpipe` tools (a suite of external tools never pays for them).
        A module a child imports is imported (and compiled) again in every child."""
        if "filecheck" not in self._warm:
            self._warm.add("filecheck")
            import filecheck.main
            import filecheck.matcher  # noqa: F401

            from ..lowering import prefix_cache  # noqa: F401
            from . import inprocess  # noqa: F401
        if "opt" in self._warm or not _names_mlirpipe(path):
            return
        self._warm.add("opt")
        from ..errors import MissingExtra, missing_extra

        try:
            from ..lowering import stages  # noqa: F401
            from ..lowering.catalog import catalog_for
            from ..lowering.spec import PipelineSpecError
            from ..tools import opt  # noqa: F401
        except (MissingExtra, ModuleNotFoundError) as exc:
            if isinstance(exc, ModuleNotFoundError) and missing_extra(exc) is None:
                raise
            return  # the core install: the RUN lines that call them say so
        with contextlib.suppress(PipelineSpecError):  # reported by the tests that use it
            # the catalog the RUN lines will ask for: the run's folders on the search path
            catalog_for(self.config.pipeline_dirs)

    def pipeline_problems(self) -> tuple:
        """The problems of the user's pipeline files (the run's folders and those of
        $MLIRPIPE_PIPELINES_PATH); none without such folders (the shipped files are checked
        by the project's own tests)."""
        from ..lowering.pipeline_path import pipeline_dirs

        if not pipeline_dirs(self.config.pipeline_dirs):
            return ()
        from ..errors import MissingExtra
        from ..lowering.catalog import catalog_for
        from ..lowering.spec import PipelineSpecError

        try:
            problems = catalog_for(self.config.pipeline_dirs).problems
        except PipelineSpecError as exc:
            problems = exc.problems
        except MissingExtra:  # the core install: the RUN lines that use them say so
            return ()
        # a problem of no file (a pass module that does not import, a missing folder) is not
        # a broken pipeline file: the tests that meet it report it themselves
        return tuple(p for p in problems if p.location is not None)

    def _set_by_suite(self, environment: dict[str, str]) -> tuple[tuple[str, str], ...]:
        """The variables of a test's `environment` that its suite's config (or this run) set
        and this process's environment lacks or has otherwise: not lit's own (what a config
        has before its suite's), nor PATH (a reproduce line spells the programs found there),
        the temporary folder (lit's, removed at the end), where crash repros go (the test's
        Output folder) or the FileCheck shims' plumbing."""
        import lit.TestingConfig

        from ..tools.opt import REPRO_DIR_ENV
        from .external_shell import PYTHON_ENV
        from .lit_tmp import TMP_VARIABLES

        if self._lit_environment is None:
            defaults = lit.TestingConfig.TestingConfig.fromdefaults(self.lit_config)
            self._lit_environment = dict(defaults.environment)
        plumbing = {"PATH", PYTHON_ENV, REPRO_DIR_ENV, *TMP_VARIABLES}
        return tuple(
            sorted(
                (name, value)
                for name, value in environment.items()
                if os.environ.get(name) != value
                and self._lit_environment.get(name) != value
                and name not in plumbing
                and not name.startswith("MLIRPIPE_FILECHECK")
            )
        )

    def _run_here(
        self, path: Path, in_process: bool, forked: bool = False, crash_repro=None
    ) -> FileVerdict:
        """Execute the file's RUN lines with lit's internal shell and return lit's verdict.
        `crash_repro` (a tools.opt.CrashRepro) makes `mlirpipe-opt` write a stage's input."""
        import time

        import lit.Test

        from .own_config import with_own_config
        from .search_path import pipeline_search_path

        test = self.make_test(path)
        listed = self.controls.mark(test)  # $LIT_XFAIL and the like, before lit reads it
        repeating = self.config.repeat > 1
        engine = self.config.suite.filecheck
        with_chosen_filecheck(test, engine, always=repeating)
        programs = None
        if (engine or repeating) and not uses_external_shell(test):
            # FileCheck programs the suite names itself: the engine chosen, the input recorded
            from .filecheck_programs import filecheck_programs

            programs = filecheck_programs(engine, as_process=not in_process)
        search_path = (
            {} if _own_format(test) else pipeline_search_path(test.config, self.lit_config)
        )
        if search_path:  # the suite's own format: the run's pipeline folders reach it here
            with_own_config(test, **search_path)
        if repeating:  # each FileCheck the RUN lines start writes down what it was given
            from .repeat import record_filecheck_inputs

            record_filecheck_inputs(test)
        if self.config.timeout and not forked:
            # lit's own limit, which kills each command's process tree; a forked child's
            # parent enforces the limit on the child and its tree instead.
            with_own_config(test, maxIndividualTestTime=self.config.timeout)
        # only a run whose Python commands it forked has its differences (a rerun after a
        # crash, as processes, has none: the last run's are not this one's)
        preloader = self.preloader if in_process else None
        if preloader is not None:
            preloader.differences = []  # this file's alone, whether or not its lines run
            counted = (preloader.forked, preloader.fallback)
        start = time.perf_counter()
        if test.config.unsupported:
            trace = None
            result = lit.Test.Result(
                lit.Test.UNSUPPORTED, "the suite's config marks it unsupported"
            )
        else:
            # A forked child's parent enforces the time limits (see MlirShTest).
            lit_config = self._contained_lit_config if forked else self.lit_config
            with _shell(in_process, forked, crash_repro, programs, preloader) as trace:
                result = _execute(test, lit_config)
        result.elapsed = time.perf_counter() - start
        test.setResult(result)  # lit's own XFAIL/XPASS logic
        code = test.result.code
        steps = steps_of(trace.results, trace.stdins, trace.commands) if trace else ()
        disagreements = test.result.metrics.get(DISAGREEMENTS_METRIC)
        verdict = FileVerdict(
            ResultCode.of(code),
            test.result.output or "",
            code.isFailure,
            result.elapsed,
            steps,
            in_process=trace.in_process if trace else 0,
            subprocesses=trace.subprocesses if trace else 0,
            warnings=locate_disagreements(disagreements.value if disagreements else (), steps),
            search_path=test.config.environment.get("PATH", ""),
            xfail_listed=listed,
        )
        if verdict.is_failure:
            verdict = dataclasses.replace(
                verdict,
                cwd=os.path.dirname(test.getExecPath()),  # lit's, for RUN lines (execdir)
                environment=self._set_by_suite(test.config.environment),
            )
        if preloader is not None:
            verdict = dataclasses.replace(
                verdict,
                preloaded=(
                    preloader.forked - counted[0],
                    preloader.fallback - counted[1],
                    len(preloader.differences),
                ),
            )
        if preloader is not None and preloader.differences:
            from .preload_check import differs_report

            report = differs_report(preloader.differences)
            return dataclasses.replace(
                verdict, code=ResultCode.FAIL, is_failure=True, differs=report
            )
        return verdict


def _own_format(test) -> bool:
    """Whether the test's suite runs it with the project's own format (MlirShTest), which
    applies the run's settings itself; a suite that never loaded that format does not."""
    import sys

    format_module = sys.modules.get("pytest_mlirpipe.filetests.format")
    return format_module is not None and isinstance(
        test.config.test_format, format_module.MlirShTest
    )


def _may_name_native_code(path: Path) -> bool:
    """Whether the file's text may bring a tool that runs native code here into its RUN
    lines itself (a DEFINE line, a `%{readfile:...}`); True when it cannot be read."""
    from .inprocess import NATIVE_WORDS

    return _holds(path, NATIVE_WORDS, unreadable=True)


def _names_mlirpipe(path: Path) -> bool:
    """Whether the file's text names an `mlirpipe` tool (or the tools' module)."""
    return _holds(path, (b"mlirpipe",), unreadable=False)


def _holds(path: Path, words: tuple[bytes, ...], unreadable: bool) -> bool:
    """Whether the file's bytes hold one of `words` (`unreadable` when they cannot be read)."""
    try:
        text = path.read_bytes()
    except OSError:
        return unreadable
    return any(word in text for word in words)


def _lit_config(params: dict[str, str]):
    from .lit_compat import new_lit_config

    return new_lit_config(params)


@contextlib.contextmanager
def _shell(in_process: bool, forked: bool, crash_repro, programs=None, preloader=None):
    """lit's internal shell for one file, recording what its commands did; known tools run
    in-process (with a stage prefix cache) when `in_process`, and the programs `programs`
    knows (inprocess.Programs) through their tools; Python commands forked from here when a
    `preloader` (preload.Preloader) is given."""
    from ..lowering.prefix_cache import prefix_cache
    from .inprocess import in_process_tools

    with contextlib.ExitStack() as scope:
        # lit's internal shell leaves pipe files to the garbage collector.
        scope.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore", ResourceWarning)
        if in_process or programs is not None:
            tools = in_process_tools(crash_repro, programs=programs, known=in_process)
            trace = scope.enter_context(tools)
            if in_process:
                scope.enter_context(prefix_cache())
        else:
            from .shell_trace import recording

            trace = scope.enter_context(recording())
        if preloader is not None:
            from .preload import preloaded_commands

            scope.enter_context(preloaded_commands(preloader))
        if forked:
            gc.disable()  # the child exits right after; collecting would only cost
            yield trace
        else:
            with _own_garbage_collected():
                yield trace


@contextlib.contextmanager
def _own_garbage_collected():
    """Collect, at the end, the garbage the block made (lit's shell leaves pipe files to the
    collector), not the whole heap: the objects older than the block are set aside
    (`gc.freeze`) meanwhile, which costs nothing, where a full collection of a test
    process's heap costs tens of milliseconds per file."""
    gc.freeze()
    try:
        yield
        gc.collect()
    finally:
        gc.unfreeze()


def _timed_out(path: Path, ended, expected, timeout: float, run_limit: str) -> FileVerdict:
    """The verdict on a file whose contained run hit its time limit (the file's own, else
    the run's, set by `run_limit`)."""
    from .expect import judge

    limit = (
        f"MLIRPIPE-TIMEOUT at line {expected.timeout_line}"
        if expected.timeout and not expected.problems
        else run_limit
    )
    code, output = judge(
        ResultCode.TIMEOUT,
        f"no verdict after {timeout:g} s ({limit}){_where(ended.notes)}",
        expected,
        str(path),
    )
    return FileVerdict(code, output, code.is_failure, ended.seconds)


def _last_stage(notes: tuple[str, ...]) -> str | None:
    """The stage that ran last in the last RUN line (None when it ended between stages)."""
    for n in reversed(notes):
        if n.startswith("RUN"):
            return None
        if n.startswith("stage"):
            return n
    return None


def _where(notes: tuple[str, ...]) -> str:
    """', while running RUN line N (stage S of P)' from the child's last progress notes."""
    run = next((n for n in reversed(notes) if n.startswith("RUN")), None)
    stage = _last_stage(notes)
    if run is None and stage is None:
        return ""
    parts = [p for p in (run, stage) if p]
    return ", while running " + ", ".join(parts)


def _execute(test, lit_config):
    """lit's worker's way to run a test: an exception in the script (a redirect from a file
    that does not exist) is UNRESOLVED with the traceback; a tuple becomes a Result. Unlike
    lit's bare `except:`, Ctrl-C and pytest's own stop requests go through."""
    import traceback

    import lit.Test

    from .lit_compat import time_limited

    try:
        result = test.config.test_format.execute(test, time_limited(test, lit_config))
    except Exception:
        output = "Exception during script execution:\n" + traceback.format_exc() + "\n"
        return lit.Test.Result(lit.Test.UNRESOLVED, output)
    return result if isinstance(result, lit.Test.Result) else lit.Test.Result(*result)


class TempFiles:
    """A test's own temporary files (`%t`, `%t.*`, `%t/`), copied aside before an in-process
    run and put back before the file is run again after a crash. Files outside `%t` (in `%T`
    or the source folder) are not covered."""

    def __init__(self, tmp_base: str):
        self.folder = Path(tmp_base).parent
        self.prefix = Path(tmp_base).name + ".tmp"  # %t is tmp_base + ".tmp": this test's only
        self.copy: Path | None = None

    @classmethod
    @contextlib.contextmanager
    def saved(cls, test) -> Iterator[TempFiles]:
        import lit.TestRunner as TestRunner

        temp = cls(TestRunner.getTempPaths(test)[1])
        temp.save()
        try:
            yield temp
        finally:
            if temp.copy is not None:
                shutil.rmtree(temp.copy, ignore_errors=True)

    def _entries(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return [p for p in self.folder.iterdir() if p.name.startswith(self.prefix)]

    def save(self) -> None:
        entries = self._entries()
        if not entries:
            return  # the common case: nothing to copy, and restoring means deleting
        self.copy = Path(tempfile.mkdtemp(prefix=f".{self.prefix}.saved-", dir=self.folder))
        for entry in entries:
            _copy(entry, self.copy / entry.name)

    def restore(self) -> None:
        for entry in self._entries():
            _remove(entry)
        if self.copy is not None:
            for entry in self.copy.iterdir():
                _copy(entry, self.folder / entry.name)


def _copy(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
