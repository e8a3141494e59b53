"""Every option of a run, declared once: pytest flags and ini keys, `mlirpipe` flags, RunConfig."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import Problem, UsageError

DEFAULT_SUFFIXES = (".mlir",)
ISOLATION_MODES = ("fork", "none", "subprocess")
ORDERS = ("smart", "lexical")
FILECHECK_ENGINES = ("auto", "llvm", "python", "both")
NATIVE_MODES = ("jit", "aot")
LINT_MODES = ("off", "warn", "error")
PRELOAD_MODES = ("off", "on", "check")
GROUP = ("mlirpipe", "MLIR lowering-pipeline tests (pytest-mlirpipe)")


@dataclass(frozen=True, slots=True)
class Option:
    """One option: `--mlirpipe-NAME` and the ini key `mlirpipe_NAME` under pytest, and `cli`,
    its flag in the `mlirpipe` / `mlirpipe-opt` commands (which keep their own shorter names)."""

    name: str  # snake_case
    help: str
    flag: bool = True  # has a --mlirpipe-NAME flag
    ini: str | None = "string"  # pytest's ini type ("string", "args", "linelist", "paths", "bool")
    default: Any = None  # of the ini key, and of the `mlirpipe` flag
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    action: str | None = None  # "append" or "store_true"
    type: Callable[[str], Any] | None = None
    shown_default: str | None = None  # "(default X)" in the flag's help
    ini_help: str | None = None  # when the ini key reads differently from the flag
    cli: str | None = None
    cli_help: str | None = None  # when the `mlirpipe` flag means more (or less) than the help

    @property
    def flag_name(self) -> str:
        return "--mlirpipe-" + self.name.replace("_", "-")

    @property
    def ini_name(self) -> str:
        return "mlirpipe_" + self.name

    def flag_help(self) -> str:
        notes = ["repeatable"] if self.action == "append" else []
        if self.shown_default is not None:
            notes.append(f"default {self.shown_default}")
        if self.ini:
            notes.append(f"ini: {self.ini_name}")
        return f"{self.help} ({'; '.join(notes)})" if notes else self.help


# Declared by the file-test plugin; the pipeline dirs, isolation and timeout also apply to
# execution tests.
FILE_TEST_OPTIONS: tuple[Option, ...] = (
    Option(
        "pipelines",
        "extra directory of pipeline files (DIR/*.toml)",
        ini="paths",
        default=(),
        metavar="DIR",
        action="append",
        ini_help="extra directories of pipeline files (each DIR/*.toml)",
        cli="--pipelines-dir",
        cli_help="also read the pipeline files DIR/*.toml (repeatable; also "
        "$MLIRPIPE_PIPELINES_PATH)",
    ),
    Option(
        "suffixes",
        "comma-separated suffixes of RUN/CHECK files to collect",
        ini="args",
        default=DEFAULT_SUFFIXES,
        metavar="LIST",
        shown_default=",".join(DEFAULT_SUFFIXES),
        ini_help="suffixes of RUN/CHECK files to collect",
    ),
    Option(
        "tools",
        "tools RUN lines may name: NAME (found in mlirpipe_tool_dirs or PATH) or NAME=COMMAND",
        flag=False,
        ini="linelist",
        default=(),
    ),
    Option(
        "tool_dirs",
        "directories searched for mlirpipe_tools and for a pipeline's tool",
        flag=False,
        ini="args",
        default=(),
    ),
    Option(
        "features",
        "extra features for REQUIRES/UNSUPPORTED",
        flag=False,
        ini="args",
        default=(),
    ),
    Option(
        "lit_site",
        "NAME = VALUE lines a suite's generated lit.site.cfg.py sets on its config before its "
        "lit.cfg.py runs (written by `mlirpipe init`; paths relative to this file)",
        flag=False,
        ini="linelist",
        default=(),
    ),
    Option(
        "isolation",
        "how RUN lines run: fork (default: known tools in-process, in a forked child per "
        "file), none (in this process, where a time limit cannot stop a hang), subprocess "
        "(every tool a process, as lit does)",
        default="fork",
        choices=ISOLATION_MODES,
        ini_help="fork, none (no time limit on in-process work) or subprocess",
    ),
    Option(
        "filecheck",
        "which FileCheck runs FileCheck/filecheck in RUN lines: auto (LLVM FileCheck when one is "
        "found, else the Python port), llvm, python, both (LLVM's verdict; a warning when the "
        "port disagrees)",
        default="",
        choices=FILECHECK_ENGINES,
        shown_default="auto, or $MLIRPIPE_FILECHECK",
        ini_help="auto, llvm, python or both (lit: --param mlirpipe_filecheck=...)",
    ),
    Option(
        "order",
        "order of RUN/CHECK files: smart (as lit: last run's failures first, then the longest "
        "first, from the times pytest's cache kept) or lexical (as collected)",
        default="smart",
        choices=ORDERS,
        shown_default="smart",
        ini_help="smart (last run's failures, then the longest files first) or lexical",
    ),
    Option(
        "repeat",
        "run each RUN/CHECK file N times and fail it when what a RUN line's commands print "
        "(their stdout, what a pipe gives the next command, the test's temporary files) differs "
        "between runs",
        default="1",
        metavar="N",
        shown_default="1",
        ini_help="runs of each RUN/CHECK file whose outputs must agree (1: once, no check)",
    ),
    Option(
        "preload",
        "how lit's internal shell starts Python commands of RUN lines (this interpreter running "
        "a script, -m or -c, or a console script of it): off (a process each, as lit does), on "
        "(forked from the test process, which imported what they import), check (both ways, "
        "and the file fails when stdout, stderr or status differ)",
        default="off",
        choices=PRELOAD_MODES,
        shown_default="off",
        ini_help="off, on or check: Python commands of RUN lines forked from the test process",
    ),
    Option(
        "preload_modules",
        "modules imported once in the test process for the preloaded Python commands of RUN "
        "lines (besides those their runs are seen importing)",
        flag=False,
        ini="args",
        default=(),
    ),
    Option(
        "preload_env",
        "environment variables besides PYTHON*, LD_*, LC_* and LANG in which a RUN line must "
        "agree with the test process for its Python commands to be preloaded",
        flag=False,
        ini="args",
        default=(),
    ),
    Option(
        "jobs",
        "run the RUN/CHECK files in N processes forked from this one once it has collected "
        "them (auto: one per CPU), their reports shown here as in a serial run; other tests "
        "run here after them. pytest -n N starts N interpreters that each collect; this pays "
        "start-up and collection once",
        default="1",
        metavar="N",
        shown_default="1",
        ini_help="processes forked after collection to run the RUN/CHECK files (1: none; auto)",
    ),
    Option(
        "lint",
        "what each file's test does, as it starts, with CHECK lines FileCheck would ignore "
        "(misspelled directives, "
        "a missing colon, unused or unchecked prefixes; `mlirpipe lint-checks` lists them): "
        "off, warn (a MlirpipeLintWarning per line) or error (the file fails before its RUN "
        "lines run)",
        default="warn",
        choices=LINT_MODES,
        shown_default="warn",
        ini_help="off, warn or error: CHECK lines FileCheck would ignore, found at collection",
    ),
    Option(
        "shard",
        "run shard K of N, the tests lit's --run-shard K --num-shards N would run "
        "(default: $LIT_RUN_SHARD of $LIT_NUM_SHARDS when set)",
        ini=None,
        metavar="K/N",
    ),
    Option(
        "timeout",
        "per-file time limit, 0 for none; at the limit every process the file started is "
        "killed. Isolation none cannot stop a hang in what it runs in this process "
        "(mlirpipe-opt, filecheck, compiled code)",
        default="0",
        metavar="SECONDS",
        shown_default="0",
        ini_help="per-file time limit in seconds (0: none; with isolation none it cannot stop a "
        "hang inside in-process work)",
        cli="--timeout",
        cli_help="time limit in seconds for each pipeline's compile and first run; a pipeline "
        "still running at the limit is stopped and ends as TIMEOUT (default 0: none)",
    ),
    Option(
        "expectations",
        "the expected failures listed in FILE (written by `mlirpipe expectations`) are strict "
        "xfails: a listed test (or an execution check's pipeline) that passes fails the run",
        metavar="FILE",
        ini_help="expectations file of expected failures (relative to this file)",
    ),
)
# Declared by the execution plugin (the `mlirpipe` fixture); several are `mlirpipe run` flags too.
EXECUTION_OPTIONS: tuple[Option, ...] = (
    Option(
        "json",
        "write every execution outcome (verdict, errors, timings) to PATH as JSON",
        ini=None,
        metavar="PATH",
        cli="--json",
    ),
    Option(
        "time",
        "time each execution case against torch eager",
        ini="bool",
        default=False,
        action="store_true",
        cli="--no-time",
        cli_help="compare only, do not time",
    ),
    Option(
        "bisect",
        "when an execution test's results are wrong, find the first stage after which they are "
        "(a few more compiles per failing pipeline)",
        ini="bool",
        default=False,
        action="store_true",
        cli="--bisect",
    ),
    Option(
        "threads",
        "threads for torch and the BLAS library while timing",
        default="1",
        metavar="N",
        type=int,
        shown_default="1",
        cli="--threads",
    ),
    Option(
        "mode",
        "native code by ExecutionEngine JIT or as a linked shared library",
        default="jit",
        choices=NATIVE_MODES,
        shown_default="jit",
        ini_help="jit or aot",
        cli="--mode",
    ),
    Option(
        "cache_dir",
        "where compiled artifacts are kept",
        default="",
        metavar="DIR",
        shown_default="$MLIRPIPE_CACHE_DIR or ~/.cache/pytest-mlirpipe/artifacts",
        ini_help="directory of compiled artifacts",
    ),
    Option("no_cache", "compile every execution case afresh", ini=None, action="store_true"),
    Option(
        "compare",
        "compare this run's timings with the report PATH (--mlirpipe-json of an earlier run); "
        "the run fails when a test got slower beyond the threshold",
        ini=None,
        metavar="PATH",
    ),
    Option(
        "compare_threshold",
        "how much slower than the baseline a test may get, in percent",
        default="20",
        metavar="PERCENT",
        shown_default="20",
    ),
)
OPTIONS = FILE_TEST_OPTIONS + EXECUTION_OPTIONS
BY_NAME = {o.name: o for o in OPTIONS}


def add_pytest_options(parser: Any, options: Sequence[Option]) -> None:
    """The `--mlirpipe-*` flags (in one group) and `mlirpipe_*` ini keys of `options` on
    pytest's parser."""
    group = parser.getgroup(*GROUP)
    for o in options:
        if o.flag:
            kwargs: dict[str, Any] = {"help": o.flag_help()}
            if o.action:
                kwargs["action"] = o.action
            for key in ("metavar", "choices", "type"):
                if getattr(o, key) is not None:
                    kwargs[key] = getattr(o, key)
            # None: not given (the ini key decides); a switch without an ini key is a plain bool.
            kwargs["default"] = [] if o.action == "append" else None
            if o.action == "store_true" and not o.ini:
                kwargs["default"] = False
            group.addoption(o.flag_name, **kwargs)
    for o in options:
        if o.ini:
            default = list(o.default) if isinstance(o.default, tuple) else o.default
            ini_type = None if o.ini == "string" else o.ini
            parser.addini(o.ini_name, o.ini_help or o.help, type=ini_type, default=default)


