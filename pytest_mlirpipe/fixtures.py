"""The pytest shell of execution tests: the `mlirpipe` fixture, options, the end-of-run table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from .errors import MlirpipeError
from .options import EXECUTION_OPTIONS, RunConfig, add_pytest_options
from .plugin import run_config

_SESSION = pytest.StashKey["_ExecutionRun"]()
_OUTCOMES_KEY = "mlirpipe_execution_outcomes"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_pytest_options(parser, EXECUTION_OPTIONS)


class _ExecutionRun:
    """Per-run state: the session (built on first use) and outcomes merged from workers."""

    def __init__(self, options: RunConfig):
        self.options = options
        self.json_path = options.json_path
        self.worker_rows: list[dict[str, Any]] = []
        self._session = None

    @property
    def session(self):
        if self._session is None:
            from .execution.cache import default_cache_dir
            from .execution.session import ExecutionSession
            from .execution.timing import TimingConfig

            options = self.options
            cache_dir = None if options.no_cache else options.cache_dir or default_cache_dir()
            self._session = ExecutionSession(
                pipeline_dirs=list(options.pipeline_dirs),
                cache_dir=cache_dir,
                timing=TimingConfig(threads=options.threads) if options.time else None,
                mode=options.mode,
                isolation=_isolation(options),
                timeout=options.timeout,
            )
        return self._session

    def rows(self) -> list[dict[str, Any]]:
        from .execution.report import outcome_to_dict

        own = [outcome_to_dict(o) for o in self._session.outcomes] if self._session else []
        return own + self.worker_rows


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SESSION] = _ExecutionRun(run_config(config))
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistMerge(config), "mlirpipe-execution-xdist")


class _XdistMerge:
    """Outcomes travel from xdist workers to the controller in `workeroutput`."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        rows = getattr(node, "workeroutput", {}).get(_OUTCOMES_KEY, [])
        self.config.stash[_SESSION].worker_rows.extend(rows)


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = session.config.stash.get(_SESSION, None)
    if run is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the rows to the controller
        workeroutput[_OUTCOMES_KEY] = run.rows()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash.get(_SESSION, None)
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


def _isolation(options: RunConfig) -> str:
    """The IR tests' isolation setting; `subprocess` means the same as `fork` here: compiled
    code first runs in a child."""
    return "none" if options.isolation == "none" else "fork"


class MlirpipeFixture:
    """What the `mlirpipe` fixture gives a test: check(), compile(), and the session."""

    def __init__(self, run: _ExecutionRun, nodeid: str):
        self._run = run
        self._nodeid = nodeid

    @property
    def session(self):
        return self._run.session

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
    ):
        """Compile `model` through each pipeline, run it on `inputs`, compare with torch eager.

        Fails the test with the mismatch report of every failing pipeline.
        """
        __tracebackhide__ = True
        case = name or self._nodeid.split("::")[-1]
        failure = None
        try:
            outcomes = self.session.check(
                model,
                *inputs,
                pipelines=pipelines,
                rtol=rtol,
                atol=atol,
                reference=reference,
                name=case,
                flops=flops,
                mode=mode,
            )
        except MlirpipeError as exc:
            failure = exc.format()
        if failure is not None:  # outside the except block: no chained traceback
            pytest.fail(failure, pytrace=False)
        return outcomes

    def compile(
        self, model: Any, *inputs: Any, pipeline: str = "refbackend", mode: str | None = None
    ):
        """The model compiled through `pipeline`: a callable taking arrays or tensors."""
        __tracebackhide__ = True
        failure = None
        try:
            return self.session.compile(model, *inputs, pipeline=pipeline, mode=mode)
        except MlirpipeError as exc:
            failure = exc.format()
        pytest.fail(failure, pytrace=False)


@pytest.fixture
def mlirpipe(request: pytest.FixtureRequest) -> MlirpipeFixture:
    """Compile models through MLIR pipelines and check them against torch eager."""
    return MlirpipeFixture(request.config.stash[_SESSION], request.node.nodeid)


__all__ = ["MlirpipeFixture", "mlirpipe"]
