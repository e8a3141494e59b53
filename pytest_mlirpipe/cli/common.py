"""What several subcommands share: test files, comma lists, pipelines, report paths."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import Problem, UsageError
from ..model import Location
from ..tools.common import (
    named_pipelines,
)


def test_files(runner, names: Sequence[str]) -> list[str]:
    """The files named, and in each folder named the files pytest would run there (those lit
    runs inside a suite; elsewhere files of the suffixes with RUN or CHECK lines)."""
    from ..filetests.discovery import SuiteConfigError
    from ..filetests.format import is_test_file
    from ..filetests.names import EXCLUDED_DIRS

    files: list[str] = []
    for name in names:
        if not Path(name).is_dir():
            files.append(name)
            continue
        found = []
        for path in sorted(Path(name).rglob("*")):
            parts = path.relative_to(name).parts
            if not path.is_file() or any(p in EXCLUDED_DIRS or p.startswith(".") for p in parts):
                continue
            try:
                in_lit = runner.discovery.collects(path.absolute())
            except SuiteConfigError as error:
                raise UsageError(Problem(error.message(Path.cwd()))) from None
            suffixed = path.suffix in runner.config.suite.suffixes
            if in_lit or (in_lit is None and suffixed and is_test_file(path)):
                found.append(str(path))
        if not found:
            raise UsageError(
                Problem(
                    f"no RUN/CHECK files in {name}",
                    hint=f"files with RUN or CHECK lines and a suffix lit runs "
                    f"({', '.join(runner.config.suite.suffixes)} outside a lit suite)",
                )
            )
        files += found
    return files


def require_runnable(pipeline_dirs, pipelines: tuple[str, ...]) -> None:
    """Every pipeline exists and ends in the llvm dialect (checked before any entry runs)."""
    from ..execution.native.model_lowering import require_llvm_output

    for pipeline in named_pipelines(pipeline_dirs, pipelines):
        require_llvm_output(pipeline)


def comma_names(text: str, flag: str) -> list[str]:
    """The comma-separated names a flag gives; none at all (`--ops ''`) is a usage error, not
    the flag left out."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError(
            Problem(
                f"{flag} names nothing (got {text!r})", hint=f"leave {flag} out for its default"
            )
        )
    return names


def check_report_target(flag: str, out: str, folder_hint: str) -> None:
    """`flag OUT` names a file in a folder that exists: checked before any work, so a wrong
    path costs no run and no folder is made that the user did not name."""
    # os.path's checks, not Path's: a name too long is then the write's error, not a traceback
    if os.path.isdir(out):
        raise report_error(flag, out, "it is a folder", folder_hint)
    folder = Path(out).absolute().parent
    if not os.path.exists(folder):
        raise report_error(
            flag, out, f"no folder {folder}", "make the folder first, or name one that is"
        )
    if not os.path.isdir(folder):
        raise report_error(flag, out, f"{folder} is not a folder")


def report_error(
    flag: str, out: str, why: str, hint: str = "give a path in a folder you can write to"
) -> UsageError:
    return UsageError(Problem(f"{flag}: cannot write the report: {why}", Location(out), hint))


def refuse_missing(names: Sequence[str]) -> None:
    """A usage error naming the first of the files or folders given that does not exist."""
    missing = [name for name in names if not Path(name).exists()]
    if missing:
        raise UsageError(
            Problem(
                f"no such file or folder: {missing[0]}",
                hint="give RUN/CHECK files, or folders of them",
            )
        )
