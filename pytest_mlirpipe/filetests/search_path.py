"""Where the RUN lines of a test look for pipeline files: the `mlirpipe_pipelines` lit param."""

from __future__ import annotations

import os
from typing import Any

from ..lowering.pipeline_path import PIPELINES_PATH_ENV
from .names import PIPELINES_PARAM


def pipeline_search_path(config, litConfig) -> dict[str, Any]:
    """The config change that puts the folders of the `mlirpipe_pipelines` lit param first on
    the RUN lines' pipeline search path (none without the param)."""
    extra = litConfig.params.get(PIPELINES_PARAM)
    if not extra:
        return {}
    existing = config.environment.get(PIPELINES_PATH_ENV)
    value = os.pathsep.join([extra, *([existing] if existing else [])])
    return {"environment": {**config.environment, PIPELINES_PATH_ENV: value}}
