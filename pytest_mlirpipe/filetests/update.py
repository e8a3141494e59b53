"""Regenerate the CHECK lines of the RUN lines whose FileCheck fails, from the output it checked."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import subprocess
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..atomic import write_atomic
from ..tools import update_checks as gen
from .names import FILECHECK_NAMES
from .verdict import CommandResult, FileVerdict, RunStep, steps_of

FILECHECK = "-mpytest_mlirpipe.tools.filecheck"
OPT = "-mpytest_mlirpipe.tools.opt"
_NOT_FILECHECK = "it fails, but not in a FileCheck that reads an *-opt tool's output"
_EXTERNAL_SHELL = (
    "its suite runs RUN lines in an external shell (lit's ShTest(execute_external=True)), "
    "where the update cannot see what FileCheck reads; update its CHECK lines by hand"
)
# FileCheck options the generated checks cannot honour.
_UNSUITED = ("--match-full-lines", "-match-full-lines", "--strict-whitespace", "-strict-whitespace")


@dataclass(frozen=True, slots=True)
class Checked:
    """One FileCheck call as it ran: its arguments, the text it read, its own exit status."""

    argv: tuple[str, ...]
    text: str
    status: int


@dataclass(frozen=True, slots=True)
class Target:
    """A RUN line whose checks can be regenerated: its prefixes, whether its producer split
    the input at `// -----`, and the output its FileCheck read."""

    line: int
    prefixes: tuple[str, ...]
    split: bool
    output: str
    failed: bool
    updatable: bool = True


@dataclass(frozen=True, slots=True)
class UpdateReport:
    """What an update did to one file: the RUN lines whose checks it rewrote, those it could
    not (with why), and the file's verdict when run again."""

    path: str
    updated: tuple[int, ...] = ()
    refused: tuple[tuple[int, str], ...] = ()
    verdict: FileVerdict | None = None
    nothing: str = ""  # why there was nothing to update (how the file fails)
    dropped: tuple[tuple[int, str], ...] = ()  # (line, text) of the -NOT lines removed

    def lines(self) -> list[str]:
        out = []
        if self.updated:
            runs = ", ".join(str(n) for n in self.updated)
            out.append(f"{self.path}: updated the CHECK lines of RUN line(s) {runs}")
        out += [
            f"{self.path}:{n}: dropped `{text}`: the output cannot say what must be absent; "
            "put it back where it belongs"
            for n, text in self.dropped
        ]
        out += [f"{self.path}{f':{n}' if n else ''}: not updated: {why}" for n, why in self.refused]
        if not out:
            why = self.nothing or _NOT_FILECHECK
            out.append(f"{self.path}: nothing to update: {why}; see the failure with pytest or lit")
        return out


def update_file(runner, path: Path) -> UpdateReport:
    """Run `path` recording what each FileCheck read, rewrite the checks of the failing RUN
    lines that can be regenerated, write the file whole, and run it again."""
    from .. import contain
    from .external_shell import uses_external_shell

    if uses_external_shell(runner.make_test(path)):
        return UpdateReport(str(path), refused=((0, _EXTERNAL_SHELL),))
    if contain.is_available():
        ended = contain.run_contained(
            lambda: _record(runner, path), timeout=runner.config.timeout or None
        )
        if not ended.ok:
            return UpdateReport(str(path), refused=((0, f"the file's run {ended.detail}"),))
        steps, calls, said = ended.value
    else:
        steps, calls, said = _record(runner, path)
    targets, refused = _targets(steps, calls, str(path))
    text = path.read_text(encoding="utf-8")
    new_text, updated, more = rewrite(text, targets)
    refused += more
    if not updated or new_text == text:
        nothing = "" if refused else _nothing(steps, said)
        return UpdateReport(str(path), (), tuple(sorted(refused)), nothing=nothing)
    write_atomic(path, new_text)
    dropped = tuple(_negatives(text, targets, updated))
    verdict = runner.run(path)
    return UpdateReport(str(path), tuple(updated), tuple(sorted(refused)), verdict, "", dropped)


