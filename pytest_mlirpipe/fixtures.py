"""The pytest shell of execution tests: the `mlirpipe` fixture, options, the end-of-run table."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from .errors import MlirpipeError

if TYPE_CHECKING:
    from .execution.check import ModelChecker, Outcome
    from .execution.compiled_model import CompiledModel

T = TypeVar("T")

_RUN_KEY = pytest.StashKey["_ExecutionRun"]()
_OUTCOMES_KEY = "mlirpipe_execution_outcomes"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mlirpipe", "MLIR lowering-pipeline tests (pytest-mlirpipe)")
    group.addoption(
        "--mlirpipe-json",
        default=None,
        metavar="PATH",
        help="write every execution outcome (verdict, errors, timings) to PATH as JSON",
    )
    group.addoption(
        "--mlirpipe-time",
        action="store_true",
        default=None,
        help="time each execution case against torch eager (ini: mlirpipe_time)",
    )
    group.addoption(
        "--mlirpipe-threads",
        type=int,
        default=None,
        metavar="N",
        help="threads for torch and the BLAS while timing (ini: mlirpipe_threads, default 1)",
    )
    group.addoption(
        "--mlirpipe-mode",
        default=None,
        choices=["jit", "aot"],
        help="native code by ExecutionEngine JIT or as a linked shared library "
        "(ini: mlirpipe_mode, default jit)",
    )
    group.addoption(
        "--mlirpipe-cache-dir",
        default=None,
        metavar="DIR",
        help="where compiled artifacts are kept (ini: mlirpipe_cache_dir; default "
        "$MLIRPIPE_CACHE_DIR or ~/.cache/pytest-mlirpipe/artifacts)",
    )
    group.addoption(
        "--mlirpipe-no-cache",
        action="store_true",
        default=False,
        help="compile every execution case afresh",
    )
    parser.addini("mlirpipe_time", "time execution cases against torch", type="bool", default=False)
    parser.addini(
        "mlirpipe_threads", "threads for torch and the BLAS library while timing", default="1"
    )
    parser.addini("mlirpipe_mode", "jit or aot", default="jit")
    parser.addini("mlirpipe_cache_dir", "directory of compiled artifacts", default="")


class _ExecutionRun:
    """Per-run state: the model checker (built on first use) and outcomes merged from workers."""

    def __init__(self, config: pytest.Config):
        from .errors import Problem, UsageError

        self.config = config
        threads_text = config.getoption("mlirpipe_threads") or config.getini("mlirpipe_threads")
        try:
            self.threads = int(threads_text)
            if self.threads < 1:
                raise ValueError
        except ValueError:
            raise pytest.UsageError(
                UsageError(
                    Problem(
                        f"mlirpipe_threads must be a positive integer, not '{threads_text}'",
                        hint="e.g. --mlirpipe-threads 2",
                    )
                ).format()
            ) from None
        self.mode = config.getoption("mlirpipe_mode") or config.getini("mlirpipe_mode")
        if self.mode not in ("jit", "aot"):
            raise pytest.UsageError(
                f"error: mlirpipe_mode must be 'jit' or 'aot', not '{self.mode}'"
            )
        opt_time = config.getoption("mlirpipe_time")
        self.time = bool(config.getini("mlirpipe_time") if opt_time is None else opt_time)
        self.json_path = config.getoption("mlirpipe_json")
        self.worker_rows: list[dict[str, Any]] = []
        self._checker = None

    @property
    def checker(self) -> ModelChecker:
        if self._checker is None:
            from .execution.cache import default_cache_dir
            from .execution.check import ModelChecker
            from .execution.timing import TimingConfig

            cache_dir = None
            if not self.config.getoption("mlirpipe_no_cache"):
                cache_dir = (
                    self.config.getoption("mlirpipe_cache_dir")
                    or self.config.getini("mlirpipe_cache_dir")
                    or default_cache_dir()
                )
            dirs = list(_option(self.config, "mlirpipe_pipelines", []))
            dirs += [str(p) for p in _ini(self.config, "mlirpipe_pipelines", [])]
            self._checker = ModelChecker(
                pipeline_dirs=dirs,
                cache_dir=cache_dir,
                timing=TimingConfig(threads=self.threads) if self.time else None,
                mode=self.mode,
                isolation=_isolation(self.config),
                timeout=_timeout(self.config),
            )
        return self._checker

    def rows(self) -> list[dict[str, Any]]:
        from .execution.report import outcome_to_dict

        own = [outcome_to_dict(o) for o in self._checker.outcomes] if self._checker else []
        return own + self.worker_rows


def _option(config: pytest.Config, name: str, default: Any) -> Any:
    try:
        return config.getoption(name) or default
    except ValueError:
        return default


def _ini(config: pytest.Config, name: str, default: Any) -> Any:
    try:
        return config.getini(name) or default
    except ValueError:
        return default


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RUN_KEY] = _ExecutionRun(config)
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
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the rows to the controller
        workeroutput[_OUTCOMES_KEY] = run.rows()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash.get(_RUN_KEY, None)
    if run is None or getattr(config, "workeroutput", None) is not None:
        return
    from .execution.report import format_side_by_side, format_table, write_json

    rows = run.rows()
    if rows:
        terminalreporter.section("mlirpipe execution")
        terminalreporter.write_line(format_table(rows))
        side_by_side = format_side_by_side(rows)
        if side_by_side:
            terminalreporter.section("mlirpipe execution: pipelines side by side")
            terminalreporter.write_line(side_by_side)
    if run.json_path:
        write_json(run.json_path, rows)
        terminalreporter.write_line(
            f"mlirpipe: wrote {len(rows)} execution outcomes to {run.json_path}"
        )


def _isolation(config: pytest.Config) -> str:
    """The IR tests' isolation setting (checked by the plugin); `subprocess` means the same as
    `fork` here: compiled code first runs in a child."""
    value = config.getoption("--mlirpipe-isolation", None) or config.getini("mlirpipe_isolation")
    return "none" if value == "none" else "fork"


def _timeout(config: pytest.Config) -> float:
    value = config.getoption("--mlirpipe-timeout", None) or config.getini("mlirpipe_timeout")
    try:
        return max(0.0, float(value))
    except ValueError:
        return 0.0  # the plugin rejects it with a message


class MlirpipeFixture:
    """What the `mlirpipe` fixture gives a test: check(), compile(), and the model checker."""

    def __init__(self, run: _ExecutionRun, nodeid: str):
        self._run = run
        self._nodeid = nodeid

    @property
    def checker(self) -> ModelChecker:
        return self._run.checker

    def check(self, model: Any, *inputs: Any, **options: Any) -> list[Outcome]:
        """`ModelChecker.check` (same options), named after the test unless given a name:
        compile `model` through each pipeline, run it on `inputs`, compare with torch eager.

        Fails the test with the mismatch report of every failing pipeline.
        """
        __tracebackhide__ = True
        if options.get("name") is None:
            options["name"] = self._nodeid.split("::")[-1]
        return _or_fail(lambda: self.checker.check(model, *inputs, **options))

    def compile(self, model: Any, *inputs: Any, **options: Any) -> CompiledModel:
        """`ModelChecker.compile` (same options): the model compiled through `pipeline`, a
        callable taking arrays or tensors."""
        __tracebackhide__ = True
        return _or_fail(lambda: self.checker.compile(model, *inputs, **options))


def _or_fail(step: Callable[[], T]) -> T:
    """`step()`, or the test failed with the report of our own error (no traceback)."""
    __tracebackhide__ = True
    try:
        return step()
    except MlirpipeError as exc:
        failure = exc.format()
    pytest.fail(failure, pytrace=False)  # outside the except block: no chained traceback


@pytest.fixture
def mlirpipe(request: pytest.FixtureRequest) -> MlirpipeFixture:
    """Compile models through MLIR pipelines and check them against torch eager."""
    return MlirpipeFixture(request.config.stash[_RUN_KEY], request.node.nodeid)


__all__ = ["MlirpipeFixture", "mlirpipe"]
