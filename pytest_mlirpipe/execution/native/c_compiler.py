"""Find the C compiler that builds the runtime library and links ahead-of-time models."""

from __future__ import annotations

import os
import shutil

from ...errors import MlirpipeError, Problem


def find_c_compiler() -> str:
    """$CC, else cc, gcc or clang on PATH; a clear error when there is none."""
    cc = os.environ.get("CC")
    candidates = [cc] if cc else ["cc", "gcc", "clang"]
    for c in candidates:
        found = shutil.which(c)
        if found:
            return found
    raise MlirpipeError(
        Problem(
            "no C compiler found for ahead-of-time compilation "
            f"(looked for {', '.join(repr(c) for c in candidates)}"
            + (" from $CC" if cc else " on PATH")
            + ")",
            hint="install one (apt-get install gcc) or set CC to its path; "
            "JIT execution (mode='jit') needs no C compiler",
        )
    )
