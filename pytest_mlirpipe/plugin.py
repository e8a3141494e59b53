"""The pytest shell of file tests: options, the run's RunConfig, collection of RUN/CHECK files."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from . import expectations_plugin, lit_controls_plugin, ordering, pool, sharding
from .items import (
    CONTAINED,
    PRELOADED,
    RUNNER_KEY,
    STAGE_REPORT,
    SUITE_CONFIGS,
    UPDATED,
    VERDICT,
    BrokenPipelineFiles,
    BrokenSuite,
    BrokenSuiteFile,
    LitSuiteDir,
    MlirFile,
    MlirItem,
    exits_at_import,
)
from .options import (
    FILE_TEST_OPTIONS,
    GROUP,
    Option,
    OptionValueError,
    RunConfig,
    add_pytest_options,
    read_run_config,
)

if TYPE_CHECKING:
    from .filetests.runner import FileTestRunner

RUN_CONFIG = pytest.StashKey[RunConfig]()
# Set once this plugin configured the run: file_runner may then build the runner.
_CONFIGURED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_pytest_options(parser, FILE_TEST_OPTIONS)
    parser.getgroup(*GROUP).addoption(
        "--mlirpipe-update-checks",
        action="store_true",
        default=False,
        help="rewrite the CHECK lines of each RUN line whose FileCheck fails on an *-opt tool's "
        "output, from that output (generate-test-checks.py style), then run the file again",
    )


def pytest_configure(config: pytest.Config) -> None:
    _refuse_misread_values(config)  # before anything is written under the rootdir
    smart = run_config(config).order == "smart"  # a bad option value stops the run here
    config.stash[_CONFIGURED] = True
    config.pluginmanager.register(ordering.FileOrder(config, smart), "mlirpipe-order")
    _register_shard(config)  # reads lit's controls, after its own variables' checks
    expectations_plugin.configure(config, run_config(config).expectations_path)
    pool.register(config, run_config(config).jobs)


def _refuse_misread_values(config: pytest.Config) -> None:
    """A `--mlirpipe-* VALUE` that pytest took for a path to test when it chose its rootdir
    and config file, and that changed them, stops the run (see rootdir_guard)."""
    from . import rootdir_guard
    from .options import OPTIONS

    option = config.option
    if getattr(option, "help", False) or getattr(option, "version", False):
        return
    flags = [o.flag_name for o in OPTIONS if o.flag and o.action != "store_true"]
    given = rootdir_guard.separated_values(rootdir_guard.pytest_args(config), flags)
    setup = rootdir_guard.pytest_setup(config) if given else None
    if setup is None:
        return
    positional = [str(a) for a in getattr(option, "file_or_dir", None) or ()]
    try:
        misread = rootdir_guard.misread_values(given, positional, setup)
    except Exception:  # pytest's own choice, asked again, failed: pytest has reported it
        return
    if misread:
        raise pytest.UsageError(rootdir_guard.message(*misread[0], config))


def file_runner(config: pytest.Config) -> FileTestRunner | None:
    """The run's file-test runner, built when the first file is collected: a process that
    collects none (xdist's controller) never loads lit or the runner. None when this plugin
    did not configure the run."""
    if RUNNER_KEY not in config.stash:
        if not config.stash.get(_CONFIGURED, False):
            return None
        from .filetests.runner import FileTestRunner

        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        exec_root = Path(config.rootpath) / "build" / "pytest" / worker
        runs = lit_controls_plugin.runner_config(config, run_config(config))
        controls = config.stash.get(lit_controls_plugin.CONTROLS_KEY, None)
        config.stash[RUNNER_KEY] = FileTestRunner(exec_root, runs, controls)
    return config.stash[RUNNER_KEY]


def _register_shard(config: pytest.Config) -> None:
    """Keep the files lit's filters select ($LIT_FILTER, $LIT_OPTS), and of them this CI
    machine's shard (--mlirpipe-shard, else lit's variables or $LIT_OPTS)."""
    flag = config.getoption("--mlirpipe-shard", None)
    try:
        shard = sharding.parse_shard(flag, os.environ)
    except sharding.ShardError as exc:
        raise pytest.UsageError(str(exc)) from None

    def lit_test(item: pytest.Item):
        runner = file_runner(config)
        assert runner is not None  # this plugin configured the run
        return runner.make_test(item.path)

    controls = lit_controls_plugin.configure(config, lambda i: lit_test(i).getFullName())
    if not flag and controls.shard:  # $LIT_OPTS' over lit's variables, as in lit
        shard = controls.shard

    def lit_order(item: pytest.Item) -> tuple:
        return sharding.lit_order(lit_test(item), controls.order)

    if shard:
        config.pluginmanager.register(sharding.Shard(*shard, lit_order), "mlirpipe-shard")


def run_config(config: pytest.Config) -> RunConfig:
    """The run's configuration, read from its flags and ini keys once, on first use (the
    execution plugin may configure first); a bad value stops the run with its message."""
    if RUN_CONFIG not in config.stash:
        base = config.inipath.parent if config.inipath else config.rootpath
        try:
            config.stash[RUN_CONFIG] = read_run_config(
                lambda o: _flag(config, o), lambda o: _ini(config, o), str(base)
            )
        except OptionValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        cfg = config.stash[RUN_CONFIG]
        missing = [d for d in cfg.pipeline_dirs if not Path(d).is_dir()]
        if missing:
            raise pytest.UsageError(
                "\n".join(
                    f"mlirpipe: pipeline directory '{d}' does not exist "
                    "(--mlirpipe-pipelines / mlirpipe_pipelines)"
                    for d in missing
                )
            )
        # RUN lines run in the test's output folder: a folder given relative to where pytest
        # started is passed to them whole
        dirs = tuple(os.path.abspath(d) for d in cfg.pipeline_dirs)
        config.stash[RUN_CONFIG] = dataclasses.replace(cfg, pipeline_dirs=dirs)
    return config.stash[RUN_CONFIG]


# An option of a plugin that is disabled (`-p no:mlirpipe_execution`) has its default.


def _flag(config: pytest.Config, option: Option):
    return config.getoption(option.flag_name, None) if option.flag else None


def _ini(config: pytest.Config, option: Option):
    try:
        return config.getini(option.ini_name) if option.ini else None
    except ValueError:
        return option.default


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A folder of a lit suite is collected as lit finds its tests (LitSuiteDir); the root
    folder of a suite whose config does not load is one collection error."""
    from .filetests.names import EXCLUDED_DIRS

    starts_suite = any((path / name).is_file() for name in SUITE_CONFIGS)
    if not starts_suite and not (
        isinstance(parent, LitSuiteDir)
        or (isinstance(parent, pytest.Session) and _suite_above(path))
    ):
        return None  # no suite starts here or above: lit and the runner stay unloaded
    runner = file_runner(parent.config)
    if runner is None or any(part in EXCLUDED_DIRS for part in path.parts):
        return None
    if starts_suite:
        error = runner.discovery.broken_suite(path)
        if error:
            return BrokenSuite.from_parent(parent, path=path, error=error)
    if (path / "__init__.py").is_file() or runner.discovery.tests_in(path) is None:
        return None  # a Python package (pytest's), or no lit suite holds the folder
    return LitSuiteDir.from_parent(parent, path=path)