def _negatives(text: str, targets: Sequence[Target], updated: Sequence[int]) -> list:
    """(line, text) of the -NOT lines of the updated RUN lines' prefixes in the old text."""
    prefixes = sorted({p for t in targets if t.line in updated for p in t.prefixes})
    negative = gen.negative_pattern(prefixes)
    return [(n, ln.strip()) for n, ln in enumerate(text.splitlines(), 1) if negative.match(ln)]


def _nothing(steps: Sequence[RunStep], said: str) -> str:
    """Why a failing file has no checks to update: no RUN line ran (lit's reason, as "Test has
    no 'RUN:' line"), or its first failing command is not a FileCheck."""
    if not steps:
        return f"it runs no RUN line ({said or 'lit ran nothing'})"
    found = next(
        (
            f"RUN line {step.line}: {_failed(result)}"
            for step in steps
            for result in step.results
            if result.exit_code != 0 and filecheck_args(result.args) is None
        ),
        said,
    )
    return f"{_NOT_FILECHECK} ({found})" if found else _NOT_FILECHECK


def _failed(result: CommandResult) -> str:
    """`name` exited N: the first line of what it said."""
    name = "mlirpipe-opt" if OPT in result.args[:2] else Path(result.args[0]).name
    said = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    first = next((ln for ln in said if "error" in ln), said[0] if said else "")
    return f"`{name}` exited {result.exit_code}" + (f": {first}" if first else "")


def _record(runner, path: Path) -> tuple[tuple[RunStep, ...], list[Checked], str]:
    """Run the file with lit's shell, every FileCheck recorded and told to pass (so the RUN
    lines after a failing one run too): the in-process one, and a FileCheck program named by
    path or on PATH (LLVM's, as lit.llvm's use_default_substitutions writes it)."""
    from ..lowering.prefix_cache import prefix_cache
    from .inprocess import in_process_tools
    from .runner import _execute

    calls: list[Checked] = []

    def recording(argv, stdin, stdout, stderr, program: str | None = None) -> int:
        from ..tools import filecheck

        data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
        if program is None:
            copy = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
            status = filecheck.run(list(argv), copy, io.StringIO(), io.StringIO())
        else:
            status = _run_program(program, list(argv), data)
        calls.append(Checked(tuple(argv), data.decode("utf-8", "replace"), status))
        return 0

    def programs(program: str):
        if Path(program).name in FILECHECK_NAMES:
            return functools.partial(recording, program=program)
        return None

    test = runner.make_test(path)
    with contextlib.ExitStack() as scope:
        scope.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore", ResourceWarning)
        trace = scope.enter_context(in_process_tools(filecheck=recording, programs=programs))
        scope.enter_context(prefix_cache())
        result = _execute(test, runner.lit_config)
    first = result.output.strip().splitlines()[0] if result.output.strip() else ""
    said = f"lit: {result.code.name}, {first}" if first else ""
    return steps_of(trace.results, trace.stdins, trace.commands), calls, said


def _run_program(program: str, argv: list[str], data: bytes) -> int:
    """A FileCheck program's exit status on `data` (in the RUN line's cwd and environment,
    which the in-process shell has set); 127 when it cannot be started, as a shell says."""
    try:
        return subprocess.run([program, *argv], input=data, capture_output=True).returncode
    except OSError:
        return 127


def filecheck_args(args: Sequence[str]) -> list[str] | None:
    """The arguments of the FileCheck a command runs (after its `not`s): the in-process
    `PYTHON -mpytest_mlirpipe.tools.filecheck ARGS`, or a program named FileCheck or
    filecheck (LLVM's binary by path, the port's script); None for any other command."""
    args = list(args)
    while args and _negates(args[0]):
        args.pop(0)
    if FILECHECK in args[:2]:
        return args[args.index(FILECHECK) + 1 :]
    if args and Path(args[0]).name in FILECHECK_NAMES:
        return args[1:]
    return None


def _negates(program: str) -> bool:
    """`not` or `!`, also LLVM's `not` by path (lit.llvm substitutes `| not`)."""
    return program == "!" or Path(program).name == "not"


