"""The pytest shell: options, collection of .mlir RUN/CHECK files, one run object per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from .filetests.config import DEFAULT_SUFFIXES, EXCLUDED_DIRS
from .items import MlirFile, MlirSession

SESSION_KEY = pytest.StashKey[MlirSession]()


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
    parser.addini(
        "mlirpipe_pipelines", "extra directories of pipelines/*.toml", type="paths", default=[]
    )
    parser.addini(
        "mlirpipe_suffixes",
        "suffixes of RUN/CHECK files to collect",
        type="args",
        default=list(DEFAULT_SUFFIXES),
    )


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
