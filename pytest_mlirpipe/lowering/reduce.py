"""Reduce a failing MLIR module: the smallest module found that still fails the same way."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from torch_mlir import ir

from .. import contain
from ..errors import MlirpipeError, StageFailure
from ..mlir_env import new_context

# How a stage reports the pass that failed (stages._stage_failure).
_FAILED_PASS = re.compile(r"pass '([^']+)' failed")
# The note a stage leaves before it runs (stages.run_stages), read back after a crash.
_STAGE_NOTE = re.compile(r"stage '([^']+)' of pipeline")


@dataclass(frozen=True, slots=True)
class Signature:
    """How a module fails: a stage's failure (its stage, pass and first error), a crash or a
    hang of a stage (how it ended), or a FileCheck failure (the failing directive's line)."""

    kind: str  # "failure", "crash", "timeout" or "filecheck"
    stage: str  # the stage, or the RUN line for "filecheck"
    detail: str  # the failing pass; how the process ended; the check file's line
    message: str  # the first error's message, without its location

    def describe(self) -> str:
        if self.kind == "failure":
            return f"stage '{self.stage}' fails in {self.detail or 'a pass'}: {self.message}"
        if self.kind == "filecheck":
            return f"FileCheck of {self.stage} fails at {self.detail}: {self.message}"
        return f"stage '{self.stage}' ends: {self.detail}"


# A candidate module's text -> its signature (None: it passes, or is not a valid module).
Oracle = Callable[[str], Signature | None]


@dataclass(frozen=True, slots=True)
class Reduction:
    """The smallest module found, its size against the input's, and what it took."""

    text: str
    ops_before: int
    ops_after: int
    tries: int
    seconds: float
    complete: bool  # False when the time budget or a Ctrl-C ended the search
    interrupted: bool = False  # Ctrl-C ended the search

    def summary(self) -> str:
        if self.ops_after:
            smaller = f"{self.ops_before / self.ops_after:.1f}x smaller"
        else:
            smaller = "every op removed: the failure does not need one"
        ended = (
            " (interrupted)"
            if self.interrupted
            else ("" if self.complete else " (time budget reached)")
        )
        return (
            f"{self.ops_before} ops -> {self.ops_after} ops ({smaller}) in "
            f"{self.tries} tries, {self.seconds:.1f} s{ended}"
        )


def pipeline_oracle(
    lower: Callable[[str], object], timeout: float | None, with_message: bool = True
) -> Oracle:
    """The signature of `lower(text)` run in a forked child: a StageFailure it raises, or the
    crash or hang of the stage it was in; None when it passes or the text is not valid IR."""

    def child(text: str) -> Signature | None:
        try:
            lower(text)
        except StageFailure as exc:
            errors = [d.message for d in exc.diagnostics if d.severity == "error"]
            found = _FAILED_PASS.search(exc.reason)
            return Signature(
                "failure",
                exc.stage,
                found.group(1) if found else "",
                (errors[0] if errors else exc.reason) if with_message else "",
            )
        except MlirpipeError:
            return None
        return None

    def oracle(text: str) -> Signature | None:
        ended = contain.run_contained(lambda: child(text), timeout)
        if ended.ok:
            return ended.value
        if ended.kind == "error":  # not a failure of the pipeline's
            return None
        stages = [m.group(1) for n in ended.notes if (m := _STAGE_NOTE.search(n))]
        kind = "timeout" if ended.kind == "timeout" else "crash"
        detail = "no result in time" if kind == "timeout" else ended.detail
        return Signature(kind, stages[-1] if stages else "", detail, "")

    return oracle


def count_ops(text: str) -> int:
    """The ops inside the module's top-level ops (functions' bodies, terminators included)."""
    ctx = new_context()
    with ctx:
        module = ir.Module.parse(text)
        return sum(1 for top in module.body.operations for _ in _walk(top.operation))


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _walk(inner.operation)


def _removable(module: ir.Module) -> list[ir.Operation]:
    """Ops that a reduction may remove, in pre-order: every op inside a top-level op except
    the last op of each block (its terminator)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                ops = [o.operation for o in block.operations]
                for i, inner in enumerate(ops):
                    if i < len(ops) - 1:
                        found.append(inner)
                    visit(inner)

    for top in module.body.operations:
        visit(top.operation)
    return found


class _Candidates:
    """Builds candidate modules from the current text, each parsed afresh and verified."""

    def __init__(self) -> None:
        self.ctx = new_context()
        self.ctx.allow_unregistered_dialects = True

    def tops(self, text: str) -> int:
        with self.ctx:
            return len(list(ir.Module.parse(text).body.operations))

    def ops(self, text: str) -> int:
        with self.ctx:
            return len(_removable(ir.Module.parse(text)))

    def without_tops(self, text: str, indices: Sequence[int]) -> str | None:
        with self.ctx, ir.Location.unknown():
            module = ir.Module.parse(text)
            tops = [o.operation for o in module.body.operations]
            for i in sorted(indices, reverse=True):
                tops[i].erase()
            return _verified(module)

    def without_ops(self, text: str, indices: Sequence[int], pick: int = 0) -> str | None:
        """The module without the ops at `indices` (of _removable): each use of a result is
        given the op's `pick`-th operand of the same type, or (past the last one) a new
        argument of its function; None when `pick` is past that too."""
        with self.ctx, ir.Location.unknown():
            module = ir.Module.parse(text)
            ops = _removable(module)
            for i in sorted(indices, reverse=True):
                op = ops[i]
                for result in op.results:
                    if _has_uses(result):
                        substitute = _substitute(op, result, pick)
                        if substitute is None:
                            return None
                        result.replace_all_uses_with(substitute)
                op.erase()
            return _verified(module)

    def functions_with_unused_arguments(self, text: str) -> int:
        with self.ctx:
            return len(_unused_arguments(ir.Module.parse(text)))

    def without_unused_arguments(self, text: str, which: int | None = None) -> str | None:
        """The module whose functions (or only the `which`-th of those that have any) lose the
        arguments their bodies do not use."""
        with self.ctx, ir.Location.unknown():
            module = ir.Module.parse(text)
            found = _unused_arguments(module)
            for func, unused in found if which is None else found[which : which + 1]:
                _drop_arguments(func, unused)
            return _verified(module)

    def returning(self, text: str, index: int) -> str | None:
        """The module whose function returns the results of the op at `index` (of
        _removable) when that op is in the function's own body: what follows it goes dead."""
        from torch_mlir.dialects import func as func_dialect

        with self.ctx, ir.Location.unknown():
            module = ir.Module.parse(text)
            op = _removable(module)[index]
            func = op.parent
            if func is None or "function_type" not in func.attributes or not op.results:
                return None
            block = func.regions[0].blocks[0]
            old = [o.operation for o in block.operations][-1]
            values = list(op.results)
            with ir.InsertionPoint(old):
                func_dialect.ReturnOp(values)
            old.erase()
            function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
            func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(list(function_type.inputs), [v.type for v in values])
            )
            if "res_attrs" in func.attributes:
                del func.attributes["res_attrs"]
            return _verified(module)


