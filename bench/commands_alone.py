"""The floor of any runner of an external-shell lit suite: the scripts lit wrote for its tests
(`Output/*.script` under the suite's exec root, left by an earlier lit run) run with bash,
`--jobs` at a time, and nothing else: no discovery, no parsing, no verdicts.

    python bench/commands_alone.py EXEC_ROOT --path DIR[:DIR...] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def run_script(script: Path, env: dict[str, str]) -> int:
    """One test's script as lit's external shell runs it (its output captured, as lit does)."""
    done = subprocess.run(
        ["/bin/bash", str(script)], cwd=script.parent, env=env, capture_output=True, check=False
    )
    return done.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("exec_root", type=Path)
    ap.add_argument("--path", required=True, help="folders put before PATH, as the suite's config")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    scripts = sorted(args.exec_root.rglob("*.script"))
    if not scripts:
        sys.exit(f"commands_alone: no *.script under {args.exec_root}: run lit on the suite first")
    env = {**os.environ, "PATH": os.pathsep.join([args.path, os.environ["PATH"]])}
    with ThreadPoolExecutor(args.jobs) as pool:
        codes = list(pool.map(lambda s: run_script(s, env), scripts))
    print(f"{len(scripts)} scripts, {sum(c != 0 for c in codes)} exited non-zero")


if __name__ == "__main__":
    main()
