"""Structural assertions on IR (`no-dialect linalg`, `exactly 1 func.call @f`); mlirpipe-assert."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn, TextIO

from ..errors import IRParseError, MlirpipeError, Problem, UsageError
from ..lowering.op_query import (
    OpPattern,
    all_ops,
    dialect_of,
    first_line,
    generated_op_names,
    is_glob,
    is_registered_dialect,
    known_location,
    outermost,
    symbol_of,
)
from .common import (
    ArgumentParser,
    add_version_option,
    console_main,
    read_input,
    run_tool,
    split_input,
    torch_mlir_version,
)

GRAMMAR = (
    "no-dialect D[,D...] | only-dialects D[,D...] | no-op OP[@SYM] | exactly N OP[@SYM] | "
    "count(OP[@SYM]) CMP N, each optionally followed by 'after STAGE' (mlirpipe-opt "
    "--pipeline only); OP and SYM are globs (linalg.*, @*sgemm), CMP one of == != < <= > >="
)
_CMP: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_AFTER = re.compile(r"^(?P<rule>.*?)\s+after\s+(?P<stage>\S+)\s*$")
_AFTER_WORD = re.compile(r"(?:^|\s)after(?:\s|$)")
_DIALECT = re.compile(r"[A-Za-z_][\w$]*")
_COUNT = re.compile(r"count\((?P<pattern>[^()]*)\)\s*(?P<cmp>==|!=|<=|>=|<|>)\s*(?P<n>\d+)")
_EXACTLY = re.compile(r"(?P<n>\d+)\s+(?P<pattern>.+)")
# Ops listed in a failure at most; the rest are counted.
SHOWN = 10


@dataclass(frozen=True, slots=True)
class Assertion:
    """One parsed assertion: `kind` (no-dialect, only-dialects, no-op, count), its dialects
    or op pattern, the comparison (count), and the stage it applies after (None: the
    output)."""

    text: str
    kind: str
    dialects: tuple[str, ...] = ()
    pattern: OpPattern | None = None
    cmp: str = "=="
    n: int = 0
    stage: str | None = None


def _malformed(text: str, why: str) -> UsageError:
    return UsageError(Problem(f"malformed assertion {text!r}: {why}", hint=f"write {GRAMMAR}"))


def _dialects(text: str, rest: str) -> tuple[str, ...]:
    names = [n for n in re.split(r"[\s,]+", rest.strip().strip("{}").strip()) if n]
    bad = [n for n in names if not _DIALECT.fullmatch(n)]
    if not names or bad:
        why = f"{bad[0]!r} is not a dialect name" if bad else "no dialect named"
        raise _malformed(text, why)
    return tuple(names)


def _pattern(text: str, rest: str) -> OpPattern:
    found = OpPattern.parse(rest)
    if found is None:
        raise _malformed(text, f"{rest.strip()!r} is not an op pattern (OP-GLOB [@SYMBOL-GLOB])")
    return found


def _read_no_dialect(text: str, rest: str) -> dict:
    return {"kind": "no-dialect", "dialects": _dialects(text, rest)}


def _read_only_dialects(text: str, rest: str) -> dict:
    return {"kind": "only-dialects", "dialects": _dialects(text, rest)}


def _read_no_op(text: str, rest: str) -> dict:
    return {"kind": "count", "pattern": _pattern(text, rest), "cmp": "==", "n": 0}


def _read_exactly(text: str, rest: str) -> dict:
    m = _EXACTLY.fullmatch(rest.strip())
    if not m:
        raise _malformed(text, "'exactly' takes a count and an op pattern: exactly 1 func.call")
    return {"kind": "count", "pattern": _pattern(text, m["pattern"]), "n": int(m["n"])}


def _read_count(text: str, rest: str) -> dict:
    m = _COUNT.fullmatch("count" + rest.strip())
    if not m:
        raise _malformed(text, "write count(OP[@SYM]) CMP N, e.g. count(linalg.*) == 0")
    return {
        "kind": "count",
        "pattern": _pattern(text, m["pattern"]),
        "cmp": m["cmp"],
        "n": int(m["n"]),
    }


# The first word of an assertion -> the reader of the rest.
_READERS: dict[str, Callable[[str, str], dict]] = {
    "no-dialect": _read_no_dialect,
    "only-dialects": _read_only_dialects,
    "no-op": _read_no_op,
    "exactly": _read_exactly,
    "count": _read_count,
}


def parse_assertion(text: str) -> Assertion:
    """An assertion from its text; a UsageError saying what is wrong otherwise."""
    rule, stage = text.strip(), None
    m = _AFTER.match(rule)
    if m:
        rule, stage = m["rule"].strip(), m["stage"]
    if _AFTER_WORD.search(rule):
        raise _malformed(text, "'after' takes one stage name, at the end: RULE after STAGE")
    keyword = re.match(r"count(?=\s*\()|[\w-]+", rule)
    reader = _READERS.get(keyword.group(0)) if keyword else None
    if keyword is None or reader is None:
        from ..errors import did_you_mean

        word = keyword.group(0) if keyword else rule
        hint = did_you_mean(word, _READERS) or f"write {GRAMMAR}"
        raise UsageError(Problem(f"unknown assertion {text!r}", hint=hint))
    return Assertion(text.strip(), stage=stage, **reader(text, rule[keyword.end() :]))


def check_names(assertion: Assertion, context, present: Callable[[], set[str]] = set) -> None:
    """A UsageError for a dialect or op name (not a glob) of `assertion` that the bindings'
    `context` does not register and that is not in the IR (`present()`: its op names): a
    misspelt name would make `no-dialect` and `no-op` hold whatever the IR."""
    for name in assertion.dialects:
        if not _known_dialect(name, context, present):
            _unknown(assertion, "dialect", name, _dialect_names(present))
    pattern = assertion.pattern
    if pattern is None:
        return
    dialect, dot, _ = pattern.op.partition(".")
    if dot and not is_glob(dialect) and not _known_dialect(dialect, context, present):
        _unknown(assertion, "dialect", dialect, _dialect_names(present))
    if is_glob(pattern.op) or context.is_registered_operation(pattern.op):
        return
    if pattern.op in present():
        return
    # An op of a dialect the IR holds but the context does not register (a foreign tool's,
    # parsed with unregistered dialects allowed): its op names are not known here.
    if dot and not is_registered_dialect(context, dialect):
        return
    _unknown(assertion, "op", pattern.op, [*generated_op_names(), *present()])


def _known_dialect(name: str, context, present: Callable[[], set[str]]) -> bool:
    return is_registered_dialect(context, name) or name in {dialect_of_name(n) for n in present()}


def dialect_of_name(op_name: str) -> str:
    return op_name.split(".", 1)[0]


def _dialect_names(present: Callable[[], set[str]]) -> set[str]:
    return {dialect_of_name(n) for n in [*generated_op_names(), *present()]}


def _unknown(assertion: Assertion, what: str, name: str, candidates) -> NoReturn:
    from ..errors import did_you_mean

    raise UsageError(
        Problem(
            f"assertion {assertion.text!r}: no {what} '{name}' is registered",
            hint=did_you_mean(name, candidates)
            or f"name a registered {what}" + (", or a glob: linalg.*" if what == "op" else ""),
        )
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """An assertion's outcome on one module: whether it held, and the failure message."""

    held: bool
    message: str = ""