def _unused_arguments(module: ir.Module) -> list[tuple[ir.Operation, list[int]]]:
    """Each top-level function with a body and the positions of the arguments it never uses."""
    found = []
    for top in module.body.operations:
        op = top.operation
        if "function_type" not in op.attributes or not op.regions:
            continue
        blocks = list(op.regions[0].blocks)
        if blocks:
            unused = [i for i, arg in enumerate(blocks[0].arguments) if not _has_uses(arg)]
            if unused:
                found.append((op, unused))
    return found


def _drop_arguments(func: ir.Operation, positions: Sequence[int]) -> None:
    """Remove the arguments at `positions` from the function's entry block and its type."""
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    kept = [i for i in range(len(function_type.inputs)) if i not in positions]
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([function_type.inputs[i] for i in kept], list(function_type.results))
    )
    if "arg_attrs" in func.attributes:
        attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get([attrs[i] for i in kept])
    block = func.regions[0].blocks[0]
    for i in sorted(positions, reverse=True):
        block.erase_argument(i)


def _has_uses(value: ir.Value) -> bool:
    return any(True for _ in value.uses)


def _substitute(op: ir.Operation, result: ir.Value, pick: int = 0) -> ir.Value | None:
    same = [operand for operand in op.operands if operand.type == result.type]
    if pick < len(same):
        return same[pick]
    if pick > len(same):
        return None
    func = op.parent
    while func is not None and "function_type" not in func.attributes:
        func = func.parent
    if func is None or not func.regions or not func.regions[0].blocks:
        return None
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = [*function_type.inputs, result.type]
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs, list(function_type.results))
    )
    if "arg_attrs" in func.attributes:
        attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get([*attrs, ir.DictAttr.get({})])
    return func.regions[0].blocks[0].add_argument(result.type, ir.Location.unknown())