def add_cli_options(parser: Any, *names: str) -> None:
    """The `mlirpipe` flags of the options `names` on an argparse parser."""
    for name in names:
        o = BY_NAME[name]
        assert o.cli is not None, f"option {name} has no `mlirpipe` flag"
        kwargs: dict[str, Any] = {"help": o.cli_help or _with_default(o)}
        if o.action:
            kwargs["action"] = o.action
        for key in ("metavar", "choices", "type"):
            if getattr(o, key) is not None:
                kwargs[key] = getattr(o, key)
        if o.action == "append":
            kwargs["default"] = []
        elif o.action is None:
            kwargs["default"] = o.default
        parser.add_argument(o.cli, **kwargs)


def _with_default(o: Option) -> str:
    return f"{o.help} (default {o.shown_default})" if o.shown_default else o.help


@dataclass(frozen=True, slots=True)
class SuiteSettings:
    """The `mlirpipe_*` ini keys a lit suite applies under pytest and lit (pytest reads them with
    its ini handling, lit.cfg.py through `filetests.config.read_settings`)."""

    tools: tuple[str, ...] = ()  # "NAME" (found in tool_dirs or PATH) or "NAME=COMMAND"
    tool_dirs: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = DEFAULT_SUFFIXES
    filecheck: str = ""  # auto, llvm, python, both; "": $MLIRPIPE_FILECHECK, else auto
    base: str = "."  # relative paths are relative to the ini file's folder