def evaluate(assertion: Assertion, root, source_name: str, where: str) -> Verdict:
    """Check `assertion` on the module `root` (an operation); `where` names the IR in the
    message ("after stage 'S' of pipeline 'P'", "in <stdin>"). Ops nested in an op that the
    same rule matches (the implicit linalg.yield of a linalg.matmul) are not counted again."""
    if assertion.kind == "count":
        return _count(assertion, root, source_name, where)
    wanted = set(assertion.dialects)
    if assertion.kind == "no-dialect":
        bad = lambda op: dialect_of(op) in wanted  # noqa: E731
        what = "of dialect " + " or ".join(assertion.dialects)
    else:
        bad = lambda op: dialect_of(op) not in wanted  # noqa: E731
        what = "of a dialect other than " + ", ".join(assertion.dialects)
    found = matching(root, bad)
    if not found:
        return Verdict(True)
    head = f"assertion '{assertion.text}' failed {where}: {_ops(len(found))} {what}"
    return Verdict(False, _message(head, found, source_name))


def matching(root, matches: Callable[[object], bool]) -> list:
    """The ops under `root` for which `matches` holds, less those nested in such an op."""
    return outermost([op for op in all_ops(root) if matches(op)], matches)


def _count(assertion: Assertion, root, source_name: str, where: str) -> Verdict:
    pattern = assertion.pattern
    assert pattern is not None
    found = matching(root, pattern.matches)
    if _CMP[assertion.cmp](len(found), assertion.n):
        return Verdict(True)
    head = (
        f"assertion '{assertion.text}' failed {where}: {_ops(len(found))} "
        f"{'matches' if len(found) == 1 else 'match'} "
        f"'{pattern}', expected {assertion.cmp} {assertion.n}"
    )
    text = _message(head, found, source_name)
    if not found and pattern.symbol is not None:
        text += _other_symbols(pattern, all_ops(root))
    return Verdict(False, text)


