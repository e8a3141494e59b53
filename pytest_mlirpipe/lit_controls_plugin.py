"""lit's own controls under pytest: $LIT_FILTER deselects, --max-failures stops the run."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Generator

import pytest

from .filetests.lit_controls import LitControls, LitControlsError, read_lit_controls
from .items import MlirItem
from .options import RunConfig

CONTROLS_KEY = pytest.StashKey[LitControls]()


def configure(config: pytest.Config, lit_name: Callable[[MlirItem], str]) -> LitControls:
    """Read lit's controls from the environment once per process (each xdist worker reads the
    same environment and deselects the same files); a value lit rejects stops the run."""
    try:
        controls = read_lit_controls(os.environ)
    except LitControlsError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[CONTROLS_KEY] = controls
    if controls.max_failures and not config.getoption("maxfail"):  # -x / --maxfail win
        config.option.maxfail = controls.max_failures
    if controls.filters or controls.not_applying:
        config.pluginmanager.register(LitSelection(controls, lit_name), "mlirpipe-lit-controls")
    return controls


def runner_config(config: pytest.Config, run: RunConfig) -> RunConfig:
    """The RunConfig of the file tests: $LIT_OPTS' --timeout when the run sets no limit of its
    own (--mlirpipe-timeout, mlirpipe_timeout)."""
    controls = config.stash.get(CONTROLS_KEY, LitControls())
    given = config.getoption("--mlirpipe-timeout", None) is not None
    if controls.timeout and not run.timeout and not given:
        return dataclasses.replace(
            run, timeout=float(controls.timeout), timeout_from="LIT_OPTS --timeout"
        )
    return run


def not_applying_notice(names: tuple[str, ...]) -> str:
    return (
        f"mlirpipe: LIT_OPTS: {', '.join(names)} "
        f"{'does' if len(names) == 1 else 'do'} not apply under pytest (ignored)"
    )


def no_test_left_notice(env) -> str:
    given = " ".join(
        f"{name}={env[name]!r}"
        for name in ("LIT_FILTER", "LIT_FILTER_OUT", "LIT_OPTS")
        if env.get(name)
    )
    return (
        f"mlirpipe: no test is left after lit's filters ({given}); lit stops there with "
        "'filter did not match any tests' (status 2)"
    )


class LitSelection:
    """A pytest plugin object: deselects the RUN/CHECK files lit's filters leave out (as -k
    does; before sharding, as lit filters before it shards), and names once the options of
    $LIT_OPTS that do not apply."""

    def __init__(self, controls: LitControls, lit_name: Callable[[MlirItem], str]):
        self.controls, self.lit_name = controls, lit_name
        # whether the filters left none of the lit tests collected here (None: this process
        # collected none, as xdist's controller)
        self.emptied: bool | None = None

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        if not self.controls.filters:
            return
        files = [i for i in items if isinstance(i, MlirItem)]
        dropped = [i for i in files if not self.controls.selects(self.lit_name(i))]
        self.emptied = bool(files) and len(dropped) == len(files)
        if dropped:
            gone = set(dropped)
            items[:] = [i for i in items if i not in gone]
            config.hook.pytest_deselected(items=dropped)

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int) -> None:
        """A run that lit's filters left without a test: lit stops with an error there. Where
        this process collected nothing (xdist's controller), when nothing else may have
        deselected the tests (-k, -m, a shard)."""
        config = terminalreporter.config
        if hasattr(config, "workerinput") or exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
            return
        others = (
            config.getoption("keyword", "")
            or config.getoption("markexpr", "")
            or config.pluginmanager.has_plugin("mlirpipe-shard")
        )
        if self.emptied or (self.emptied is None and self.controls.filters and not others):
            terminalreporter.write_line(no_test_left_notice(os.environ))

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionstart(self, session: pytest.Session) -> Generator[None, None, None]:
        yield  # after the terminal's header
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        worker = hasattr(session.config, "workerinput")
        ignored = self.controls.not_applying
        if session.config.pluginmanager.has_plugin("mlirpipe-shard") and (
            self.controls.order != "random"
        ):  # lit's --order orders the shards
            ignored = tuple(name for name in ignored if name != "--order")
        if ignored and reporter is not None and not worker:
            reporter.write_line(not_applying_notice(ignored))