@dataclass(frozen=True, slots=True)
class RunConfig:
    """A pytest run's configuration, read once from its flags and ini keys; the RUN/CHECK file
    tests and the `mlirpipe` fixture both receive it."""

    suite: SuiteSettings = SuiteSettings()
    pipeline_dirs: tuple[str, ...] = ()  # the flags' first, then the ini's
    isolation: str = "fork"
    order: str = "smart"  # of the RUN/CHECK files: smart (lit's) or lexical
    lint: str = "warn"  # of the CHECK lines, as each file's test starts: off, warn or error
    timeout: float = 0.0  # seconds per file (and per compiled-code run); 0: none
    timeout_from: str = "mlirpipe_timeout"  # where the limit was set, as messages name it
    json_path: str | None = None
    time: bool = False
    bisect: bool = False  # of wrong execution results: the first stage after which they are
    threads: int = 1
    mode: str = "jit"
    cache_dir: str = ""  # "": $MLIRPIPE_CACHE_DIR or the user's cache folder
    no_cache: bool = False
    compare_path: str | None = None  # a baseline timing report
    compare_threshold: float = 0.2  # 20 %
    expectations_path: str | None = None  # the expected failures (a TOML file)
    repeat: int = 1  # runs of each RUN/CHECK file whose outputs must agree
    preload: str = "off"  # Python commands of RUN lines: off, on (forked) or check (both ways)
    preload_modules: tuple[str, ...] = ()  # imported once for them
    preload_env: tuple[str, ...] = ()  # variables that must agree for a fork to stand in
    jobs: int = 1  # processes forked after collection to run the file tests (1: this one)


