"""The pytest shell of execution tests: the `mlirpipe` fixture, options, the end-of-run table."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from .errors import MissingExtra, MlirpipeError, Problem, missing_extra
from .execution.workdir import TorchCache
from .model import ExecutionVerdict
from .options import EXECUTION_OPTIONS, RunConfig, add_pytest_options
from .plugin import run_config

if TYPE_CHECKING:
    from .execution.check import ModelChecker, Outcome
    from .execution.native.compiled_model import CompiledModel

T = TypeVar("T")

_RUN_KEY = pytest.StashKey["_ExecutionRun"]()
_OUTCOMES_KEY = "mlirpipe_execution_outcomes"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_pytest_options(parser, EXECUTION_OPTIONS)


class _ExecutionRun:
    """Per-run state: the model checker (built on first use) and outcomes merged from workers."""

    def __init__(self, options: RunConfig):
        self.options = options
        self.json_path = options.json_path
        self.worker_rows: list[dict[str, Any]] = []
        self.tests: dict[int, str] = {}  # index in the checker's outcomes -> the test's node id
        self.verdict: tuple[int, str] | None = None  # of --mlirpipe-compare
        self.baseline: dict[str, Any] = {}  # its report, read at configure time
        self._checker: ModelChecker | None = None
        self.torch_cache = TorchCache()

    @property
    def checker(self) -> ModelChecker:
        if self._checker is None:
            from .execution.cache import default_cache_dir
            from .execution.check import ModelChecker
            from .execution.results.timing import TimingConfig

            options = self.options
            cache_dir = None if options.no_cache else options.cache_dir or default_cache_dir()
            self._checker = ModelChecker(
                pipeline_dirs=list(options.pipeline_dirs),
                cache_dir=cache_dir,
                timing=TimingConfig(threads=options.threads) if options.time else None,
                mode=options.mode,
                isolation=_isolation(options),
                timeout=options.timeout,
                timeout_from=options.timeout_from,
                bisect=options.bisect,
            )
        return self._checker

    def close(self) -> None:
        """Remove the checker's private build folder (tests build under their tmp_path)."""
        if self._checker is not None:
            self._checker.close()

    def rows(self) -> list[dict[str, Any]]:
        from .execution.results.report import outcome_to_dict

        own = []
        for i, o in enumerate(self._checker.outcomes if self._checker else ()):
            row = outcome_to_dict(o)
            if i in self.tests:
                row["test"] = self.tests[i]
            own.append(row)
        return own + self.worker_rows


def pytest_configure(config: pytest.Config) -> None:
    run = config.stash[_RUN_KEY] = _ExecutionRun(run_config(config))
    run.torch_cache.open()  # before a test imports torch._dynamo; xdist workers inherit it
    if run.options.compare_path and not hasattr(config, "workerinput"):
        run.baseline = _read_baseline(run.options.compare_path)  # before anything runs
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistMerge(config), "mlirpipe-execution-xdist")


class _XdistMerge:
    """Outcomes travel from xdist workers to the controller in `workeroutput`."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        rows = getattr(node, "workeroutput", {}).get(_OUTCOMES_KEY, [])
        self.config.stash[_RUN_KEY].worker_rows.extend(rows)


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = session.config.stash.get(_RUN_KEY, None)
    if run is None:
        return
    run.close()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the rows to the controller
        workeroutput[_OUTCOMES_KEY] = run.rows()
    elif run.options.compare_path:
        run.verdict = _compare(session.config, run)
        if run.verdict[0] and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = run.verdict[0]


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN_KEY, None)
    if run is not None:
        run.torch_cache.close()


def _file_timings(config: pytest.Config) -> dict[str, dict[str, Any]]:
    order = config.pluginmanager.get_plugin("mlirpipe-order")
    return order.file_timings() if order is not None else {}


COMPARE_HINT = "name the timing report of an earlier run (pytest --mlirpipe-json=PATH writes one)"


def _read_baseline(path: str) -> dict[str, Any]:
    """The --mlirpipe-compare report; one that cannot be read stops the run at once."""
    from .errors import UsageError
    from .execution.results.report import read_report

    try:
        return read_report(Path(path))
    except UsageError as exc:
        text = exc.format()
        hint = "" if "\n  hint: " in text else f"\n  hint: {COMPARE_HINT}"
        raise pytest.UsageError(f"mlirpipe: --mlirpipe-compare {path}: {text}{hint}") from None


def _compare(config: pytest.Config, run: _ExecutionRun) -> tuple[int, str]:
    """(exit status, message) of this run's timings against the --mlirpipe-compare report."""
    from .execution.results.baseline import compare, format_comparison

    path, threshold = run.options.compare_path, run.options.compare_threshold
    assert path is not None  # called only with --mlirpipe-compare
    current = {"files": _file_timings(config), "results": run.rows()}
    result = compare(run.baseline, current, threshold)
    status = pytest.ExitCode.TESTS_FAILED if result.slower else pytest.ExitCode.OK
    return status, format_comparison(result, path, threshold)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash.get(_RUN_KEY, None)
    if run is None or getattr(config, "workeroutput", None) is not None:
        return
    rows = run.rows()
    if (rows and run.options.time) or run.json_path:
        from .execution.results.report import format_side_by_side, format_table, write_json
    if rows and run.options.time:
        terminalreporter.section("mlirpipe execution")
        terminalreporter.write_line(format_table(rows))
        side_by_side = format_side_by_side(rows)
        if side_by_side:
            terminalreporter.section("mlirpipe execution: pipelines side by side")
            terminalreporter.write_line(side_by_side)
    elif rows:
        terminalreporter.write_line(execution_summary(rows))
    if run.json_path:
        files = _file_timings(config)
        try:
            write_json(run.json_path, rows, files)
        except OSError as exc:  # never name the temporary file the report is written to first
            terminalreporter.write_line(
                f"mlirpipe: error: cannot write the timing report {run.json_path}: {exc.strerror}",
                red=True,
            )
        else:
            terminalreporter.write_line(
                f"mlirpipe: wrote {len(rows)} execution outcomes and {len(files)} file "
                f"timings to {run.json_path}"
            )
    if run.verdict is not None:
        terminalreporter.write_line(run.verdict[1])


