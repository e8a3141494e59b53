"""The validated pipeline catalog of a run: search path, pass-name checks, reuse while unchanged."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import PipelineSpecError, Problem
from .external import TOOL_DIRS_ENV, tool_passes
from .host_cpu import CPU_FEATURES_ENV, host_cpu_features, is_feature_name
from .passes.transform_script import SizesSyntaxError, parse_sizes
from .pipeline_path import PIPELINES_PATH_ENV, pipeline_dirs  # noqa: F401
from .spec import SIZES_ENV, PipelineCatalog, builtin_pipeline_dirs, load_catalog


def catalog_for(extra_dirs: Sequence[str | os.PathLike]) -> PipelineCatalog:
    """The validated catalog of `extra_dirs`, `$MLIRPIPE_PIPELINES_PATH` and the shipped
    pipelines, reused while no pipeline file changes (in-process tools ask once per RUN line).
    The pipelines of a broken file raise its problems when asked for (`.check()` raises them
    all); the others stay usable."""
    dirs = tuple(pipeline_dirs(extra_dirs))
    # Where a pipeline's tool is found decides which passes it is checked against.
    tool_path = (os.environ.get(TOOL_DIRS_ENV, ""), os.environ.get("PATH", ""))
    sizes = tuple(size_overrides().items())
    cpu = tuple(sorted(cpu_features()))  # chooses each stage's [stage.cpu.FEATURE] table
    return _load(dirs, sizes, cpu, (_files_state([*dirs, *builtin_pipeline_dirs()]), tool_path))


def cpu_features() -> frozenset[str]:
    """The host's CPU features, or those $MLIRPIPE_CPU_FEATURES names (each a feature name)."""
    features = host_cpu_features()
    bad = sorted(f for f in features if not is_feature_name(f))
    if bad and CPU_FEATURES_ENV in os.environ:  # the host's own flags are taken as they are
        names = ", ".join(repr(f) for f in bad)
        raise PipelineSpecError(
            Problem(
                f"${CPU_FEATURES_ENV}={os.environ[CPU_FEATURES_ENV]!r}: {names} "
                + ("is not a CPU feature name" if len(bad) == 1 else "are not CPU feature names"),
                hint=f"name features as the host lists them, e.g. {CPU_FEATURES_ENV}=avx2,fma "
                "(Linux: the flags in /proc/cpuinfo; empty: no feature)",
            )
        )
    return features


def size_overrides() -> dict[str, tuple[int, ...]]:
    """The transform-script sizes $MLIRPIPE_TRANSFORM_SIZES sets for this run."""
    text = os.environ.get(SIZES_ENV, "")
    try:
        return parse_sizes(text)
    except SizesSyntaxError as exc:
        raise PipelineSpecError(
            Problem(
                f"${SIZES_ENV}={text!r}: {exc}",
                hint=f"e.g. {SIZES_ENV}='block=32,128 register=8,32,1' "
                "(names are the sizes of a transform stage: `mlirpipe list` shows them)",
            )
        ) from None


@functools.lru_cache(maxsize=4)
def _load(dirs: tuple[str, ...], sizes: tuple, cpu: tuple, _state: tuple) -> PipelineCatalog:
    return load_catalog(
        dirs,
        pass_exists=is_known_pass,
        known_passes=known_pass_names,
        tool_passes=tool_passes,
        size_overrides=dict(sizes),
        cpu_features=cpu,
        keep_going=True,  # a broken file of the user's leaves the other pipelines usable
    )


def _files_state(dirs: Sequence[str | os.PathLike]) -> tuple:
    """Absolute paths, sizes and mtimes of the pipeline files under `dirs`."""
    state: list[object] = []
    for d in dirs:
        root = Path(d).resolve()
        state.append(str(root))
        if root.is_dir():
            for f in sorted(root.glob("*.toml")):
                st = f.stat()
                state.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(state)


def is_known_pass(name: str) -> bool:
    """A pass of the project's Python passes or of the MLIR bindings' registry."""
    from .. import mlir_env  # the bindings load only when a pass name is checked
    from . import passes

    return passes.get(name) is not None or mlir_env.is_registered_pass(name)


def known_pass_names(extra: Iterable[str] = ()) -> list[str]:
    """Every pass name usable in a pipeline, for close-match hints."""
    from .. import mlir_env
    from . import passes

    return sorted({*mlir_env.registered_pass_names(), *passes.all_passes(), *extra})