class OptionValueError(ValueError):
    """An option's value is not accepted; the message quotes it and what is."""


# (option) -> the flag's value, None when not given / the ini key's value or its default
Lookup = Callable[[Option], Any]


def read_run_config(flag: Lookup, ini: Lookup, base: str) -> RunConfig:
    """The run's configuration from its flags (`flag`) and ini keys (`ini`), checked: a flag
    that is given wins over the ini key. Raises OptionValueError on a value not accepted."""
    given = flag(BY_NAME["threads"])  # a 0 given is refused, not taken for "not given"
    threads = _threads(ini(BY_NAME["threads"]) if given is None else given)
    mode = _given(flag, ini, "mode")
    if mode not in NATIVE_MODES:
        raise OptionValueError(f"error: mlirpipe_mode must be 'jit' or 'aot', not '{mode}'")
    suite = SuiteSettings(
        tools=tuple(ini(BY_NAME["tools"])),
        tool_dirs=tuple(ini(BY_NAME["tool_dirs"])),
        features=tuple(ini(BY_NAME["features"])),
        suffixes=_suffixes(flag(BY_NAME["suffixes"]), ini(BY_NAME["suffixes"])),
        filecheck=_filecheck(_given(flag, ini, "filecheck")),
        base=base,
    )
    isolation = _given(flag, ini, "isolation")
    if isolation not in ISOLATION_MODES:
        raise OptionValueError(
            f"mlirpipe: mlirpipe_isolation must be one of {', '.join(ISOLATION_MODES)}, "
            f"got {isolation!r}"
        )
    order = _given(flag, ini, "order")
    if order not in ORDERS:
        raise OptionValueError(
            f"mlirpipe: mlirpipe_order must be one of {', '.join(ORDERS)}, got {order!r}"
        )
    lint = _given(flag, ini, "lint")
    if lint not in LINT_MODES:
        raise OptionValueError(
            f"mlirpipe: mlirpipe_lint must be one of {', '.join(LINT_MODES)}, got {lint!r}"
        )
    preload = _given(flag, ini, "preload")
    if preload not in PRELOAD_MODES:
        raise OptionValueError(
            f"mlirpipe: mlirpipe_preload must be one of {', '.join(PRELOAD_MODES)}, got {preload!r}"
        )
    time, bisect = flag(BY_NAME["time"]), flag(BY_NAME["bisect"])
    return RunConfig(
        suite=suite,
        pipeline_dirs=(
            *(str(p) for p in flag(BY_NAME["pipelines"]) or ()),
            *(str(p) for p in ini(BY_NAME["pipelines"])),
        ),
        isolation=isolation,
        order=order,
        lint=lint,
        timeout=_timeout(_given(flag, ini, "timeout")),
        json_path=_json_path(flag(BY_NAME["json"])),
        time=bool(ini(BY_NAME["time"]) if time is None else time),
        bisect=bool(ini(BY_NAME["bisect"]) if bisect is None else bisect),
        threads=threads,
        mode=mode,
        cache_dir=str(_given(flag, ini, "cache_dir") or ""),
        no_cache=bool(flag(BY_NAME["no_cache"])),
        compare_path=flag(BY_NAME["compare"]),
        compare_threshold=_percent(_given(flag, ini, "compare_threshold")),
        expectations_path=_expectations(flag, ini, base),
        repeat=_repeat(_given(flag, ini, "repeat")),
        preload=preload,
        preload_modules=tuple(ini(BY_NAME["preload_modules"])),
        preload_env=tuple(ini(BY_NAME["preload_env"])),
        jobs=_jobs(_given(flag, ini, "jobs")),
    )


