"""A suite's site values (what a build's lit.site.cfg.py sets) kept in the pytest ini file."""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from ..options import BY_NAME
from ..tools.filecheck import find_llvm_filecheck
from .config import end_lit_quietly_when_its_reader_leaves, ini_values
from .machine import is_machine_name, machine_answer
from .needs import suite_needs

# The ini key: lines `NAME = VALUE`, set on the suite's config before its lit.cfg.py runs.
SITE_KEY = BY_NAME["lit_site"].ini_name
SITE_FILE = "lit.site.cfg.py"
# Names that hold paths (CMake's *_obj_root, *_tools_dir, ...): relative to the ini's folder.
PATH_ENDINGS = ("_root", "_dir", "_path")
SITE_LINE_HINT = "write NAME = VALUE, e.g. foo_obj_root = build, or enable_bar = True"
# Values of the machine, not of the repository: found when the suite loads (unless the ini gives
# them), so that the ini and the site config, both committed, hold no path of one machine. So
# are host_cxx, host_cc and PROJECT_python_packages_dir, where the configs read them
# (machine.is_machine_name).
MACHINE_NAMES = ("python_executable", "llvm_tools_dir")

# How the site config init writes begins (what tells it from a build's or the repository's).
WRITTEN_BY = "# Written by `mlirpipe init`"
_TEMPLATE = """\
# Written by `mlirpipe init`: what a build's lit.site.cfg.py gives {config}, for `lit` and
# `pytest` alike. The values are the {key} lines of {ini}: correct them there.
# It holds no path of this machine: commit it with {ini}.
# ruff: noqa: F821  (lit provides `config` and `lit_config`)
import os

try:
    from pytest_mlirpipe.filetests.site import finish_site, load_site
except ImportError as error:  # lit alone: {config} gets only what lit itself sets
    lit_config.note(
        f"{{error}}: the {key} values of {ini} are not set, so"
        " {config} sees only what lit sets; install pytest-mlirpipe in the Python"
        " that runs lit to have them"
    )
    finish_site = None
else:
    load_site(config, lit_config, __file__)
{initialize}
# Let the main config do the real work.
lit_config.load_config(config, os.path.join(os.path.dirname(__file__), "{config}"))
if finish_site is not None:  # lit's --param mlirpipe_* on the suite's own test format
    finish_site(config, lit_config)
# This file is a config, not a test, even where the suffixes include .py.
if "{site}" not in config.excludes:
    config.excludes = type(config.excludes)([*config.excludes, "{site}"])
"""
_INITIALIZE = """import lit.llvm

lit.llvm.initialize(lit_config, config)
# lit 23 runs RUN lines only in its internal shell: a config's
# `ShTest(not llvm_config.use_lit_shell)` must see True (LIT_USE_INTERNAL_SHELL still decides).
if not os.environ.get("LIT_USE_INTERNAL_SHELL"):
    lit.llvm.llvm_config.use_lit_shell = True
"""


class SiteValueError(ValueError):
    """A line of the site key that is not NAME = VALUE."""


def parse_site_line(line: str, base: Path) -> tuple[str, object]:
    """(name, value) of `NAME = VALUE`: a Python literal (True, 3, 'text') or else the text;
    a relative path under a path-like name is made absolute from `base`."""
    name, sep, text = line.partition("=")
    name, text = name.strip(), text.strip()
    if not sep or not name.isidentifier():
        raise SiteValueError(f"{line.strip()!r} is not NAME = VALUE")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text
    if isinstance(value, str) and value and name.endswith(PATH_ENDINGS):
        value = os.path.normpath(os.path.join(base, value))
    return name, value


def site_values(start: str | os.PathLike) -> dict[str, object]:
    """The site values of the pytest ini file found from `start` (none without one); a
    malformed line is reported with the ini file and its place among the key's lines."""
    found = ini_values(start)
    if found is None:
        return {}
    values, ini = found
    lines = [line for line in values.get(SITE_KEY, []) if line.strip()]
    parsed = {}
    for number, line in enumerate(lines, 1):
        try:
            name, value = parse_site_line(line, ini.parent)
        except SiteValueError as exc:
            raise SiteValueError(f"{_where(ini, line, number)}: {exc}") from None
        parsed[name] = value
    return parsed


