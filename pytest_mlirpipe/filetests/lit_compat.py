"""What moved between the lit versions the project supports (17.0, 18.1 and 23.1), in one place."""

from __future__ import annotations

import ast
import copy
import inspect
import re

import lit
import lit.LitConfig
import lit.TestingConfig
import lit.TestRunner

try:  # lit 23 moved the shell's data into a module of its own
    from lit.ShellEnvironment import ShellCommandResult, processRedirects
except ImportError:  # lit 17 and 18
    from lit.TestRunner import (
        ShellCommandResult,
        processRedirects,
    )

__all__ = [
    "FAILED_STATUS",
    "LIT_VERSION",
    "ShellCommandResult",
    "expand_late_substitutions",
    "external_run",
    "new_lit_config",
    "processRedirects",
    "shell_parse_error",
    "time_limited",
]

LIT_VERSION: tuple[int, ...] = tuple(lit.__versioninfo__)

# The line lit's internal shell writes under a command that failed, its status in `status`:
# `# error: command failed with exit status: N` (lit 18 and 23), without the `# ` in lit 17.
FAILED_STATUS = re.compile(
    ("^# " if LIT_VERSION >= (18,) else "^")
    + r"error: command failed with exit status: (?P<status>-?\d+)$",
    re.M,
)

# lit 23 reads a test's time limit from its suite's config; lit 17 and 18 (and the lits
# between, before the move) from the LitConfig: told by the config's own time-limit parameter.
_LIMIT_ON_TEST_CONFIG = (
    "maxIndividualTestTime"
    in inspect.signature(lit.TestingConfig.TestingConfig.__init__).parameters
)


def new_lit_config(params: dict[str, str], progname: str = "pytest-mlirpipe"):
    """A LitConfig as lit's main builds one, quiet but for errors, with `params` (`-D`)."""
    keywords = inspect.signature(lit.LitConfig.LitConfig).parameters
    # lit 23 says how much to report with `diagnostic_level`; lit 17 and 18 with `quiet`
    by_version: dict[str, object] = (
        {"diagnostic_level": "error"} if "diagnostic_level" in keywords else {"quiet": True}
    )
    # lit 17's external shell says which command it runs only when asked (`lit -a`); lit 18
    # and 23's always do, so that a failure report can name the RUN line that failed
    if "echo_all_commands" in keywords:
        by_version["echo_all_commands"] = True
    return lit.LitConfig.LitConfig(
        progname=progname,
        path=[],
        **by_version,
        useValgrind=False,
        valgrindLeakCheck=False,
        valgrindArgs=[],
        noExecute=False,
        debug=False,
        isWindows=False,
        order="lexical",
        params=dict(params),
    )


def expand_late_substitutions(command, shenv) -> list:
    """A command's arguments after the substitutions lit makes only when it runs the command
    (lit 23's `%{readfile:...}`); earlier lits have none."""
    expand = getattr(lit.TestRunner, "_expandLateSubstitutions", None)
    if expand is None:
        return list(command.args)
    return expand(command, list(command.args), shenv.cwd, shenv.normalize_slashes)


def time_limited(test, lit_config):
    """The LitConfig to run `test` with, so that lit applies the test's own time limit
    (`test.config.maxIndividualTestTime`, set on the test's own config copy): `lit_config`
    itself where lit reads the limit from the test's config (lit 23), else a copy of it that
    carries the limit."""
    limit = getattr(test.config, "maxIndividualTestTime", 0) or 0
    if _LIMIT_ON_TEST_CONFIG or not limit or limit == lit_config.maxIndividualTestTime:
        return lit_config
    own = copy.copy(lit_config)
    # lit 17 and 18's setter takes whole seconds only, where their timers take any number
    own._maxIndividualTestTime = limit
    return own


# lit 18 and 23: `# shell parser error on RUN: at line N: COMMAND`, and the file is UNRESOLVED;
# lit 17: `shell parser error on: ": 'RUN: at line N';   COMMAND"` (the line's repr), a FAIL.
_PARSE_ERROR = re.compile(
    r"^(?:# )?shell parser error on(?: RUN: at line (\d+): (.*)|: (.*))$", re.M
)
_LIT17_LINE = re.compile(r": 'RUN: at line (\d+)';\s*(.*)", re.S)


def shell_parse_error(output: str) -> tuple[int, str] | None:
    """(RUN line, command) that lit's internal shell could not parse, from lit's message in
    `output`; None when it says no such thing."""
    m = _PARSE_ERROR.search(output)
    if m is None:
        return None
    if m.group(1):
        return int(m.group(1)), m.group(2).strip()
    try:
        line = ast.literal_eval(m.group(3))
    except (ValueError, SyntaxError):
        return None
    at = _LIT17_LINE.fullmatch(line) if isinstance(line, str) else None
    return (int(at.group(1)), at.group(2).strip()) if at else None


# What lit's external shell prints as it starts each RUN line (the script stops at the first
# that fails): `COMMAND # RUN: at line N` (lit 23), `RUN: at line N: COMMAND` (lit 18), and
# lit 17's `set -x` trace `+ : 'RUN: at line N'`, whose command is the script's line
# `: 'RUN: at line N';   COMMAND` that lit's report shows.
_EXTERNAL_RUN = re.compile(
    r"^(?:(?P<command>.+?) # RUN: at line (?P<line>\d+)"
    r"|RUN: at line (?P<line_>\d+): (?P<command_>.+)"
    r"|\+ : '?RUN: at line (?P<traced>\d+)'?)$",
    re.M,
)


def external_run(output: str) -> tuple[int, str] | None:
    """(RUN line, command) of the last RUN line lit's external shell started, from lit's
    output; None when the output names none."""
    runs = list(_EXTERNAL_RUN.finditer(output))
    if not runs:
        return None
    last = runs[-1]
    traced = last.group("traced")
    if traced is None:
        line, command = last.group("line") or last.group("line_"), last.group("command")
        return int(line), command or last.group("command_")
    script = re.search(rf"^: 'RUN: at line {traced}';\s*(?P<command>.*)$", output, re.M)
    return (int(traced), script.group("command")) if script else None
