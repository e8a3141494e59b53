"""The one lit configuration pytest and lit use: tools, substitutions, features, suffixes."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import signal
import sys
from pathlib import Path

from ..lowering.external import TOOL_DIRS_ENV
from ..lowering.host_cpu import CPU_FEATURES_ENV
from ..lowering.spec import SIZES_ENV
from ..options import DEFAULT_SUFFIXES, SuiteSettings
from ..tools.filecheck import ENGINE_ENV, LLVM_ENV, find_llvm_filecheck
from .names import EXCLUDED_DIRS


def tool_commands() -> dict[str, str]:
    """Tools RUN lines may name, and the command each expands to (`-mNAME`, no space, so no
    later substitution matches inside an earlier one).

    Tools are run through this Python interpreter so the suite does not depend on PATH or on
    shims; `FileCheck` is the Python FileCheck package (through tools/filecheck.py).
    """
    py = shlex.quote(sys.executable)
    return {
        "mlirpipe-opt": f"{py} -mpytest_mlirpipe.tools.opt",
        "mlirpipe-assert": f"{py} -mpytest_mlirpipe.tools.ir_assert",
        "mlirpipe": f"{py} -mpytest_mlirpipe.cli.main",
        "FileCheck": f"{py} -mpytest_mlirpipe.tools.filecheck",
        "filecheck": f"{py} -mpytest_mlirpipe.tools.filecheck",
    }


def read_settings(start: str | os.PathLike) -> SuiteSettings:
    """`mlirpipe_*` keys of the ini file pytest itself would read for `start` (pytest.ini,
    .pytest.ini, pyproject.toml, tox.ini or setup.cfg, found by pytest's own search). A file
    pytest cannot read means the defaults here: pytest reports it."""
    found = ini_values(start)
    return SuiteSettings() if found is None else _settings(found[0], found[1].parent)


def ini_values(start: str | os.PathLike) -> tuple[dict[str, list[str]], Path] | None:
    """({key: its lines}, the ini file) of the ini file pytest would read for `start`;
    None when there is none or it does not parse (pytest says what is wrong when it reads it)."""
    from _pytest.config.findpaths import locate_config
    from _pytest.outcomes import OutcomeException

    folder = Path(start).resolve()
    try:
        _, inipath, values, *_ = locate_config(folder, [folder])
    except (Exception, OutcomeException):  # malformed TOML or ini; setup.cfg's [pytest]
        return None
    if inipath is None:
        return None
    return {k: _as_list(getattr(v, "value", v)) for k, v in values.items()}, inipath


def _as_list(value) -> list[str]:
    """An ini value as pytest gives it (a TOML list, or ini text) as a list of lines."""
    if isinstance(value, list):
        return [str(x) for x in value]
    return _ini_list(str(value))


def _ini_list(text: str) -> list[str]:
    return [w for line in text.splitlines() for w in ([line.strip()] if line.strip() else [])]


def _settings(values: dict[str, list[str]], base: Path) -> SuiteSettings:
    def words(key: str) -> tuple[str, ...]:
        return tuple(w for v in values.get(key, []) for w in v.split())

    return SuiteSettings(
        tools=tuple(v.strip() for v in values.get("mlirpipe_tools", []) if v.strip()),
        tool_dirs=words("mlirpipe_tool_dirs"),
        features=words("mlirpipe_features"),
        suffixes=words("mlirpipe_suffixes") or DEFAULT_SUFFIXES,
        filecheck=" ".join(words("mlirpipe_filecheck")),
        base=str(base),
    )


def user_tool_commands(settings: SuiteSettings) -> dict[str, str]:
    """NAME -> command for the ini's `mlirpipe_tools`; a NAME found nowhere is left out, so a
    RUN line naming it fails with 'command not found' and the report says how to point to it."""
    import shutil

    base = Path(settings.base)
    dirs = [str((base / d).resolve()) for d in settings.tool_dirs]
    out: dict[str, str] = {}
    for entry in settings.tools:
        name, _, command = entry.partition("=")
        name, command = name.strip(), command.strip()
        if command:
            first, *rest = shlex.split(command)
            if "/" in first and not Path(first).is_absolute():
                first = str((base / first).resolve())
            out[name] = shlex.join([first, *rest])
            continue
        found = shutil.which(name, path=os.pathsep.join(dirs)) if dirs else None
        found = found or shutil.which(name)
        if found:
            out[name] = shlex.quote(found)
    return out


def available_features() -> set[str]:
    """Features for REQUIRES/UNSUPPORTED: optional dependencies that are importable."""
    features = {"mlirpipe"}
    for module, feature in (("torch", "torch"), ("onnx", "onnx"), ("scipy_openblas32", "openblas")):
        if importlib.util.find_spec(module) is not None:
            features.add(feature)
    return features


def configure(
    config,
    source_root: str | os.PathLike,
    exec_root: str | os.PathLike,
    settings: SuiteSettings | None = None,
) -> None:
    """Fill a lit TestingConfig; `lit.cfg.py` and the pytest plugin both call this. Without
    `settings`, the `mlirpipe_*` keys of the nearest pytest ini are read."""
    from .format import MlirShTest

    if settings is None:
        settings = read_settings(source_root)
    suffixes = settings.suffixes

    config.name = "mlirpipe"
    config.test_format = MlirShTest()
    config.suffixes = list(suffixes)
    config.excludes = list(EXCLUDED_DIRS)
    config.test_source_root = str(source_root)
    config.test_exec_root = str(exec_root)
    # A tool the suite names itself (`FileCheck=/usr/lib/llvm-22/bin/FileCheck`) wins.
    for tool, command in {**tool_commands(), **user_tool_commands(settings)}.items():
        config.substitutions.append((tool_pattern(tool), command))
    config.substitutions.append(("%python", shlex.quote(sys.executable)))
    config.substitutions.append(("%pipelines", str(Path(source_root) / "pipelines")))
    config.available_features.update(available_features())
    config.available_features.update(settings.features)
    # what the run sets for the pipelines reaches RUN lines: search path, Python passes, the
    # CPU features that choose [stage.cpu.F] tables, transform sizes; and the cache's home
    passed = ("PYTHONPATH", "MLIRPIPE_PIPELINES_PATH", "MLIRPIPE_PASS_MODULES", "XDG_CACHE_HOME")
    for var in (*passed, CPU_FEATURES_ENV, SIZES_ENV):
        if var in os.environ:
            config.environment[var] = os.environ[var]
    config.environment.update(filecheck_environment(settings))
    config.environment.update(tool_dirs_environment(settings))
    end_lit_quietly_when_its_reader_leaves()


_READER_HANDLED = False


def end_lit_quietly_when_its_reader_leaves() -> None:
    """In lit's own process (`lit test/ | head`), a reader that closes the pipe ends lit as
    SIGPIPE ends a Unix tool (status 141, nothing printed). Left to Python, the write raised
    BrokenPipeError in the thread of lit's pool that reports results; that thread died, and
    lit waited for results it would never get, until its one-week deadline. Processes forked
    from it (lit's workers) get Python's handling back. Nothing changes in any other process
    (pytest's, which calls `configure` too, never imports lit.main)."""
    global _READER_HANDLED
    if _READER_HANDLED or "lit.main" not in sys.modules or not hasattr(signal, "SIGPIPE"):
        return
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    _READER_HANDLED = True
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.register_at_fork(after_in_child=_as_lits_worker)


def _as_lits_worker() -> None:
    """In a process forked from lit's: Python's handling of SIGPIPE, and (on Linux) an end
    when lit ends, rather than a BrokenPipeError traceback when it sends a result to a lit
    that a closed pipe ended (the processes its RUN lines start are not concerned: the
    setting is cleared at their fork)."""
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def tool_dirs_environment(settings: SuiteSettings) -> dict[str, str]:
    """The suite's tool folders, where a pipeline's `tool = "foo-opt"` is looked for first."""
    base = Path(settings.base)
    dirs = [str((base / d).resolve()) for d in settings.tool_dirs]
    dirs += [d for d in os.environ.get(TOOL_DIRS_ENV, "").split(os.pathsep) if d]
    return {TOOL_DIRS_ENV: os.pathsep.join(dirs)} if dirs else {}


def tool_pattern(name: str) -> str:
    """The substitution pattern of a tool name: the name as written (`foo.opt` is not
    `fooXopt`; `g++` is `g++`), not inside a longer name or a path (`mlirpipe-opt-x`,
    `bin/foo-opt`, `foo-opt.py`). lit's ToolSubst does neither: it leaves the name unescaped and
    cuts it at the first non-word character (`g++` becomes `g`)."""
    return rf"(?<![\w./+-]){re.escape(name)}(?![\w+-]|\.\w)"


def filecheck_environment(settings: SuiteSettings) -> dict[str, str]:
    """What tools/filecheck.py reads: the engine (the suite's setting, else
    $MLIRPIPE_FILECHECK, else auto) and the LLVM FileCheck found in the tool dirs or usual
    places (a lit param `mlirpipe_filecheck` overrides the engine per run, see format.py)."""
    engine = settings.filecheck or os.environ.get(ENGINE_ENV) or "auto"
    env = {ENGINE_ENV: engine}
    base = Path(settings.base)
    llvm = os.environ.get(LLVM_ENV) or find_llvm_filecheck(
        [str((base / d).resolve()) for d in settings.tool_dirs]
    )
    if llvm:
        env[LLVM_ENV] = llvm
    return env