def _ops(n: int) -> str:
    return f"{n} op" if n == 1 else f"{n} ops"


def _message(head: str, found: list, source_name: str) -> str:
    """`error: HEAD` then each op at its location (the first SHOWN), and how many more."""
    from ..mlir_env import location_of

    lines = [f"error: {head}"]
    for op in found[:SHOWN]:
        loc = location_of(known_location(op), source_name)
        lines.append(f"  {loc or source_name}: {first_line(op)}")
    if len(found) > SHOWN:
        lines.append(f"  ... and {len(found) - SHOWN} more")
    return "\n".join(lines)


def _other_symbols(pattern: OpPattern, ops: list) -> str:
    """A hint naming the symbols of the ops with the pattern's name (a misspelt callee)."""
    named = sorted({symbol_of(op) or "" for op in ops if OpPattern(pattern.op).matches(op)})
    named = [s for s in named if s]
    if not named:
        return ""
    return f"\n  hint: {pattern.op} ops here name: " + ", ".join(f"@{s}" for s in named[:8])


class IRAssertionError(AssertionError):
    """A structural assertion that did not hold; the message lists the ops at fault."""


class IRChecker:
    """Assertions on one module, chained: `assert_ir(text).no_dialect("linalg").exactly(1,
    "func.call @cblas_sgemm")`. Each raises IRAssertionError when it does not hold."""

    def __init__(self, root, source_name: str, where: str, keep: object = None):
        self._root = root
        self._source_name = source_name
        self._where = where
        self._keep = keep  # the context the module lives in, kept alive with it
        self._names: set[str] | None = None

    def _present(self) -> set[str]:
        """The op names in the module (walked once, when a name is not registered)."""
        if self._names is None:
            self._names = {op.name for op in all_ops(self._root)}
        return self._names

    def holds(self, text: str) -> IRChecker:
        """An assertion in the RUN-line grammar (without `after STAGE`)."""
        __tracebackhide__ = True
        assertion = parse_assertion(text)
        check_names(assertion, self._root.context, self._present)
        if assertion.stage is not None:
            raise UsageError(
                Problem(
                    f"assertion {text!r}: 'after {assertion.stage}' needs a pipeline run",
                    hint="check that stage's snapshot: assert_ir(run.snapshots[i])",
                )
            )
        verdict = evaluate(assertion, self._root, self._source_name, self._where)
        if not verdict.held:
            raise IRAssertionError(verdict.message)
        return self

    def no_dialect(self, *dialects: str) -> IRChecker:
        __tracebackhide__ = True
        return self.holds("no-dialect " + ",".join(dialects))

    def only_dialects(self, *dialects: str) -> IRChecker:
        __tracebackhide__ = True
        return self.holds("only-dialects " + ",".join(dialects))

    def no_op(self, pattern: str) -> IRChecker:
        __tracebackhide__ = True
        return self.holds(f"no-op {pattern}")

    def exactly(self, n: int, pattern: str) -> IRChecker:
        __tracebackhide__ = True
        return self.holds(f"exactly {n} {pattern}")

    def count(self, pattern: str) -> int:
        """How many ops match `pattern` (as `count(...)` counts them)."""
        found = OpPattern.parse(pattern)
        if found is None:
            raise _malformed(pattern, "not an op pattern (OP-GLOB [@SYMBOL-GLOB])")
        check_names(Assertion(pattern, "count", pattern=found), self._root.context, self._present)
        return len(matching(self._root, found.matches))


