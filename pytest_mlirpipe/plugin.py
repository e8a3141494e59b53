"""The pytest shell: options, collection of .mlir RUN/CHECK files, one run object per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from .filetests.config import DEFAULT_SUFFIXES, EXCLUDED_DIRS
from .filetests.lit_runner import ISOLATION_MODES
from .items import CONTAINED, SESSION_KEY, MlirFile, MlirSession


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mlirpipe", "MLIR lowering-pipeline tests (pytest-mlirpipe)")
    group.addoption(
        "--mlirpipe-pipelines",
        action="append",
        default=[],
        metavar="DIR",
        help="extra directory of pipelines/*.toml (repeatable; ini: mlirpipe_pipelines)",
    )
    group.addoption(
        "--mlirpipe-suffixes",
        default=None,
        metavar="LIST",
        help="comma-separated suffixes of RUN/CHECK files to collect "
        f"(default {','.join(DEFAULT_SUFFIXES)}; ini: mlirpipe_suffixes)",
    )
    group.addoption(
        "--mlirpipe-isolation",
        default=None,
        choices=ISOLATION_MODES,
        help="how RUN lines run: fork (default: known tools in-process, in a forked child per "
        "file), none (in this process), subprocess (every tool a process, as lit does); "
        "ini: mlirpipe_isolation",
    )
    group.addoption(
        "--mlirpipe-timeout",
        default=None,
        metavar="SECONDS",
        help="per-file time limit, 0 for none (default 0; ini: mlirpipe_timeout)",
    )
    parser.addini(
        "mlirpipe_pipelines", "extra directories of pipelines/*.toml", type="paths", default=[]
    )
    parser.addini(
        "mlirpipe_suffixes",
        "suffixes of RUN/CHECK files to collect",
        type="args",
        default=list(DEFAULT_SUFFIXES),
    )
    parser.addini(
        "mlirpipe_tools",
        "tools RUN lines may name: NAME (found in mlirpipe_tool_dirs or PATH) or NAME=COMMAND",
        type="linelist",
        default=[],
    )
    parser.addini(
        "mlirpipe_tool_dirs", "directories searched for mlirpipe_tools", type="args", default=[]
    )
    parser.addini(
        "mlirpipe_features", "extra features for REQUIRES/UNSUPPORTED", type="args", default=[]
    )
    parser.addini("mlirpipe_isolation", "fork, none or subprocess", default="fork")
    parser.addini("mlirpipe_timeout", "per-file time limit in seconds (0: none)", default="0")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SESSION_KEY] = MlirSession.from_pytest_config(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    session = parent.config.stash.get(SESSION_KEY, None)
    if session is None or file_path.suffix not in session.suffixes:
        return None
    if any(part in EXCLUDED_DIRS for part in file_path.parts):
        return None
    if not session.is_test_file(file_path):
        return None
    return MlirFile.from_parent(parent, path=file_path)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line counting the files whose crash or hang was contained (workers' reports too)."""
    counts = {"crash": 0, "timeout": 0}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == CONTAINED and value in counts:
                    counts[value] += 1
    if any(counts.values()):
        terminalreporter.write_line(f"mlirpipe: {contained_summary(counts)} contained")


def contained_summary(counts: dict[str, int]) -> str:
    """'2 crashes and 1 timeout' (zero counts left out)."""
    words = {"crash": ("crash", "crashes"), "timeout": ("timeout", "timeouts")}
    parts = [f"{n} {words[k][n != 1]}" for k, n in counts.items() if n]
    return " and ".join(parts)