def _targets(steps, calls: list[Checked], source: str) -> tuple[list[Target], list]:
    """The RUN lines whose FileCheck checks this file on an IR producer's stdout (updatable),
    and (line, why) for each other RUN line with a failing FileCheck."""
    pending = list(calls)
    targets, refused = [], []
    for step in steps:
        checks = [r for r in step.results if filecheck_args(r.args) is not None]
        # Run in-process (stdin known), so recorded; any other ran as a process of lit's.
        ran = [r for r in checks if r.stdin is not None]
        mine = [pending.pop(0) for _ in ran if pending]
        if not checks:
            continue
        why = _unsuitable(step, len(checks), source)
        if why is None and len(mine) == len(checks):
            broken = _broken_producer(step)
            if broken is None or mine[0].status == 0:
                targets.append(_target(step, mine[0]))
                continue
            why = f"{broken}; the checks are not regenerated from a failed run"
        why = why or "its FileCheck ran as a process the update cannot follow; update it by hand"
        # Not updatable, but its prefixes must not be rewritten under it.
        prefixes = tuple(p for r in checks for p in _prefixes(filecheck_args(r.args) or ()))
        targets.append(Target(step.line or 0, prefixes, False, "", False, updatable=False))
        unrecorded = [r for r in checks if r.stdin is None]
        if any(c.status != 0 for c in mine) or any(r.exit_code != 0 for r in unrecorded):
            refused.append((step.line or 0, why))
    return targets, refused


def _broken_producer(step: RunStep) -> str | None:
    """How a command piped into the RUN line's FileCheck failed (None: none did)."""
    for result in step.results:
        if filecheck_args(result.args) is not None:
            return None
        if result.exit_code != 0:
            return _failed(result)
    return None


def _target(step: RunStep, call: Checked) -> Target:
    prefixes = _prefixes(call.argv)
    producer = _pipeline_of(step.command)[:-1]
    split = any(a in ("--split-input-file", "-split-input-file") for c in producer for a in c.args)
    return Target(step.line or 0, prefixes, split, call.text, call.status != 0)


def _unsuitable(step: RunStep, count: int, source: str) -> str | None:
    """Why this RUN line's checks cannot be regenerated (None: they can); `count`: the
    FileCheck commands it ran."""
    if count > 1:
        return "it runs FileCheck more than once"
    pipeline = _pipeline_of(step.command)
    args = filecheck_args(pipeline[-1].args) if pipeline else None
    if args is None:
        return "its FileCheck is not the last command of a pipeline"
    check, producers = pipeline[-1], pipeline[:-1]
    files = [a for a in args if not a.startswith("-")]
    if _negates(check.args[0]):
        return "its FileCheck is negated (`not`): it expects the checks to fail"
    if not files or os.path.realpath(files[0]) != os.path.realpath(source):
        return f"its FileCheck checks another file ({files[0] if files else 'none'})"
    if any(a.startswith(("--input-file", "-input-file")) for a in args) or check.redirects:
        return "its FileCheck reads a file, not the output of the command before it"
    unsuited = [a for a in args if a.split("=")[0] in _UNSUITED or a.startswith(("-D", "--D"))]
    if unsuited:
        return f"FileCheck option {unsuited[0]}: the generated checks match parts of lines"
    if not producers:
        return "its FileCheck reads no producer's output (nothing is piped into it)"
    for command in producers:
        why = _unsuitable_producer(command)
        if why:
            return why
    return None


def _unsuitable_producer(command) -> str | None:
    """Why a command piped into FileCheck is not an IR producer whose output can be checked."""
    if any(r[0][0] == ">&" or (r[0][0] == ">" and r[0][1:] == (2,)) for r in command.redirects):
        return "it checks stderr (2>&1): diagnostics are not regenerated"
    if any(r[0][0] in (">", ">>") for r in command.redirects):
        return "the output is redirected to a file, not piped to FileCheck"
    args = list(command.args)
    if args and _negates(args[0]):
        return "the producer is negated (`not`): its output is not IR to check"
    if OPT in args[:2] or (args and Path(args[0]).name.endswith("-opt")):
        return None
    name = Path(args[0]).name if args else "?"
    return f"FileCheck reads the output of `{name}`, not of an *-opt tool; update it by hand"


def _pipeline_of(command: str) -> list:
    """The commands of the pipeline that ends the RUN line (lit's shell parser)."""
    import lit.ShUtil as ShUtil

    try:
        tree = ShUtil.ShParser(command, False, True).parse()
    except ValueError:
        return []
    while isinstance(tree, ShUtil.Seq):
        tree = tree.rhs
    return list(tree.commands)