def assert_ir(ir_or_module, source_name: str = "<ir>") -> IRChecker:
    """Structural assertions on MLIR: text, an ir.Module or operation, or a stage snapshot
    (`StageRun.snapshots[i]`, named in failures by its stage)."""
    from ..mlir_env import ir, new_context, parse_module

    where, keep = f"in {source_name}", None
    if hasattr(ir_or_module, "stage") and hasattr(ir_or_module, "ir"):  # a Snapshot
        where = f"after stage '{ir_or_module.stage}'"
        if ir_or_module.ir is None:
            raise TypeError(
                f"assert_ir: the snapshot of stage '{ir_or_module.stage}' holds no IR: run the "
                "stages with run_stages(..., capture=True), or check run.module"
            )
        ir_or_module = ir_or_module.ir
    if isinstance(ir_or_module, str):
        keep = new_context()
        ir_or_module = parse_module(ir_or_module, source_name, keep)
    root = getattr(ir_or_module, "operation", ir_or_module)
    if not isinstance(root, ir.Operation | ir.OpView):
        raise TypeError(
            "assert_ir takes MLIR text (str), an ir.Module or operation, or a stage snapshot "
            f"(StageRun.snapshots[i]), not {type(ir_or_module).__name__}: {ir_or_module!r:.60}"
        )
    return IRChecker(root, source_name, where, keep)


class StageAssertions:
    """mlirpipe-opt's --assert: each assertion checked on a chunk's output, or on the IR
    after the stage it names (that stage's module, with the input's locations; a stage
    prefix cache makes re-running the stages up to it cheap)."""

    def __init__(self, assertions: Sequence[Assertion], pipeline, args):
        self.assertions = tuple(assertions)
        self.pipeline = pipeline
        self.args = args

    @classmethod
    def of(cls, args, pipeline) -> StageAssertions:
        """The --assert options of `args`, checked against the pipeline's stages that run."""
        assertions = [parse_assertion(a) for a in args.assertions]
        if assertions and args.verify_diagnostics:
            raise UsageError(
                Problem(
                    "--assert and -verify-diagnostics exclude each other",
                    hint="check the assertions in a RUN line of their own",
                )
            )
        for a in assertions:
            if a.stage is not None:
                _check_stage(a, pipeline, args)
        # The names an external tool's dialects may hold are its own: not checked.
        if assertions and getattr(pipeline, "tool", None) is None:
            from ..mlir_env import new_context

            context = new_context()
            for a in assertions:
                check_names(a, context)
        return cls(assertions, pipeline, args)

    def cache(self):
        """A stage prefix cache for the run, when an assertion names a stage and none is on."""
        import contextlib

        from ..lowering import prefix_cache

        staged = any(a.stage for a in self.assertions)
        if not staged or prefix_cache.active() is not None:
            return contextlib.nullcontext()
        return prefix_cache.prefix_cache()

    def check(self, chunk: str, name: str, run, index: int | None, stderr: TextIO) -> bool:
        """Check every assertion on one chunk's stage run; write the failures to stderr."""
        held = True
        for a in self.assertions:
            root, keep, stage = self._ir(chunk, name, run, a.stage)
            where = self._where(stage, index)
            verdict = evaluate(a, root, name, where)
            del keep
            if not verdict.held:
                stderr.write(verdict.message + "\n")
                held = False
        return held

    def _where(self, stage: str | None, index: int | None) -> str:
        chunk = f" (chunk {index})" if index is not None else ""
        if self.pipeline is None:
            return f"on the output of --pass-pipeline{chunk}"
        return f"after stage '{stage}' of pipeline '{self.pipeline.name}'{chunk}"

    def _ir(self, chunk: str, name: str, run, stage: str | None) -> tuple:
        """(module operation, what keeps it alive, the stage it is after) for an assertion."""
        last = run.snapshots[-1].stage if run.snapshots else None
        stage = stage or last
        if run.module is None:  # an external tool ran the stages: its snapshots hold text
            from ..mlir_env import new_context, parse_module

            snap = next(s for s in run.snapshots if s.stage == stage)
            ctx = new_context()
            return parse_module(snap.ir or "", name, ctx).operation, ctx, stage
        if stage == last or self.pipeline is None:
            return run.module.operation, run, stage
        from ..lowering.stages import run_stages

        earlier = run_stages(
            chunk,
            self.pipeline,
            source_name=name,
            start_after=self.args.start_after,
            stop_after=stage,
            capture=False,
            verify_each=not self.args.no_verify_each,
        )
        return earlier.module.operation, earlier, stage


