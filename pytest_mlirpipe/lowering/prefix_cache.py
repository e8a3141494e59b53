"""Stage-prefix cache: the same input lowered through the same first stages is computed once."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..model import Pipeline, Snapshot

# Scoped, not global state: `prefix_cache()` sets it for one file's RUN lines and resets it on
# exit; the tools those lines call in-process (mlirpipe-opt) reach the stage runner with no
# argument to pass a cache through, so the runner looks here.
_ACTIVE: contextvars.ContextVar[PrefixCache | None] = contextvars.ContextVar(
    "mlirpipe_prefix_cache", default=None
)


@dataclass(frozen=True, slots=True)
class CachedPrefix:
    """The module after the last stage of a prefix (kept pristine: users get clones)."""

    module: object  # ir.Module, in the cache's context; None when an external tool ran it
    snapshots: tuple[Snapshot, ...]


@dataclass(slots=True)
class PrefixCache:
    """Modules after each stage prefix, keyed by input text, pipeline content and options
    (the run's and the pass-option defaults it gave).

    Several RUN lines of one file typically lower the same input through growing prefixes of
    one pipeline (`--stop-after` each stage in turn); with the cache each stage runs once.
    All entries live in one MLIR context, which callers must use for the cached modules.
    """

    context: object = None  # ir.Context, created on first use
    entries: dict[tuple, CachedPrefix] = field(default_factory=dict)
    hits: int = 0
    stages_reused: int = 0

    def ensure_context(self):
        if self.context is None:
            from ..mlir_env import new_context

            self.context = new_context()
        return self.context


def active() -> PrefixCache | None:
    """The cache of the current scope, if any (none outside `prefix_cache()`)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def prefix_cache() -> Iterator[PrefixCache]:
    """Cache stage prefixes within this scope (e.g. one test file); dropped when it ends."""
    cache = PrefixCache()
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)
        cache.entries.clear()


def prefix_key(
    source: str,
    source_name: str,
    pipeline: Pipeline,
    first: int,
    stages: Sequence[str],
    verify_each: bool,
    option_defaults: tuple = (),
) -> tuple:
    """Key of the module after running `stages` (in order, starting at index `first`).

    `option_defaults` are the (pass, option, value) defaults those stages' passes took from the
    caller rather than from the pipeline text (e.g. the BLAS symbol prefix): another prefix
    must not find this module."""
    digest = hashlib.blake2b(source.encode(), digest_size=16).hexdigest()
    content = (tuple((s.name, s.passes) for s in pipeline.stages), pipeline.tool)
    return (digest, source_name, content, first, tuple(stages), verify_each, option_defaults)
