"""Which files lit would run: its suites, local configs, suffixes, excludes and test formats."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sysconfig
import threading
from pathlib import Path

# Folders lit never descends into, whatever the configs say (lit.discovery.getTestsInSuite).
_NEVER = ("Output", ".svn", ".git")

SITE_HINT = (
    "there is no lit.site.cfg.py beside it, and this config reads what a build's "
    "lit.site.cfg.py sets up (config values, lit.llvm's llvm_config): run `mlirpipe init` in "
    "the repository to write one, or run the suite from the build folder"
)
FIX_HINT = (
    "fix the config there, or correct the value it reads in the mlirpipe_lit_site lines of "
    "the pytest ini file (pyproject.toml)"
)
# What a config raises when it reads a value only a build's site config sets.
_SITE_VALUE_ERRORS = ("AttributeError", "NameError", "KeyError")
# The names lit looks for in a suite's folder before its main config (lit.discovery), that
# main config's names, and a folder's local config's, each list first found first (LitConfig).
SITE_CONFIG_NAMES = ("lit.site.cfg.py", "lit.site.cfg")
MAIN_CONFIG_NAMES = ("lit.cfg.py", "lit.cfg")
LOCAL_CONFIG_NAMES = ("lit.local.cfg.py", "lit.local.cfg")
# A frame of the traceback lit prints when a config raised.
_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in ', re.M)


class SuiteConfigError(Exception):
    """A suite's lit.cfg.py (or the site config before it) stopped while lit loaded it."""

    def __init__(self, config_path: str, reason: str, where: tuple[str, int] | None = None):
        super().__init__(config_path, reason)
        self.config_path = config_path
        self.reason = reason
        self.where = where  # the user's config file and line that raised, if any

    @property
    def without_site_config(self) -> bool:
        """lit found the suite's main config with no site config beside it."""
        folder = os.path.dirname(self.config_path)
        return not any(os.path.exists(os.path.join(folder, n)) for n in SITE_CONFIG_NAMES)

    def message(self, start: Path) -> str:
        config = os.path.relpath(self.config_path, start)
        where, which = config, "this suite's config"
        if self.where is not None:
            where = f"{os.path.relpath(self.where[0], start)}:{self.where[1]}"
            if os.path.abspath(self.where[0]) != self.config_path:
                which = f"the suite config {config}"
        hint = FIX_HINT
        if self.without_site_config:
            reads_site_values = self.reason.startswith(_SITE_VALUE_ERRORS)
            hint = SITE_HINT if reads_site_values else "fix the config there"
        own = "\n  hint: " in self.reason  # a message of ours (the site values) has its own
        tail = "" if own else f"\n  hint: {hint}"
        return f"{where}: lit could not load {which}: {self.reason}{tail}"


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
        self._folders: dict[Path, frozenset[str] | None] = {}
        self._reported: set[str] = set()
        self._scanned: set[Path] = set()
        self.ignored_local_configs: set[Path] = set()  # lit.local.cfg files no suite reads

    def collects(self, path: Path) -> bool | None:
        """True if lit runs `path` as a test, False if not, None when no lit suite holds it.
        Raises SuiteConfigError when the suite's config does not load."""
        with self._lock:
            tests = self._tests_of(path.parent)
            return None if tests is None else path.name in tests

    def tests_in(self, folder: Path) -> frozenset[str] | None:
        """The names of the files lit runs in `folder` (none in a folder lit skips); None when
        no lit suite holds it or its suite's config does not load."""
        with self._lock:
            try:
                return self._tests_of(folder)
            except SuiteConfigError:
                return None

    def _tests_of(self, folder: Path) -> frozenset[str] | None:
        """What lit runs in `folder`, worked out once per folder."""
        if folder not in self._folders:
            suite, in_suite = self._suite(folder)
            tests: frozenset[str] | None
            if suite is None:
                tests = None
            elif self._excluded(suite, in_suite):
                tests = frozenset()
            else:
                tests = self._tests_in_folder(suite, in_suite)
            self._folders[folder] = tests
        return self._folders[folder]

    def broken_suite(self, folder: Path) -> SuiteConfigError | None:
        """The error of the suite whose root is `folder`, if its config does not load (None
        when it loads, or when no suite starts there)."""
        import lit.discovery

        with self._lock:
            found = lit.discovery.dirContainsTestSuite(str(folder), self.lit_config)
            if not found:
                return None
            try:
                self._load(os.path.abspath(found), str(folder))
            except SuiteConfigError as error:
                return error
            return None

    def note_outside_suites(self, folder: Path, top: Path) -> None:
        """Remember the lit.local.cfg files from `folder` up to `top` (a folder of files no
        lit suite holds): nothing reads them."""
        names = self.lit_config.local_config_names
        with self._lock:
            for here in (folder, *folder.parents):
                if here in self._scanned or not here.is_relative_to(top):
                    return
                self._scanned.add(here)
                self.ignored_local_configs.update(here / n for n in names if (here / n).is_file())

    def first_report(self, error: SuiteConfigError) -> bool:
        """True the first time a broken suite's error is to be shown (once per suite)."""
        with self._lock:
            first = error.config_path not in self._reported
            self._reported.add(error.config_path)
            return first

    def _suite(self, folder: Path):
        """lit's (suite, path in suite) of `folder`; raises SuiteConfigError (every time) when
        the suite's config does not load."""
        config_path = self._nearest_config(folder)
        if config_path is None:
            return None, ()
        return self._load(config_path, str(folder))

    def _nearest_config(self, folder: Path) -> str | None:
        """The site or suite config lit would load for a file in `folder` (nearest one up),
        its parents' answers reused."""
        if folder not in self._configs:
            import lit.discovery

            found = lit.discovery.dirContainsTestSuite(str(folder), self.lit_config)
            if found:
                self._configs[folder] = os.path.abspath(found)
            else:
                up = folder.parent
                self._configs[folder] = None if up == folder else self._nearest_config(up)
        return self._configs[folder]

    def _load(self, config_path: str, item: str):
        """lit's (suite, path in suite) of `item`, whose nearest config is `config_path`."""
        import lit.discovery

        if config_path in self._broken:
            raise self._broken[config_path]
        try:
            with _quiet() as said:
                return lit.discovery.getTestSuite(item, self.lit_config, self._cache)
        except (Exception, SystemExit) as exc:
            error = _failure(said.getvalue(), exc, config_path)
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
            found: frozenset[str] | None = frozenset()
            if local.test_format is not None and not local.standalone_tests:
                found = _file_based_tests(suite, folder, local)
                if found is None:
                    format_ = local.test_format
                    tests = format_.getTestsInDirectory(suite, folder, self.lit_config, local)
                    found = frozenset(t.path_in_suite[-1] for t in tests)
            self._tests_in[key] = found
        return self._tests_in[key]


