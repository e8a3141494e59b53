"""Run one RUN/CHECK file exactly as lit would: lit's discovery, parser, shell and verdicts."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import re
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from .config import configure


@dataclass(frozen=True, slots=True)
class CommandResult:
    """One command of a RUN line as the shell ran it (after substitutions)."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    stdin: str | None = None  # known when the command ran in-process


@dataclass(frozen=True, slots=True)
class RunStep:
    """One RUN line: its line number, the command after substitutions, what its commands did."""

    line: int | None
    command: str
    results: tuple[CommandResult, ...]

    @property
    def failed(self) -> bool:
        return any(r.exit_code != 0 for r in self.results)


@dataclass(frozen=True, slots=True)
class FileVerdict:
    """lit's verdict on one file: code name (PASS, FAIL, XFAIL, ...), its output, and the RUN
    lines as run (for reports)."""

    code: str
    output: str
    is_failure: bool
    elapsed: float | None = None
    steps: tuple[RunStep, ...] = ()
    crash: str = ""  # how the in-process run ended when it did not return (signal, status)
    repro: str = ""  # after a crash: the mlirpipe-opt command on the crashing stage's input
    in_process: int = 0  # pipelines run inside the process
    subprocesses: int = 0  # pipelines run as processes


_RUN_AT = re.compile(r"^# (?:RUN: at line (\d+)|.*)$")


def steps_of(results, stdins: dict[int, str] | None = None) -> tuple[RunStep, ...]:
    """Group lit's ShellCommandResults (`@echo '# RUN: at line N'`, `@echo CMD`, then the
    command's own results) into RUN lines."""
    steps: list[RunStep] = []
    line: int | None = None
    command: str | None = None
    own: list[CommandResult] = []

    def flush() -> None:
        if command is not None:
            steps.append(RunStep(line, command, tuple(own)))

    for r in results or ():
        args = [str(a) for a in r.command.args]
        if args and args[0] == "@echo":
            text = (r.stdout or "").rstrip("\n")
            m = _RUN_AT.match(text)
            if m and text.startswith("# "):
                flush()
                line = int(m.group(1)) if m.group(1) else None
                command, own = None, []
            elif command is None:
                command = text
            continue
        stdin = (stdins or {}).get(id(r))
        own.append(CommandResult(tuple(args), int(r.exitCode or 0), r.stdout, r.stderr, stdin))
    flush()
    return tuple(steps)


