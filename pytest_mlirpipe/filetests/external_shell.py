"""FileCheck for suites that run RUN lines in an external shell: the engine asked for comes
first on the RUN lines' PATH (that shell runs whatever FileCheck it finds there)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from .own_config import with_own_config

# `FileCheck` and `filecheck` scripts that run tools/filecheck.py with $MLIRPIPE_PYTHON.
SHIM_DIR = Path(__file__).with_name("shim")
PYTHON_ENV = "MLIRPIPE_PYTHON"
# The program a shim records for and then runs (see the shims), by the name RUN lines call.
# The RUN lines' own PATH, on which the shim starts that program.
ORIGINAL_PATH_ENV = "MLIRPIPE_FILECHECK_PATH"
DIRECT_ENV = {
    "FileCheck": "MLIRPIPE_FILECHECK_DIRECT",
    "filecheck": "MLIRPIPE_FILECHECK_PORT_DIRECT",
}


def uses_external_shell(test) -> bool:
    return bool(getattr(test.config.test_format, "execute_external", False))


def with_chosen_filecheck(test, engine: str | None, always: bool = False) -> None:
    """Put the project's FileCheck first on the PATH of `test`'s RUN lines when they run in an
    external shell and an engine was chosen (`engine`: python, llvm or both), when that PATH
    has no FileCheck at all (then LLVM's in /usr/lib/llvm-NN/bin, else the Python port), or
    `always` (--mlirpipe-repeat: the project's FileCheck writes down what it is given; with no
    engine chosen, a program of that name on the PATH still checks, as it would have)."""
    if not uses_external_shell(test):
        return
    environment = test.config.environment
    path = environment.get("PATH", os.environ.get("PATH", ""))
    if not engine and not always and shutil.which("FileCheck", path=path):
        return
    changed = {
        **environment,
        "PATH": os.pathsep.join([str(SHIM_DIR), path]),
        PYTHON_ENV: sys.executable,
    }
    if engine:
        from ..tools.filecheck import ENGINE_ENV

        changed[ENGINE_ENV] = engine
    else:  # the shim records what it is given and starts the program the PATH has, on it
        changed[ORIGINAL_PATH_ENV] = path
        own = [p for p in path.split(os.pathsep) if p and not _is_shim_dir(p)]
        for name, variable in DIRECT_ENV.items():
            found = shutil.which(name, path=os.pathsep.join(own))
            if found:
                changed[variable] = os.path.abspath(found)
    with_own_config(test, environment=changed)


def _is_shim_dir(folder: str) -> bool:
    """Whether `folder` is the shims' own (a run inside a run has it on its PATH already)."""
    try:
        return os.path.samefile(folder, SHIM_DIR)
    except OSError:
        return False