def _file_based_tests(suite, folder: tuple[str, ...], local) -> frozenset[str] | None:
    """The tests lit's FileBasedTest finds in the folder (ShTest's way), telling the files
    by name before asking the file system about the few that have a test suffix (lit asks
    about every file); None for a format that finds its tests its own way."""
    from lit.formats.base import FileBasedTest

    format_ = type(local.test_format)
    if (
        format_.getTestsInDirectory is not FileBasedTest.getTestsInDirectory
        or format_.getTestsForPath is not FileBasedTest.getTestsForPath
        or not all(isinstance(s, str) for s in local.suffixes)
    ):
        return None
    source = suite.getSourcePath(folder)
    suffixes, excludes = tuple(local.suffixes), local.excludes
    return frozenset(
        name
        for name in os.listdir(source)
        if not name.startswith(".")
        and name not in excludes
        and name.endswith(suffixes)
        and not os.path.isdir(os.path.join(source, name))
    )


@contextlib.contextmanager
def _quiet():
    """lit's own messages while a config loads (`lit_config.fatal` writes, then exits)."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        yield said


def _failure(said: str, exc: BaseException, config_path: str) -> SuiteConfigError:
    """What lit's `fatal` said (of a config that raised: the exception, located at the
    innermost frame of the user's files in its traceback), else the exception."""
    _, fatal, message = said.partition(": fatal: ")
    if not fatal:
        return SuiteConfigError(config_path, f"{type(exc).__name__}: {exc}")
    if not message.startswith("unable to parse config file"):
        return SuiteConfigError(config_path, message.strip())
    reason = [ln.strip() for ln in message.splitlines() if ln.strip()][-1]
    others = _not_users_folders()
    frames = [f for f in _FRAME.finditer(message) if not f["path"].startswith(others)]
    where = (frames[-1]["path"], int(frames[-1]["line"])) if frames else None
    return SuiteConfigError(config_path, reason, where)


def _not_users_folders() -> tuple[str, ...]:
    """Where the frames of lit, of this package and of Python itself live."""
    import lit

    ours = Path(__file__).resolve().parents[1]
    folders = {os.path.dirname(lit.__file__), str(ours)}
    folders |= {sysconfig.get_path(n) for n in ("stdlib", "purelib", "platlib")}
    return tuple(os.path.join(f, "") for f in folders)