class LitSession:
    """lit's LitConfig plus a cache of discovered suites, shared by all files of a run."""

    def __init__(
        self,
        exec_root: str | os.PathLike,
        params: dict[str, str] | None = None,
        isolation: str = "fork",
        timeout: float = 0.0,
        settings=None,  # options.SuiteSettings for files outside any lit suite
    ):
        import lit.LitConfig

        self.exec_root = Path(exec_root).resolve()  # lit wants absolute paths
        self.isolation = isolation
        self.settings = settings
        self.timeout = timeout
        self.lit_config = lit.LitConfig.LitConfig(
            progname="pytest-mlirpipe",
            path=[],
            diagnostic_level="error",
            useValgrind=False,
            valgrindLeakCheck=False,
            valgrindArgs=[],
            noExecute=False,
            debug=False,
            isWindows=False,
            order="lexical",
            params=dict(params or {}),
        )
        self._cache: dict = {}
        self._warm = False
        self._lock = threading.Lock()

    def make_test(self, path: Path):
        """lit's Test for `path`: the suite of the nearest lit.cfg.py, else our default config."""
        import lit.discovery
        import lit.Test
        import lit.TestingConfig

        with self._lock:
            suite, in_suite = lit.discovery.getTestSuite(str(path), self.lit_config, self._cache)
            if suite is None:
                config = lit.TestingConfig.TestingConfig.fromdefaults(self.lit_config)
                configure(
                    config,
                    source_root=path.parent,
                    exec_root=self.exec_root,
                    settings=self.settings,
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
        return lit.Test.Test(suite, in_suite, local)

    def run(self, path: Path) -> FileVerdict:
        """lit's verdict on the file. Known tools run in-process (in a forked child with
        `fork` isolation); if that child crashes, the file is run again the way lit runs it,
        with every tool a subprocess, so the verdict is lit's and the crash is reported."""
        from .. import contain

        if self.isolation == "subprocess":
            return self._run_here(path, in_process=False)
        if self.isolation == "none" or not contain.is_available():
            return self._run_here(path, in_process=True)
        from .expect import judge, read_expectations

        self.make_test(path)  # warm the suite cache before forking: children inherit it
        self._warm_up()
        expected = read_expectations(path)
        timeout = (expected.timeout if not expected.problems else None) or self.timeout
        ended = contain.run_contained(
            lambda: self._run_here(path, in_process=True, forked=True),
            timeout=timeout or None,
        )
        if ended.ok:
            return ended.value
        where = _where(ended.notes)
        if ended.kind == "timeout":
            limit = (
                f"MLIRPIPE-TIMEOUT at line {expected.timeout_line}"
                if expected.timeout and not expected.problems
                else "mlirpipe_timeout"
            )
            code, output = judge(
                "TIMEOUT",
                f"no verdict after {timeout:g} s ({limit}){where}",
                expected,
                str(path),
            )
            return FileVerdict(code, output, code == "TIMEOUT", ended.seconds)
        wants_repro = ended.kind == "crashed" and expected.kind != "crash"
        repro = self._crash_repro(path, ended.notes) if wants_repro else ""
        verdict = self._run_here(path, in_process=False)
        detail = ended.detail.strip().splitlines()[-1] if ended.kind == "error" else ended.detail
        return dataclasses.replace(verdict, crash=f"{detail}{where}", repro=repro)

    def _crash_repro(self, path: Path, notes: tuple[str, ...]) -> str:
        """After a crash in a stage: run the file once more in a child that writes that stage's
        input IR under the test's output folder (`Output/NAME.repro/`) just before running it;
        return the `mlirpipe-opt` command the child noted. Only crashes pay for this."""
        import lit.TestRunner as TestRunner

        from .. import contain
        from ..tools import opt

        stage = _last_stage(notes)
        if stage is None:
            return ""
        _, tmp_base = TestRunner.getTempPaths(self.make_test(path))
        directory = Path(tmp_base + ".repro")

        def rerun() -> None:
            with opt.writing_crash_repro(directory, stage):
                self._run_here(path, in_process=True, forked=True)

        ended = contain.run_contained(rerun, timeout=self.timeout or None)
        found = [n for n in ended.notes if n.startswith("repro: ")]
        return found[-1][len("repro: ") :] if found else ""

    def _warm_up(self) -> None:
        """Load, once in this process, what every forked child would otherwise load again."""
        if self._warm:
            return
        self._warm = True
        import filecheck.main
        import filecheck.matcher  # noqa: F401

        from ..lowering import stages  # noqa: F401
        from ..lowering.catalog import catalog_for
        from ..lowering.spec import PipelineSpecError
        from ..tools import opt  # noqa: F401

        with contextlib.suppress(PipelineSpecError):  # reported by the tests that use it
            catalog_for([])

    def _run_here(self, path: Path, in_process: bool, forked: bool = False) -> FileVerdict:
        """Execute the file's RUN lines with lit's internal shell and return lit's verdict."""
        import time

        import lit.Test

        from ..lowering.prefix_cache import prefix_cache
        from .inprocess import ShellTrace, in_process_tools

        test = self.make_test(path)
        if forked:  # this child's parent enforces time limits (see MlirShTest)
            self.lit_config.mlirpipe_contained = True
        if self.timeout and not in_process:
            test.config.maxIndividualTestTime = self.timeout
        start = time.perf_counter()
        trace = ShellTrace()
        if test.config.unsupported:
            result = lit.Test.Result(
                lit.Test.UNSUPPORTED, "the suite's config marks it unsupported"
            )
        else:
            with contextlib.ExitStack() as scope:
                # lit's internal shell leaves pipe files to the garbage collector.
                scope.enter_context(warnings.catch_warnings())
                warnings.simplefilter("ignore", ResourceWarning)
                if in_process:
                    trace = scope.enter_context(in_process_tools())
                    scope.enter_context(prefix_cache())
                else:
                    trace = scope.enter_context(_recording())
                if forked:
                    gc.disable()  # the child exits right after; collecting would only cost
                result = test.config.test_format.execute(test, self.lit_config)
                if not forked:
                    gc.collect()
            if isinstance(result, tuple):
                result = lit.Test.Result(*result)
        result.elapsed = time.perf_counter() - start
        test.setResult(result)  # lit's own XFAIL/XPASS logic
        code = test.result.code
        return FileVerdict(
            code.name,
            test.result.output or "",
            code.isFailure,
            result.elapsed,
            steps_of(trace.results, trace.stdins),
            in_process=trace.in_process,
            subprocesses=trace.subprocesses,
        )


@contextlib.contextmanager
def _recording():
    """Keep the command results of lit's shell (tools stay subprocesses)."""
    import lit.TestRunner as TestRunner

    from .inprocess import ShellTrace

    original = TestRunner.executeShCmd
    trace = ShellTrace()

    def execute_top(cmd, shenv, results, timeout=0):
        trace.results = results
        return original(cmd, shenv, results, timeout)

    TestRunner.executeShCmd = execute_top
    try:
        yield trace
    finally:
        TestRunner.executeShCmd = original


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
    stage = None
    for n in reversed(notes):
        if n.startswith("RUN"):
            break
        if n.startswith("stage"):
            stage = n
            break
    if run is None and stage is None:
        return ""
    parts = [p for p in (run, stage) if p]
    return ", while running " + ", ".join(parts)