def _prefixes(argv: Sequence[str]) -> tuple[str, ...]:
    """The check prefixes of a FileCheck command line (CHECK when none is named)."""
    found: list[str] = []
    args = list(argv)
    for i, a in enumerate(args):
        key, eq, value = a.lstrip("-").partition("=")
        if key in ("check-prefix", "check-prefixes"):
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            found += [p.strip() for p in value.split(",") if p.strip()]
    return tuple(dict.fromkeys(found)) or ("CHECK",)


@dataclass(slots=True)
class _Group:
    """Failing RUN lines sharing prefixes: their checks are rewritten together."""

    targets: list[Target] = field(default_factory=list)

    @property
    def prefixes(self) -> set[str]:
        return {p for t in self.targets for p in t.prefixes}

    @property
    def lines(self) -> list[int]:
        return [t.line for t in self.targets]


def _groups(targets: Sequence[Target]) -> list[_Group]:
    groups: list[_Group] = []
    for t in (t for t in targets if t.failed and t.updatable):
        joined = [g for g in groups if g.prefixes & set(t.prefixes)]
        merged = _Group([x for g in joined for x in g.targets] + [t])
        groups = [g for g in groups if g not in joined] + [merged]
    return groups


def rewrite(text: str, targets: Sequence[Target]) -> tuple[str, list[int], list]:
    """The file's text with the checks of each failing target's group regenerated; the RUN
    lines updated; (line, why) for the groups that could not be."""
    lines = text.splitlines(keepends=True)
    updated: list[int] = []
    refused: list[tuple[int, str]] = []
    for group in _groups(targets):
        why = _group_problem(group, targets, lines)
        if why:
            refused += [(n, why) for n in group.lines]
            continue
        new = _apply(lines, group)
        if isinstance(new, str):
            refused += [(n, new) for n in group.lines]
            continue
        lines = new
        updated += group.lines
    return "".join(lines), sorted(updated), refused


def _group_problem(group: _Group, targets: Sequence[Target], lines: list[str]) -> str | None:
    others = [t for t in targets if t not in group.targets and set(t.prefixes) & group.prefixes]
    if others:
        shared = sorted(set(others[0].prefixes) & group.prefixes)[0]
        return (
            f"prefix {shared} is also checked by RUN line {others[0].line}, which is not "
            "updated; give the RUN lines prefixes of their own"
        )
    if len({(t.output, t.split) for t in group.targets}) > 1:
        runs = " and ".join(str(n) for n in group.lines)
        return f"RUN lines {runs} share check prefixes but their outputs differ"
    common = [p for p in group.targets[0].prefixes if all(p in t.prefixes for t in group.targets)]
    if not common:
        return "the RUN lines sharing its prefixes have no prefix in common"
    embedded = gen.embedded_directive(sorted(group.prefixes))
    whole = gen.directive_pattern(sorted(group.prefixes))
    for n, line in enumerate(lines, 1):
        if embedded.search(line) and not whole.match(line):
            return f"line {n} has a check directive after other text; move it to its own line"
    return None


def _apply(lines: list[str], group: _Group) -> list[str] | str:
    """The lines with the group's checks regenerated, chunk by chunk; or why not."""
    first = group.targets[0]
    prefix = next(p for p in first.prefixes if all(p in t.prefixes for t in group.targets))
    outputs = _output_chunks(first.output) if first.split else [first.output]
    spans = gen.chunk_ranges(lines, first.split)
    if len(outputs) != len(spans):
        return (
            f"--split-input-file gave {len(outputs)} chunks of output for {len(spans)} "
            "chunks of input (a chunk failed?)"
        )
    blocks = [gen.generate_checks(out, prefix) for out in outputs]
    if not any(blocks):
        return "the output has no lines to check"
    old = gen.directive_pattern(sorted(group.prefixes))
    out: list[str] = []
    for i, (span, new) in enumerate(zip(spans, blocks, strict=True)):
        out += gen.replace_checks(lines, span, old, new)
        if i + 1 < len(spans):
            out.append(lines[span[1]])  # the `// -----` line itself
    return out


def _output_chunks(output: str) -> list[str]:
    parts = gen.SPLIT_MARKER.split(output)
    return parts if output.strip() else []
