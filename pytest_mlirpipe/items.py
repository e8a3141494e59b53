"""pytest items for RUN/CHECK files: one file, one test, lit's verdict mapped onto pytest's."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from .filetests.config import Settings
from .filetests.format import is_test_file
from .filetests.lit_runner import ISOLATION_MODES, FileVerdict, LitSession
from .filetests.report import format_failure


@dataclass
class MlirSession:
    """Per-run settings and the lit session, kept in `config.stash`."""

    suffixes: tuple[str, ...]
    lit: LitSession

    @classmethod
    def from_pytest_config(cls, config: pytest.Config) -> MlirSession:
        cli = config.getoption("--mlirpipe-suffixes")
        if cli:
            suffixes = tuple(s.strip() for s in cli.split(",") if s.strip())
        else:
            suffixes = tuple(config.getini("mlirpipe_suffixes"))
        bad = [s for s in suffixes if not s.startswith(".")]
        if bad:
            raise pytest.UsageError(
                f"mlirpipe: suffixes must start with '.', got {', '.join(repr(b) for b in bad)} "
                "(e.g. --mlirpipe-suffixes=.mlir,.td)"
            )
        dirs = [str(p) for p in config.getini("mlirpipe_pipelines")]
        dirs += list(config.getoption("--mlirpipe-pipelines"))
        if dirs:
            existing = os.environ.get("MLIRPIPE_PIPELINES_PATH", "")
            os.environ["MLIRPIPE_PIPELINES_PATH"] = os.pathsep.join(
                [*dirs, *([existing] if existing else [])]
            )
        isolation = config.getoption("--mlirpipe-isolation") or config.getini("mlirpipe_isolation")
        if isolation not in ISOLATION_MODES:
            raise pytest.UsageError(
                f"mlirpipe: mlirpipe_isolation must be one of {', '.join(ISOLATION_MODES)}, "
                f"got {isolation!r}"
            )
        timeout_text = config.getoption("--mlirpipe-timeout") or config.getini("mlirpipe_timeout")
        try:
            timeout = float(timeout_text)
            if timeout < 0:
                raise ValueError
        except ValueError:
            raise pytest.UsageError(
                f"mlirpipe: the timeout must be a number of seconds >= 0 (0: none), "
                f"got {timeout_text!r} (--mlirpipe-timeout / mlirpipe_timeout)"
            ) from None
        base = config.inipath.parent if config.inipath else config.rootpath
        settings = Settings(
            tools=tuple(config.getini("mlirpipe_tools")),
            tool_dirs=tuple(config.getini("mlirpipe_tool_dirs")),
            features=tuple(config.getini("mlirpipe_features")),
            suffixes=suffixes,
            base=str(base),
        )
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        exec_root = Path(config.rootpath) / "build" / "pytest" / worker
        return cls(suffixes, LitSession(exec_root, None, isolation, timeout, settings))

    def is_test_file(self, path: Path) -> bool:
        return is_test_file(path)


SESSION_KEY = pytest.StashKey[MlirSession]()

# user_properties key of a file whose in-process run crashed or timed out (then contained).
CONTAINED = "mlirpipe_contained"


class MlirFile(pytest.File):
    def collect(self):
        yield MlirItem.from_parent(self, name=self.path.name)


class FileTestFailure(Exception):
    """lit reported a failing verdict; carries its output for the report."""

    def __init__(self, verdict: FileVerdict):
        super().__init__(verdict.code)
        self.verdict = verdict


class MlirItem(pytest.Item):
    def runtest(self) -> None:
        session = self.config.stash[SESSION_KEY]
        verdict = session.lit.run(self.path)
        contained = "timeout" if verdict.code == "TIMEOUT" else "crash" if verdict.crash else None
        if contained:  # plain data: it reaches the xdist controller with the report
            self.user_properties.append((CONTAINED, contained))
        if verdict.code == "PASS":
            return
        if verdict.code == "UNSUPPORTED":
            pytest.skip(_reason(verdict.output) or "UNSUPPORTED")
        if verdict.code == "XFAIL":
            first = _reason(verdict.output)
            if "as MLIRPIPE-EXPECT:" in first:
                pytest.xfail(f"XFAIL: {first}")
            pytest.xfail("XFAIL: failed as the file's XFAIL line expects")
        raise FileTestFailure(verdict)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, FileTestFailure):
            path = Path(os.path.relpath(self.path, Path.cwd()))
            verbose = self.config.get_verbosity() > 1
            return format_failure(path, excinfo.value.verdict, verbose=verbose)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"mlir: {self.name}"


def _reason(output: str) -> str:
    return output.strip().splitlines()[0] if output.strip() else ""