def _verified(module: ir.Module) -> str | None:
    try:
        if not module.operation.verify():
            return None
    except ir.MLIRError:
        return None
    return str(module)


@dataclass(slots=True)
class _State:
    text: str  # the smallest failing module so far
    tries: int = 0
    shown: int = -1  # the op count last reported as progress


def reduce_module(
    text: str,
    oracle: Oracle,
    target: Signature,
    *,
    budget: float = 300.0,
    progress: Callable[[str], object] = lambda line: None,
) -> Reduction:
    """Delta debugging over `text`: drop top-level ops, then ever smaller runs of ops, keeping
    each candidate that verifies and whose signature is `target`, until nothing more goes or
    the `budget` (seconds) ends. A Ctrl-C ends it too, with the smallest module so far."""
    start = time.perf_counter()
    candidates = _Candidates()
    state = _State(text)
    before = count_ops(text)

    def left() -> bool:
        return time.perf_counter() - start < budget

    def attempt(candidate: str | None) -> bool:
        if candidate is None or candidate == state.text:
            return False
        state.tries += 1
        if oracle(candidate) != target:
            return False
        state.text = candidate
        ops = count_ops(candidate)
        if ops < state.shown:  # one line per size: many candidates keep the op count
            state.shown = ops
            progress(f"reduce: {ops} ops left ({state.tries} tries)")
        return True

    try:
        _reduce_rounds(candidates, state, attempt, left)
    except KeyboardInterrupt:
        interrupted = True
    else:
        interrupted = False
    return Reduction(
        state.text,
        before,
        count_ops(state.text),
        state.tries,
        time.perf_counter() - start,
        left() and not interrupted,
        interrupted,
    )


def _reduce_rounds(candidates: _Candidates, state: _State, attempt, left) -> None:
    """Every way of shrinking, round after round, until a round changes nothing."""
    state.shown = count_ops(state.text)
    changed = True
    while changed and left():
        changed = _sweep(
            lambda t: candidates.tops(t), candidates.without_tops, state, attempt, left
        )
        changed = (
            _sweep(lambda t: candidates.ops(t), candidates.without_ops, state, attempt, left)
            or changed
        )
        changed = _other_substitutes(candidates, state, attempt, left) or changed
        changed = _return_early(candidates, state, attempt, left) or changed
        changed = _drop_unused_arguments(candidates, state, attempt, left) or changed


def _sweep(size, remove, state: _State, attempt, left) -> bool:
    """Try removing runs of `size` items, halving the run length down to one (from the end,
    where uses come after definitions); True when anything went."""
    changed = False
    chunk = max(size(state.text) // 2, 1)
    while chunk >= 1 and left():
        end = size(state.text)
        while end > 0 and left():
            first = max(end - chunk, 0)
            if attempt(remove(state.text, range(first, end))):
                changed = True
                end = min(first, size(state.text))
            else:
                end = first
        chunk //= 2
    return changed


def _other_substitutes(candidates: _Candidates, state: _State, attempt, left) -> bool:
    """Remove single ops once more, their results replaced by their other operands of the same
    type, or a new argument (what keeps a chain of uses alive)."""
    changed = False
    index = candidates.ops(state.text) - 1
    while index >= 0 and left():
        for pick in range(1, 4):
            if attempt(candidates.without_ops(state.text, [index], pick)):
                changed = True
                break
        index = min(index - 1, candidates.ops(state.text) - 1)
    return changed


def _return_early(candidates: _Candidates, state: _State, attempt, left) -> bool:
    """Make the function return an op's results, the earliest op first: the ops after it go
    dead, for the next sweeps to remove."""
    for index in range(candidates.ops(state.text)):
        if not left():
            return False
        if attempt(candidates.returning(state.text, index)):
            return True
    return False


def _drop_unused_arguments(candidates: _Candidates, state: _State, attempt, left) -> bool:
    """Remove the arguments nothing uses (a removed op's stand-ins among them): every
    function's at once, else one function's at a time."""
    if attempt(candidates.without_unused_arguments(state.text)):
        return True
    changed = False
    which = candidates.functions_with_unused_arguments(state.text) - 1
    while which >= 0 and left():
        if attempt(candidates.without_unused_arguments(state.text, which)):
            changed = True
        which -= 1
    return changed
