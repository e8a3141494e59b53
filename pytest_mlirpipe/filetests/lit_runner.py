"""Run one RUN/CHECK file exactly as lit would: lit's discovery, parser, shell and verdicts."""

from __future__ import annotations

import gc
import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from .config import configure


@dataclass(frozen=True, slots=True)
class FileVerdict:
    """lit's verdict on one file: code name (PASS, FAIL, XFAIL, ...) and its output."""

    code: str
    output: str
    is_failure: bool
    elapsed: float | None = None


class LitSession:
    """lit's LitConfig plus a cache of discovered suites, shared by all files of a run."""

    def __init__(self, exec_root: str | os.PathLike, params: dict[str, str] | None = None):
        import lit.LitConfig

        self.exec_root = Path(exec_root)
        self.lit_config = lit.LitConfig.LitConfig(
            progname="pytest-mlirpipe",
            path=[],
            diagnostic_level="error",
            useValgrind=False,
            valgrindLeakCheck=False,
            valgrindArgs=[],
            noExecute=False,
            debug=False,
            isWindows=False,
            order="lexical",
            params=dict(params or {}),
        )
        self._cache: dict = {}
        self._lock = threading.Lock()

    def make_test(self, path: Path):
        """lit's Test for `path`: the suite of the nearest lit.cfg.py, else our default config."""
        import lit.discovery
        import lit.Test
        import lit.TestingConfig

        with self._lock:
            suite, in_suite = lit.discovery.getTestSuite(str(path), self.lit_config, self._cache)
            if suite is None:
                config = lit.TestingConfig.TestingConfig.fromdefaults(self.lit_config)
                configure(config, source_root=path.parent, exec_root=self.exec_root)
                suite = lit.Test.TestSuite(
                    "mlirpipe", str(path.parent), str(self.exec_root), config
                )
                in_suite = (path.name,)
                local = config
            else:
                local = lit.discovery.getLocalConfig(
                    suite, in_suite[:-1], self.lit_config, self._cache
                )
        return lit.Test.Test(suite, in_suite, local)

    def run(self, path: Path) -> FileVerdict:
        """Execute the file's RUN lines with lit's internal shell and return lit's verdict."""
        import time

        import lit.Test

        test = self.make_test(path)
        start = time.perf_counter()
        if test.config.unsupported:
            result = lit.Test.Result(
                lit.Test.UNSUPPORTED, "the suite's config marks it unsupported"
            )
        else:
            with warnings.catch_warnings():
                # lit's internal shell leaves pipe files to the garbage collector.
                warnings.simplefilter("ignore", ResourceWarning)
                result = test.config.test_format.execute(test, self.lit_config)
                gc.collect()
            if isinstance(result, tuple):
                result = lit.Test.Result(*result)
        result.elapsed = time.perf_counter() - start
        test.setResult(result)  # lit's own XFAIL/XPASS logic
        code = test.result.code
        return FileVerdict(code.name, test.result.output or "", code.isFailure, result.elapsed)
