"""The signature of a RUN line's FileCheck failure on a candidate module, for `mlirpipe reduce`."""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import contain
from ..errors import Problem, UsageError
from ..lowering.reduce import Oracle, Signature
from ..model import Location

_FILECHECK = ("-mpytest_mlirpipe.tools.filecheck",)
_OPT = "-mpytest_mlirpipe.tools.opt"
_ERROR = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?:\d+:)? error: (?P<message>.*)$", re.M)


@dataclass(frozen=True, slots=True)
class RunLine:
    """RUN line `line` of a test file, split into the commands that make the output and the
    FileCheck that reads it (each as the shell ran it, after lit's substitutions)."""

    path: Path
    line: int
    producers: tuple[tuple[str, ...], ...]
    filecheck: tuple[str, ...]  # FileCheck's arguments, without the program
    search_path: str  # the PATH the suite gave its RUN lines

    def oracle(self, timeout: float | None) -> tuple[Oracle, str]:
        """The FileCheck failure of this RUN line when `%s` is a candidate module, and the
        scratch folder its candidates go to (for the caller to remove)."""
        scratch = tempfile.mkdtemp(prefix="mlirpipe-reduce-")
        candidate = Path(scratch) / self.path.name

        def child(text: str) -> Signature | None:
            candidate.write_text(text, encoding="utf-8")
            output = self._produce(candidate)
            if output is None:
                return None
            from ..tools import filecheck

            err = io.StringIO()
            status = filecheck.run(list(self.filecheck), io.StringIO(output), io.StringIO(), err)
            if status == 0:
                return None
            first = _ERROR.search(err.getvalue())
            where = f"{self.path.name}:{first.group('line')}" if first else ""
            message = first.group("message") if first else err.getvalue().strip()[:200]
            return Signature("filecheck", f"RUN line {self.line}", where, message)

        def oracle(text: str) -> Signature | None:
            ended = contain.run_contained(lambda: child(text), timeout)
            return ended.value if ended.ok else None

        return oracle, scratch

    def _produce(self, candidate: Path) -> str | None:
        """What the producing commands print for the candidate (None when one fails)."""
        original = str(self.path)
        commands = [[a.replace(original, str(candidate)) for a in c] for c in self.producers]
        if len(commands) == 1 and commands[0][1:2] == [_OPT]:
            from ..tools import opt

            out, err = io.StringIO(), io.StringIO()
            status = opt.run(commands[0][2:], io.StringIO(), out, err)
            return out.getvalue() if status == 0 else None
        env = {**os.environ, "PATH": self.search_path or os.environ.get("PATH", "")}
        shell = " | ".join(shlex.join(c) for c in commands)
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", shell],
            capture_output=True,
            text=True,
            cwd=self.path.parent,
            env=env,
            check=False,
        )
        return done.stdout if done.returncode == 0 else None


def run_line(runner, path: Path, line: int, name: str) -> RunLine:
    """RUN line `line` of `path` (`name` as the user wrote it) as lit ran it; UsageError when
    it is not `PRODUCER | FileCheck ...` or did not run."""
    import lit.ShUtil

    verdict = runner.run(path)
    steps = {s.line: s for s in verdict.steps if s.line is not None}
    if not verdict.steps and _external_shell(runner, path):
        raise UsageError(
            Problem(
                "its suite runs RUN lines in an external shell, whose commands lit does not "
                "report one by one",
                Location(name),
                "reduce a copy of the file outside that suite, or use --pipeline",
            )
        )
    if line not in steps:
        ran = ", ".join(str(n) for n in sorted(steps)) or "none"
        raise UsageError(
            Problem(
                f"no RUN line at line {line} ran (RUN lines that ran: {ran})",
                Location(name),
                "give the line of the RUN line whose FileCheck fails (lit stops at the "
                "first failing RUN line)",
            )
        )
    parsed = lit.ShUtil.ShParser(steps[line].command, pipefail=True).parse()
    commands = list(getattr(parsed, "commands", ()))
    if not isinstance(parsed, lit.ShUtil.Pipeline) or len(commands) < 2:
        raise _not_a_check(name, line)
    *producers, last = commands
    checker = list(last.args)
    if checker[:1] == ["not"]:
        raise UsageError(
            Problem(
                f"RUN line {line} expects its FileCheck to fail (`not FileCheck`): reduce keeps "
                "a FileCheck failure",
                Location(name, line),
                "reduce a RUN line whose FileCheck is to pass, or use --pipeline",
            )
        )
    if not _is_filecheck(checker) or any(c.redirects for c in producers):
        raise _not_a_check(name, line)
    producer_args = [a for c in producers for a in c.args]
    if any(a.lstrip("-").startswith("split") for a in producer_args if a.startswith("-")):
        raise UsageError(
            Problem(
                f"RUN line {line} splits its input (--split-input-file): reduce takes one module",
                Location(name, line),
                "copy the failing chunk into a file of its own and reduce that",
            )
        )
    skip = 2 if checker[1:2] == list(_FILECHECK) else 1
    return RunLine(
        path,
        line,
        tuple(tuple(c.args) for c in producers),
        tuple(checker[skip:]),
        verdict.search_path,
    )


def _external_shell(runner, path: Path) -> bool:
    from .external_shell import uses_external_shell

    return uses_external_shell(runner.make_test(path))


def _is_filecheck(args: Sequence[str]) -> bool:
    if len(args) >= 2 and args[0] == sys.executable and args[1] in _FILECHECK:
        return True
    return bool(args) and os.path.basename(args[0]) in ("FileCheck", "filecheck")


def _not_a_check(name: str, line: int) -> UsageError:
    return UsageError(
        Problem(
            f"RUN line {line} is not of the form `TOOL ... | FileCheck ...`",
            Location(name, line),
            "reduce a RUN line that pipes a tool's output into FileCheck, or use --pipeline",
        )
    )
