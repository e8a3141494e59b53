"""FileCheck programs a suite's RUN lines name (LLVM's by path, or a `FileCheck` on PATH), run
by lit's internal shell through the project's FileCheck: the engine the run chose applies to
them, and what they are given is recorded (--mlirpipe-repeat)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from ..tools.filecheck import ENGINE_ENV, LLVM_ENV, is_native_program
from .names import FILECHECK_NAMES

FILECHECK_MODULE = "pytest_mlirpipe.tools.filecheck"


def filecheck_programs(engine: str, as_process: bool):
    """`programs` for `inprocess.in_process_tools`: a FileCheck program -> a tool that runs it
    through the project's FileCheck with `engine` (none: that program itself decides), in
    this process or, `as_process`, as a process of its own (isolation subprocess)."""

    def programs(program: str):
        if Path(program).name not in FILECHECK_NAMES:
            return None
        return functools.partial(_run, program=program, engine=engine, as_process=as_process)

    return programs


def _run(
    argv: list[str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    program: str,
    engine: str,
    as_process: bool,
) -> int:
    """The program's verdict on `stdin` (os.environ and the cwd are the RUN line's here)."""
    from ..tools import filecheck

    found = shutil.which(program)
    if found is None:  # as lit's shell says it
        stderr.write(f"'{program}': command not found\n")
        return 127
    changes = {ENGINE_ENV: engine or "llvm"}
    if not engine or is_native_program(Path(found)):
        changes[LLVM_ENV] = os.path.abspath(found)
    if as_process:
        data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        argv0 = [sys.executable, "-m" + FILECHECK_MODULE]
        ran = subprocess.run(
            [*argv0, *argv], input=data, capture_output=True, env={**os.environ, **changes}
        )
        stdout.write(ran.stdout.decode("utf-8", "replace"))
        stderr.write(ran.stderr.decode("utf-8", "replace"))
        return ran.returncode
    saved = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        return filecheck.run(argv, stdin, stdout, stderr)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