def execution_summary(rows: list[dict[str, Any]]) -> str:
    """One line for an untimed run: how many case x pipeline checks ended how."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    ended = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    return f"mlirpipe: {len(rows)} execution checks ({ended}); --mlirpipe-time for the table"


def _isolation(options: RunConfig) -> str:
    """The IR tests' isolation setting; `subprocess` means the same as `fork` here: compiled
    code first runs in a child."""
    return "none" if options.isolation == "none" else "fork"


class MlirpipeFixture:
    """What the `mlirpipe` fixture gives a test: check(), compile(), and the model checker.

    Shared libraries and repro files go under the test's own `tmp_path`."""

    def __init__(
        self,
        run: _ExecutionRun,
        nodeid: str,
        work_dir: Path,
        root: Path | None = None,
        item: pytest.Item | None = None,
    ):
        self._run = run
        self._nodeid = nodeid
        self._work_dir = work_dir
        self._root = root  # caller locations are shown relative to it
        self._item = item  # the test: its listed failures (--mlirpipe-expectations)

    @property
    def checker(self) -> ModelChecker:
        return _or_fail(lambda: self._run.checker)  # without its extra: skipped, saying so

    def check(
        self,
        model: Any,
        *inputs: Any,
        pipelines: Sequence[str] | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        reference: Callable[..., Any] | None = None,
        name: str | None = None,
        flops: float | None = None,
        mode: str | None = None,
        per_dtype: Mapping[str, tuple[float, float]] | None = None,
        time_it: bool | None = None,
        work_dir: Path | str | None = None,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        import_profile: str | None = None,
        bisect: bool | None = None,
    ) -> list[Outcome]:
        """`ModelChecker.check` (same options), named after the test unless given a `name`,
        building under the test's `tmp_path` unless given a `work_dir`: compile `model`
        through each pipeline, run it on `inputs`, compare with torch eager.

        Fails the test with the mismatch report of every failing pipeline, except the
        pipelines of this test that --mlirpipe-expectations lists: their failures make the
        test an xfail when it ends, and one of them that passes fails it here.
        """
        __tracebackhide__ = True
        where = _caller(self._root)
        # what `mlirpipe run` would check differently by (None: not given); it has flags for
        # the first three (shown in this order), and for the others no run line is shown
        differs = {
            "atol": atol,
            "rtol": rtol,
            "mode": mode,
            "reference": reference,
            "per_dtype": per_dtype,
            "backend_legal_ops": backend_legal_ops or None,
            "decompositions": decompositions,
            "import_profile": import_profile,
        }
        return _or_fail(
            lambda: self._checked(
                model,
                inputs,
                {
                    "pipelines": pipelines,
                    "rtol": rtol,
                    "atol": atol,
                    "reference": reference,
                    "name": self._nodeid.split("::")[-1] if name is None else name,
                    "flops": flops,
                    "mode": mode,
                    "per_dtype": per_dtype,
                    "time_it": time_it,
                    "work_dir": self._work_dir if work_dir is None else work_dir,
                    "backend_legal_ops": backend_legal_ops,
                    "decompositions": decompositions,
                    "import_profile": import_profile,
                    "bisect": bisect,
                },
            ),
            where,
            lambda exc: _run_line(exc, model, inputs, differs, self._root, self.checker),
        )

    def _checked(self, model: Any, inputs: tuple[Any, ...], options: dict[str, Any]):
        """The checker's outcomes, kept with this test's node id. With an expectations file,
        the failures of this test's listed pipelines do not fail the check (they make the test
        an xfail when it ends), and a listed pipeline that passes does."""
        from .execution.check import ExecutionMismatch
        from .expectations_plugin import listed_pipelines, note_checked, xpass_message

        first = len(self.checker.outcomes)
        try:
            outcomes = list(self.checker.check(model, *inputs, **options))
            mismatch = None
        except ExecutionMismatch as exc:
            outcomes, mismatch = list(exc.outcomes), exc
        finally:
            for i in range(first, len(self.checker.outcomes)):
                self._run.tests[i] = self._nodeid
        item = self._item
        listed = listed_pipelines(item.config, self._nodeid) if item else {}
        if item is None or not listed:
            if mismatch is not None:
                raise mismatch
            return outcomes
        judged = [(listed[o.pipeline], o) for o in outcomes if o.pipeline in listed]
        note_checked(
            item,
            [o.pipeline for o in outcomes],
            [e for e, o in judged if o.verdict.is_failure],
        )
        passing = [
            Problem(xpass_message(e)) for e, o in judged if o.verdict is ExecutionVerdict.PASS
        ]
        unlisted = [o for o in outcomes if o.pipeline not in listed]
        if passing or any(o.verdict.is_failure for o in unlisted):
            raise ExecutionMismatch(outcomes[0].case, unlisted, passing)
        return outcomes

    def compile(
        self,
        model: Any,
        *inputs: Any,
        pipeline: str = "refbackend",
        mode: str | None = None,
        work_dir: Path | str | None = None,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        import_profile: str | None = None,
    ) -> CompiledModel:
        """`ModelChecker.compile` (same options), building under the test's `tmp_path` unless
        given a `work_dir`: the model compiled through `pipeline`, a callable taking arrays or
        tensors."""
        __tracebackhide__ = True
        where = _caller(self._root)
        return _or_fail(
            lambda: self.checker.compile(
                model,
                *inputs,
                pipeline=pipeline,
                mode=mode,
                work_dir=self._work_dir if work_dir is None else work_dir,
                backend_legal_ops=backend_legal_ops,
                decompositions=decompositions,
                import_profile=import_profile,
            ),
            where,
        )


