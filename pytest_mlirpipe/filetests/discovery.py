"""Which files lit would run: its suites, local configs, suffixes, excludes and test formats."""

from __future__ import annotations

import contextlib
import io
import os
import threading
from pathlib import Path

# Folders lit never descends into, whatever the configs say (lit.discovery.getTestsInSuite).
_NEVER = ("Output", ".svn", ".git")

SITE_HINT = (
    "this config reads what a build's lit.site.cfg.py sets: run `mlirpipe init` in the "
    "repository to write one, or run the suite from the build folder"
)


class SuiteConfigError(Exception):
    """A suite's lit.cfg.py (or the site config before it) stopped while lit loaded it."""

    def __init__(self, config_path: str, reason: str):
        super().__init__(config_path, reason)
        self.config_path = config_path
        self.reason = reason

    def message(self, start: Path) -> str:
        where = os.path.relpath(self.config_path, start)
        return (
            f"{where}: lit could not load this suite's config: {self.reason}\n  hint: {SITE_HINT}"
        )


class LitDiscovery:
    """lit's test discovery asked file by file: the suite holding a file, the local configs
    down to its folder, and the tests its format finds there; shares the runner's caches."""

    def __init__(self, lit_config, cache: dict, lock: threading.Lock):
        self.lit_config = lit_config
        self._cache = cache
        self._lock = lock
        self._tests_in: dict = {}
        self._broken: dict[str, SuiteConfigError] = {}
        self._configs: dict[Path, str | None] = {}

    def collects(self, path: Path) -> bool | None:
        """True if lit runs `path` as a test, False if not, None when no lit suite holds it.
        Raises SuiteConfigError when the suite's config does not load."""
        with self._lock:
            suite, in_suite = self._suite(path)
            if suite is None:
                return None
            folder = in_suite[:-1]
            if self._excluded(suite, folder):
                return False
            return in_suite[-1] in self._tests_in_folder(suite, folder)

    def _suite(self, path: Path):
        import lit.discovery

        if path.parent not in self._configs:
            self._configs[path.parent] = _config_above(path.parent, self.lit_config)
        config_path = self._configs[path.parent]
        if config_path is None:
            return None, ()
        if config_path in self._broken:
            raise self._broken[config_path]
        try:
            with _quiet() as said:
                return lit.discovery.getTestSuite(str(path), self.lit_config, self._cache)
        except (Exception, SystemExit) as exc:
            error = SuiteConfigError(config_path, _reason(said.getvalue(), exc))
            self._broken[config_path] = error
            raise error from None

    def _local(self, suite, folder: tuple[str, ...]):
        import lit.discovery

        return lit.discovery.getLocalConfig(suite, folder, self.lit_config, self._cache)

    def _excluded(self, suite, folder: tuple[str, ...]) -> bool:
        """A folder on the way down that lit skips: excluded by its parent's config."""
        for depth, name in enumerate(folder):
            if name in _NEVER or name in self._local(suite, folder[:depth]).excludes:
                return True
        return False

    def _tests_in_folder(self, suite, folder: tuple[str, ...]) -> frozenset[str]:
        key = (suite, folder)
        if key not in self._tests_in:
            local = self._local(suite, folder)
            found: frozenset[str] = frozenset()
            if local.test_format is not None and not local.standalone_tests:
                tests = local.test_format.getTestsInDirectory(suite, folder, self.lit_config, local)
                found = frozenset(t.path_in_suite[-1] for t in tests)
            self._tests_in[key] = found
        return self._tests_in[key]


def _config_above(folder: Path, lit_config) -> str | None:
    """The site or suite config lit would load for a file in `folder` (nearest one up)."""
    import lit.discovery

    for candidate in (folder, *folder.parents):
        found = lit.discovery.dirContainsTestSuite(str(candidate), lit_config)
        if found:
            return os.path.abspath(found)
    return None


@contextlib.contextmanager
def _quiet():
    """lit's own messages while a config loads (`lit_config.fatal` writes, then exits)."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        yield said


def _reason(said: str, exc: BaseException) -> str:
    """What lit's `fatal` said (of a config that raised: the exception, its traceback's last
    line), else the exception."""
    _, fatal, message = said.partition(": fatal: ")
    if not fatal:
        return f"{type(exc).__name__}: {exc}"
    if message.startswith("unable to parse config file"):
        return [ln.strip() for ln in message.splitlines() if ln.strip()][-1]
    return message.strip()
