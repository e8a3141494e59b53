"""Content-keyed cache of lowered modules and shared libraries (atomic writes, safe under xdist)."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import sys
from collections.abc import Iterable
from pathlib import Path

from ..atomic import write_atomic
from ..lowering.host_cpu import first_cpu_fields

CACHE_ENV = "MLIRPIPE_CACHE_DIR"
# Bump when what is stored, or how it is produced, changes meaning.
FORMAT = "2"


def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pytest-mlirpipe" / "artifacts"


@functools.cache
def _toolchain_tag() -> str:
    """What else decides the artifact: the torch-mlir build that lowers and compiles (read
    once: the build a running process loaded cannot change under it)."""
    try:
        from importlib.metadata import version

        return "torch-mlir " + version("torch-mlir")
    except Exception:  # pragma: no cover - metadata missing in odd installs
        return "torch-mlir unknown"


def cache_key(parts: Iterable[str]) -> str:
    """The key of an artifact made from `parts` by this toolchain and this project's code
    (its passes, shims and runtime) with the pass modules of $MLIRPIPE_PASS_MODULES."""
    h = hashlib.sha256()
    for p in (FORMAT, _toolchain_tag(), project_code_digest(), *pass_code_digests(), *parts):
        data = p.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:32]


# The package's code that decides what an artifact holds: the lowering (pipelines, stages,
# the project's own passes) and the execution side (importers, generated C shims, runtime).
_PROJECT_CODE = ("lowering", "execution", "mlir_env.py", "model.py")


@functools.cache
def project_code_digest() -> str:
    """A digest of the project's own code (read once: it cannot change in a running process)."""
    root = Path(__file__).resolve().parent.parent
    files: list[Path] = []
    for part in _PROJECT_CODE:
        files += sorted((root / part).rglob("*.py")) if (root / part).is_dir() else [root / part]
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + file_digest(f).encode())
    return "project " + h.hexdigest()


_FILE_DIGESTS: dict[Path, tuple[int, int, str]] = {}


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, recomputed only when its size or mtime changed."""
    try:
        st = path.stat()
        known = _FILE_DIGESTS.get(path)
        if known is not None and known[:2] == (st.st_mtime_ns, st.st_size):
            return known[2]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"
    _FILE_DIGESTS[path] = (st.st_mtime_ns, st.st_size, digest)
    return digest


def pass_code_digests() -> list[str]:
    """The source of every Python pass that a pipeline may run: the modules named in
    $MLIRPIPE_PASS_MODULES and those of passes registered by entry points or by hand."""
    from ..errors import MlirpipeError
    from ..lowering import passes

    named = [n.strip() for n in os.environ.get(passes.PASS_MODULES_ENV, "").split(",")]
    try:
        registered = passes.all_passes()  # imports the named modules first
    except MlirpipeError as exc:  # the lowering reports it if a pipeline needs the pass
        return [f"pass modules {','.join(named)} not importable: {exc}"]
    modules = {p.factory.__module__ for p in registered.values()} | {n for n in named if n}
    out = []
    for name in sorted(modules):
        module = sys.modules.get(name)
        source = getattr(module, "__file__", None)
        out.append(f"pass module {name} {file_digest(Path(source)) if source else 'no file'}")
    return out


@functools.cache
def host_cpu() -> str:
    """The CPU that native code is compiled for (the JIT targets the host's features)."""
    keys = ("model name", "flags", "Features", "CPU part")
    fields = {k: v for k, v in first_cpu_fields().items() if k in keys}
    fields["machine"] = platform.machine() + " " + platform.processor()
    return "host " + "; ".join(f"{k}={v}" for k, v in sorted(fields.items()))


class ArtifactCache:
    """Files under `root/<key[:2]>/<key>/`; a reader sees a whole file or none.

    Every write goes through `atomic.write_atomic` (a uniquely named temporary file in the
    same directory, then one rename), so two xdist workers compiling the same case both
    succeed and either copy wins. `root=None` disables the cache.
    """

    def __init__(self, root: Path | str | None):
        self.root = Path(root) if root is not None else None

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def _dir(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / key

    def path(self, key: str, name: str) -> Path | None:
        """The cached file, if present."""
        if self.root is None:
            return None
        p = self._dir(key) / name
        return p if p.is_file() else None

    def read_text(self, key: str, name: str) -> str | None:
        p = self.path(key, name)
        if p is None:
            return None
        try:
            return p.read_text()
        except OSError:
            return None

    def write_text(self, key: str, name: str, text: str) -> None:
        self._write(key, name, text.encode())

    def write_bytes(self, key: str, name: str, content: bytes) -> None:
        self._write(key, name, content)

    def store_file(self, key: str, name: str, source: Path) -> Path | None:
        """Copy `source` into the cache; returns the cached path (None when disabled)."""
        try:
            content = source.read_bytes()
        except OSError:
            return None
        return self._write(key, name, content)

    def _write(self, key: str, name: str, content: bytes) -> Path | None:
        if self.root is None:
            return None
        target = self._dir(key) / name
        try:
            write_atomic(target, content, make_parents=True)
        except OSError:
            return None  # a read-only or full disk costs the cache, not the test
        return target