def _check_stage(assertion: Assertion, pipeline, args) -> None:
    """`after STAGE` needs --pipeline and a stage of it that this run runs."""
    from ..errors import did_you_mean
    from ..lowering.stages import select_stages

    if pipeline is None:
        raise UsageError(
            Problem(
                f"--assert {assertion.text!r}: 'after {assertion.stage}' needs --pipeline, "
                "not --pass-pipeline",
                hint="name a stage of a pipeline from `mlirpipe list`, or drop 'after STAGE'",
            )
        )
    names = pipeline.stage_names()
    assert assertion.stage is not None  # checked only for an 'after STAGE' assertion
    if assertion.stage not in names:
        raise UsageError(
            Problem(
                f"--assert {assertion.text!r}: pipeline '{pipeline.name}' has no stage "
                f"'{assertion.stage}'",
                hint=did_you_mean(assertion.stage, names) or f"its stages: {', '.join(names)}",
            )
        )
    run = [s.name for s in select_stages(pipeline, args.start_after, args.stop_after)]
    if assertion.stage not in run:
        raise UsageError(
            Problem(
                f"--assert {assertion.text!r}: stage '{assertion.stage}' does not run "
                "(--start-after/--stop-after leave it out)",
                hint=f"the stages that run: {', '.join(run)}",
            )
        )


# ---- mlirpipe-assert: the checker as a RUN-line tool ------------------------------------------


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="mlirpipe-assert",
        description="Check structural assertions on MLIR read from a file or standard input "
        "(e.g. `mlirpipe-opt %s --pipeline P | mlirpipe-assert 'no-dialect linalg'`).",
        epilog=f"Assertions: {GRAMMAR}. Exit status: 0 all hold, 1 one does not or the "
        "input does not parse, 2 bad arguments.",
    )
    add_version_option(p, torch_mlir_version())
    p.add_argument("assertions", nargs="+", metavar="ASSERTION", help="an assertion to check")
    p.add_argument(
        "-i", "--input", default="-", metavar="FILE", help="MLIR to read ('-': stdin, default)"
    )
    p.add_argument(
        "--split-input-file",
        action="store_true",
        help="check each '// -----' chunk on its own (mlirpipe-opt --split-input-file output)",
    )
    return p


def run(argv: Sequence[str], stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The tool as a function: (argv, streams) -> exit status."""
    return run_tool(_main, build_parser(), argv, stdin, stdout, stderr)


def _main(args, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from ..mlir_env import new_context, parse_module

    assertions = [parse_assertion(a) for a in args.assertions]
    staged = [a for a in assertions if a.stage is not None]
    if staged:
        raise UsageError(
            Problem(
                f"assertion {staged[0].text!r}: mlirpipe-assert sees only its input, not stages",
                hint=f"use `mlirpipe-opt FILE --pipeline P --assert '{staged[0].text}'`, or "
                "drop 'after STAGE'",
            )
        )
    ctx = new_context()
    for assertion in assertions:
        check_names(assertion, ctx)
    text, name = read_input(args.input, stdin)
    chunks = split_input(text) if args.split_input_file else [text]
    status = 0
    for i, chunk in enumerate(chunks):
        where = f"in {name}" + (f" (chunk {i + 1})" if args.split_input_file else "")
        try:
            module = parse_module(chunk, name, ctx)
        except (IRParseError, MlirpipeError) as exc:
            stderr.write(exc.format() + "\n")
            status = 1
            continue
        for assertion in assertions:
            verdict = evaluate(assertion, module.operation, name, where)
            if not verdict.held:
                stderr.write(verdict.message + "\n")
                status = 1
    return status


def main() -> None:
    console_main(run, "mlirpipe-assert")


if __name__ == "__main__":
    main()
