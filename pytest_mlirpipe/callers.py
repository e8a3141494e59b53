"""The user's code that called into the package: the first frame outside it."""

from __future__ import annotations

import os
from pathlib import Path
from types import FrameType

_PACKAGE = str(Path(__file__).parent) + os.sep


def outside(frame: FrameType | None) -> tuple[FrameType | None, int]:
    """The first frame from `frame` up whose code is not this package's (None when there is
    none), and how many frames above `frame` it is."""
    up = 0
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, up = frame.f_back, up + 1
    return frame, up
