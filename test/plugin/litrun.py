"""Run `lit -v` on a folder of a pytester suite and read each file's verdict."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

_RESULT = re.compile(r"^(\w+): \S+ :: (\S+) \(", re.MULTILINE)


def lit_verdicts(cwd: Path, *args: str) -> tuple[dict[str, str], str]:
    """({file name: lit's code}, lit's whole output) of `lit -v ARGS` run in `cwd`."""
    ran = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-v", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    codes = {Path(m.group(2)).name: m.group(1) for m in _RESULT.finditer(ran.stdout)}
    return codes, ran.stdout + ran.stderr