def _jobs(text: Any) -> int:
    """--mlirpipe-jobs: a whole number >= 1, or auto (the CPUs this process may use)."""
    if str(text).strip() == "auto":
        if hasattr(os, "sched_getaffinity"):
            return max(1, len(os.sched_getaffinity(0)))
        return os.cpu_count() or 1
    return _at_least_one(text, "the number of jobs must be a whole number >= 1 or auto", "jobs")


def _repeat(text: Any) -> int:
    return _at_least_one(text, "the repeat count must be a whole number of runs >= 1", "repeat")


def _at_least_one(text: Any, what: str, name: str) -> int:
    try:
        number = int(str(text))
    except ValueError:
        number = 0
    if number < 1:
        raise OptionValueError(
            f"mlirpipe: {what}, got {text!r} (--mlirpipe-{name} / mlirpipe_{name})"
        )
    return number


def _expectations(flag: Lookup, ini: Lookup, base: str) -> str | None:
    """The expectations file: the flag's path as given, the ini key's relative to `base`."""
    given = flag(BY_NAME["expectations"])
    if given:
        return str(given)
    in_ini = ini(BY_NAME["expectations"])
    return os.path.join(base, in_ini) if in_ini else None


def _given(flag: Lookup, ini: Lookup, name: str) -> Any:
    """The flag's value, or the ini key's when the flag is not given (or given empty, or 0)."""
    return flag(BY_NAME[name]) or ini(BY_NAME[name])


def _json_path(path: str | None) -> str | None:
    """--mlirpipe-json PATH: a file to write at the end of the run (its folder is made when
    missing, as pytest's --junitxml does), refused at the start when it cannot be one."""
    if path and os.path.isdir(path):
        raise OptionValueError(
            f"mlirpipe: --mlirpipe-json {path}: it is a folder; the timing report is a file "
            f"(e.g. --mlirpipe-json {os.path.join(path, 'timing.json')})"
        )
    parent = os.path.dirname(os.path.abspath(path)) if path else ""
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if parent and not os.path.isdir(parent):
        raise OptionValueError(
            f"mlirpipe: --mlirpipe-json {path}: {parent} is a file, not a folder"
        )
    return path


def _suffixes(flag_text: str | None, ini_words: Sequence[str]) -> tuple[str, ...]:
    if flag_text:
        suffixes = tuple(s.strip() for s in flag_text.split(",") if s.strip())
    else:
        suffixes = tuple(ini_words)
    bad = [s for s in suffixes if not s.startswith(".")]
    if bad:
        raise OptionValueError(
            f"mlirpipe: suffixes must start with '.', got {', '.join(repr(b) for b in bad)} "
            "(e.g. --mlirpipe-suffixes=.mlir,.td)"
        )
    return suffixes


def _filecheck(text: Any) -> str:
    engine = str(text or "").strip()
    if engine and engine not in FILECHECK_ENGINES:
        raise OptionValueError(
            f"mlirpipe: mlirpipe_filecheck must be one of {', '.join(FILECHECK_ENGINES)}, "
            f"got {engine!r}"
        )
    return engine


def _timeout(text: Any) -> float:
    try:
        timeout = float(text)
        if timeout < 0:
            raise ValueError
    except ValueError:
        raise OptionValueError(
            f"mlirpipe: the timeout must be a number of seconds >= 0 (0: none), "
            f"got {text!r} (--mlirpipe-timeout / mlirpipe_timeout)"
        ) from None
    return timeout


def _threads(text: Any) -> int:
    try:
        threads = int(text)
        if threads < 1:
            raise ValueError
    except ValueError:
        problem = Problem(
            f"mlirpipe_threads must be a positive integer, not '{text}'",
            hint="e.g. --mlirpipe-threads 2",
        )
        raise OptionValueError(UsageError(problem).format()) from None
    return threads


def _percent(text: Any) -> float:
    try:
        percent = float(text)
        if percent < 0:
            raise ValueError
    except ValueError:
        raise OptionValueError(
            f"mlirpipe: the compare threshold must be a percentage >= 0, got {text!r} "
            "(--mlirpipe-compare-threshold / mlirpipe_compare_threshold)"
        ) from None
    return percent / 100
