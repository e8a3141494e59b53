"""A test's own copy of its suite's lit config, for changes that concern that test only."""

from __future__ import annotations

import copy
from typing import Any


def with_own_config(test, **changes: Any) -> None:
    """Give `test` its own copy of its suite's config, with `changes`; the suite's config,
    shared by every file of the suite, stays as it is."""
    config = copy.copy(test.config)
    for name, value in changes.items():
        setattr(config, name, value)
    test.config = config