def _or_fail(
    step: Callable[[], T],
    where: str = "",
    more: Callable[[MlirpipeError], str] | None = None,
) -> T:
    """`step()`, or the test failed with the report of our own error (no traceback), each
    error line located at `where`, the call in the test, and the lines `more` adds. A step
    that needs an extra of the package that is not installed skips the test, saying which."""
    __tracebackhide__ = True
    unsupported = ""
    try:
        return step()
    except ModuleNotFoundError as exc:
        missing = missing_extra(exc)
        if missing is None:
            raise
        unsupported = missing.format()
    except MissingExtra as exc:
        unsupported = exc.format()
    except MlirpipeError as exc:
        failure = exc.format()
        extra = more(exc) if more is not None else ""
    if unsupported:  # UNSUPPORTED, as lit says of a test whose requirements are missing
        pytest.skip(unsupported)  # pytest shows it at the test's own file:line
    if extra:
        failure += "\n" + extra
    if where:
        lines = failure.splitlines()
        failure = "\n".join(f"{where}: {x}" if x.startswith("error: ") else x for x in lines)
    pytest.fail(failure, pytrace=False)  # outside the except block: no chained traceback


def _run_line(
    exc: MlirpipeError,
    model: Any,
    inputs: tuple[Any, ...],
    differs: dict[str, Any],
    root: Path | None,
    checker: ModelChecker,
) -> str:
    """The `mlirpipe run` command that checks the model again outside pytest, for pipelines
    with wrong results, when there is one (see model_file.run_command)."""
    from .execution.check import ExecutionMismatch
    from .execution.model_file import run_command

    if not isinstance(exc, ExecutionMismatch):
        return ""
    wrong = [o.pipeline for o in exc.outcomes if o.verdict.is_failure and o.comparison]
    if not wrong:
        return ""
    command = run_command(model, inputs, wrong, root, differs, checker.commands())
    if command is None:
        return ""
    return f"  check it again outside pytest (seeded random inputs of these shapes): {command}"


def _caller(root: Path | None) -> str:
    """`file:line` of the call into the fixture: the first frame outside this package (a
    test may call check() several times, or through helpers of its own)."""
    from .callers import outside

    frame, _ = outside(sys._getframe(1))
    if frame is None:
        return ""
    path = Path(frame.f_code.co_filename)
    if root is not None and path.is_relative_to(root):
        path = path.relative_to(root)
    return f"{path}:{frame.f_lineno}"


@pytest.fixture
def mlirpipe(request: pytest.FixtureRequest, tmp_path: Path) -> MlirpipeFixture:
    """Compile models through MLIR pipelines and check them against torch eager."""
    config = request.config
    run = config.stash[_RUN_KEY]
    return MlirpipeFixture(run, request.node.nodeid, tmp_path, config.rootpath, request.node)


__all__ = ["MlirpipeFixture", "mlirpipe"]
