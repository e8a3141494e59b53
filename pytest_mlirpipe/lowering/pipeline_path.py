"""Where pipeline files are looked for: the run's folders, then $MLIRPIPE_PIPELINES_PATH."""

from __future__ import annotations

import os
from collections.abc import Sequence

PIPELINES_PATH_ENV = "MLIRPIPE_PIPELINES_PATH"


def pipeline_dirs(extra_dirs: Sequence[str | os.PathLike]) -> list[str]:
    """`extra_dirs` first, then the folders of `$MLIRPIPE_PIPELINES_PATH`."""
    env = [d for d in os.environ.get(PIPELINES_PATH_ENV, "").split(os.pathsep) if d]
    return [*(str(d) for d in extra_dirs), *env]