def _suite_above(path: Path) -> bool:
    """Whether a lit config lies in a folder above `path` (the run's first folder)."""
    return any((up / name).is_file() for up in path.parents for name in SUITE_CONFIGS)


def _broken_file(runner, parent: pytest.Collector, path: Path, error):
    """A file of a broken suite whose root pytest does not collect: the first one shows the
    error, the others collect nothing."""
    shown = error if runner.discovery.first_report(error) else None
    return BrokenSuiteFile.from_parent(parent, path=path, error=shown)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Inside a lit suite, the files lit runs (its configs' suffixes, excludes, formats); a
    Python file among them through pytest_pycollect_makemodule. Elsewhere, files with the run's
    suffixes and RUN/CHECK lines."""
    from .filetests.discovery import SuiteConfigError
    from .filetests.names import EXCLUDED_DIRS

    if any(part in EXCLUDED_DIRS for part in file_path.parts):
        return None
    runner = file_runner(parent.config)
    if runner is None:
        return None
    try:
        in_lit = runner.discovery.collects(file_path)
    except SuiteConfigError as error:  # the suite's folder is not collected: say it once
        if not _is_test_file(file_path) or _python_module(file_path, parent):
            return None
        return _broken_file(runner, parent, file_path, error)
    if in_lit is None:
        runner.discovery.note_outside_suites(file_path.parent, parent.config.rootpath)
        wanted = file_path.suffix in runner.config.suite.suffixes and _is_test_file(file_path)
    else:
        wanted = in_lit and not _python_module(file_path, parent)
    return MlirFile.from_parent(parent, path=file_path) if wanted else None


def _is_test_file(path: Path) -> bool:
    """A file with RUN or CHECK lines (the format's module, loaded only when asked)."""
    from .filetests.format import is_test_file

    return is_test_file(path)


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector):
    """A Python file that lit runs as a test (`# RUN: %PYTHON %s`) is that, never a module
    pytest imports."""
    from .filetests.discovery import SuiteConfigError

    runner = file_runner(parent.config)
    if runner is None:
        return None
    try:
        in_lit = runner.discovery.collects(module_path)
    except SuiteConfigError as error:  # lit may run it: not imported, the config's error shown
        return _broken_file(runner, parent, module_path, error)
    return MlirFile.from_parent(parent, path=module_path) if in_lit else None


def _python_module(path: Path, parent: pytest.Collector) -> bool:
    """pytest's Python plugin offers `path` to pytest_pycollect_makemodule (its own rule)."""
    from _pytest.python import path_matches_patterns

    if path.suffix != ".py" or not parent.config.pluginmanager.has_plugin("python"):
        return False
    patterns = parent.config.getini("python_files")
    return parent.session.isinitpath(path) or path_matches_patterns(path, patterns)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A Python module that exits at import is a collection error of that file; pytest lets
    the SystemExit end the run (INTERNALERROR)."""
    try:
        return (yield)
    except SystemExit as exit:
        if not isinstance(collector, pytest.Module):
            raise
        why = exits_at_import(collector.path, collector.config.rootpath, exit)
        return pytest.CollectReport(collector.nodeid, "failed", why, [])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """With pytest-html: a failing stage check's report page as a link among its extras."""
    report = yield
    page = dict(item.user_properties).get(STAGE_REPORT) if report.when == "call" else None
    if page and item.config.pluginmanager.hasplugin("html"):
        from pytest_html import extras

        link = extras.url(Path(str(page)).resolve().as_uri(), name="stage report")
        report.extras = [*getattr(report, "extras", []), link]
    return report


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]):
    """Once per run, first: the user's pipeline files that do not load."""
    yield
    runner = session.config.stash.get(RUNNER_KEY, None)
    if runner is not None and any(isinstance(i, MlirItem) for i in items):
        problems = runner.pipeline_problems()
        if problems:
            items.insert(0, BrokenPipelineFiles.for_problems(session, problems))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once per run: the lit.local.cfg files that no lit suite reads (no lit.cfg.py above),
    and the lit suites that choose their files themselves whatever --mlirpipe-suffixes says."""
    runner = session.config.stash.get(RUNNER_KEY, None)
    if runner is None:
        return
    from .items import ignored_local_configs_warning, suffixes_not_applied_warning

    root = session.config.rootpath
    if runner.discovery.ignored_local_configs:
        found = sorted(runner.discovery.ignored_local_configs)
        _warn(ignored_local_configs_warning(found, root), found[0])
    if session.config.getoption("--mlirpipe-suffixes", None):
        suites = sorted(
            {
                Path(runner.make_test(i.path).suite.source_root)
                for i in session.items
                if isinstance(i, MlirItem) and runner.discovery.collects(i.path) is not None
            }
        )
        if suites:
            _warn(suffixes_not_applied_warning(suites, root), suites[0])


def _warn(warning: Warning, where: Path) -> None:
    """`warning`, located at `where`; a UsageError with its message where filterwarnings
    makes warnings errors."""
    import warnings

    try:
        warnings.warn_explicit(warning, type(warning), str(where), 1)
    except type(warning) as error:  # filterwarnings = error: stop with the message
        text = str(error)
        shown = text if text.startswith("mlirpipe: ") else f"mlirpipe: {text}"
        raise pytest.UsageError(shown) from None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line counting the files whose crash or hang was contained (workers' reports too),
    one of what --mlirpipe-preload did, and what --mlirpipe-update-checks changed."""
    counts = {"crash": 0, "timeout": 0}
    preloaded = [0, 0, 0]
    files = 0
    updates: list[str] = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == CONTAINED and value in counts:
                    counts[value] += 1
                elif key == UPDATED and value:
                    updates.append(value)
                elif key == VERDICT:
                    files += 1
                elif key == PRELOADED:
                    for i, n in enumerate(str(value).split()):
                        preloaded[i] += int(n)
    for lines in sorted(updates):
        terminalreporter.write_line(f"mlirpipe-update-checks: {lines}".replace("\n", "\n  "))
    if any(counts.values()):
        terminalreporter.write_line(f"mlirpipe: {contained_summary(counts)} contained")
    run_config = config.stash.get(RUN_CONFIG, None)
    mode = run_config.preload if run_config is not None else "off"
    if mode in ("on", "check") and files:
        terminalreporter.write_line(preload_summary(mode, *preloaded))


def preload_summary(mode: str, forked: int, fallback: int, differed: int) -> str:
    """What --mlirpipe-preload did with the run's Python commands, in one line."""
    processes = (
        f"; {fallback:,} ran as processes (their environment differs from the test process's "
        "where an interpreter or the imports read it)"
        if fallback
        else ""
    )
    if mode == "check":
        return (
            f"mlirpipe: --mlirpipe-preload=check: {forked:,} Python commands run fresh and "
            f"forked, {differed:,} differed{processes}"
        )
    return f"mlirpipe: --mlirpipe-preload: {forked:,} Python commands forked{processes}"


def contained_summary(counts: dict[str, int]) -> str:
    """'2 crashes and 1 timeout' (zero counts left out)."""
    words = {"crash": ("crash", "crashes"), "timeout": ("timeout", "timeouts")}
    parts = [f"{n} {words[k][n != 1]}" for k, n in counts.items() if n]
    return " and ".join(parts)