def _where(ini: Path, line: str, number: int) -> str:
    """ini:LINE of a site line, when the file holds that text once; else its place in the key."""
    shown = os.path.relpath(ini) if ini.is_relative_to(Path.cwd()) else str(ini)
    text = line.strip()
    hits = [
        n
        for n, raw in enumerate(ini.read_text(encoding="utf-8").splitlines(), 1)
        if raw.strip().rstrip(",").strip().strip("\"'") == text
    ]
    if len(hits) == 1:
        return f"{shown}:{hits[0]}: {SITE_KEY}"
    return f"{shown}: {SITE_KEY}, line {number}"


def machine_values(needs: Iterable[str] = ()) -> dict[str, object]:
    """The MACHINE_NAMES values here: the Python that runs lit or pytest, and the folder of
    LLVM's FileCheck (PATH, then the newest /usr/lib/llvm-NN/bin) when there is one; and of
    `needs`, those of this machine that it has (host_cxx, PROJECT_python_packages_dir, ...)."""
    values: dict[str, object] = {"python_executable": sys.executable}
    filecheck = find_llvm_filecheck()
    if filecheck is not None:
        values["llvm_tools_dir"] = os.path.dirname(filecheck)
    for name in filter(is_machine_name, needs):
        value = machine_answer(name)[0]
        if value:
            values[name] = value
    return values


def is_machine_value(name: str) -> bool:
    """Whether `config.NAME` is found on each machine when the suite loads."""
    return name in MACHINE_NAMES or is_machine_name(name)


def load_site(config, lit_config, site_file: str) -> None:
    """Set the ini's site values, over this machine's, on `config` (a generated
    lit.site.cfg.py calls this); a value of the machine left blank there is this machine's. In
    lit's own process, a reader that closes the pipe ends lit (status 141) as it does for a
    suite that calls `configure`."""
    end_lit_quietly_when_its_reader_leaves()
    try:
        given = site_values(Path(site_file).parent)
    except SiteValueError as exc:
        lit_config.fatal(f"{exc}\n  hint: {SITE_LINE_HINT}")
    given = {n: v for n, v in given.items() if v != "" or not is_machine_value(n)}
    values = {**machine_values(suite_needs(Path(site_file))), **given}
    for name, value in values.items():
        setattr(config, name, value)


def site_file_text(config_name: str, ini_name: str, initialize: bool) -> str:
    """The generated lit.site.cfg.py for a suite whose config is `config_name`."""
    return _TEMPLATE.format(
        config=config_name,
        key=SITE_KEY,
        ini=ini_name,
        initialize=_INITIALIZE if initialize else "",
        site=SITE_FILE,
    )


def finish_site(config, lit_config) -> None:
    """After the suite's own lit.cfg.py (a generated lit.site.cfg.py calls this): lit's
    `--param mlirpipe_repeat=N` repeats each file of the suite's own test format; a lit param
    of the plugin's that only a configure() suite's format applies is said to do nothing."""
    from .format import MlirShTest
    from .names import FILECHECK_PARAM, PIPELINES_PARAM, REPEAT_PARAM
    from .repeat import RepeatedFormat

    if isinstance(config.test_format, MlirShTest):
        return  # the suite calls configure(): its format applies them all
    if REPEAT_PARAM in lit_config.params:
        config.test_format = RepeatedFormat(config.test_format)
    for param in (FILECHECK_PARAM, PIPELINES_PARAM):
        if param in lit_config.params:
            lit_config.note(
                f"--param {param} does nothing in this suite: only a suite whose lit.cfg.py "
                f"calls pytest_mlirpipe.configure() applies it; pytest's "
                f"--{param.replace('_', '-')} applies it to this suite too"
            )
