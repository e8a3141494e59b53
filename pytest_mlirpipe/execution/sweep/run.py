"""The OpInfo sweep: each entry through each pipeline, contained, in parallel, resumable (JSONL)."""

from __future__ import annotations

import contextlib
import json
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import contain
from ...errors import MlirpipeError, Problem, UsageError
from ...model import Location, SweepVerdict
from . import opinfo
from .opinfo import Unit
from .verdicts import (
    EntryResult,
    Verdict,
    classify_error,
    classify_exception,
    classify_outcome,
    stage_of_note,
)


@dataclass(frozen=True, slots=True)
class SweepSettings:
    """What every entry is checked with; plain data, shipped to the worker processes."""

    pipelines: tuple[str, ...]
    pipeline_dirs: tuple[str, ...] = ()
    timeout: float = 120.0  # seconds per entry and pipeline; 0: none
    work_dir: str = ""  # where build products go (removed by the sweep when it ends)


# ---- one entry ------------------------------------------------------------------------------


def check_entry(checker: Any, module: Any, inputs: Sequence[Any], pipeline: str) -> Verdict:
    """The verdict of one op module through one pipeline (run in a contained child)."""
    from ..check import ExecutionMismatch
    from ..native.signature import BoundaryError

    undefined = _nothing_to_compare(module, inputs)
    if undefined is not None:
        return undefined
    try:
        with warnings.catch_warnings():  # torch's deprecation notes about the samples' ops
            warnings.simplefilter("ignore")
            outcomes = checker.check(module, *inputs, pipelines=[pipeline], time_it=False)
    except ExecutionMismatch as exc:
        outcomes = list(exc.outcomes)
    except BoundaryError as exc:
        return _beyond_the_boundary(checker, module, inputs, pipeline, exc)
    except MlirpipeError as exc:
        return classify_error(exc)
    except Exception as exc:
        return classify_exception(exc)
    return classify_outcome(outcomes[0])


def _beyond_the_boundary(
    checker: Any, module: Any, inputs: Sequence[Any], pipeline: str, exc: MlirpipeError
) -> Verdict:
    """An input or result the harness cannot pass or compare (sparse, or with no numpy
    dtype): when torch-mlir (or the pipeline) refuses the model anyway, that is the verdict;
    else it is HARNESS."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            checker.compile(module, *inputs, pipeline=pipeline)
    except MlirpipeError as refused:
        verdict = classify_error(refused)
        if verdict.verdict is not SweepVerdict.HARNESS:
            return verdict
    except Exception:  # then the harness's own limit is the verdict
        pass
    return classify_error(exc)


# ATen ops whose results are uninitialized memory: a model made of these alone returns
# nothing defined to compare with.
_UNINITIALIZED = ("aten.empty", "aten.new_empty")


def _nothing_to_compare(module: Any, inputs: Sequence[Any]) -> Verdict | None:
    """TORCH when torch eager calls nothing but ops that make uninitialized tensors
    (torch.empty & co.): there is nothing to compare with. An eager failure is left to the
    checker to report; a random op's results are judged by the checker's sample rule."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class SeenOps(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append(str(func))
            return func(*args, **(kwargs or {}))

    cloned = [x.clone() for x in inputs]
    try:
        with warnings.catch_warnings(), torch.no_grad(), SeenOps() as mode:
            warnings.simplefilter("ignore")
            module(*cloned)
    except Exception:
        return None
    if mode.calls and all(c.startswith(_UNINITIALIZED) for c in mode.calls):
        why = f"undefined: torch eager returns uninitialized memory ({mode.calls[0]})"
        return Verdict(SweepVerdict.TORCH, why, "eager")
    return None


def contained_entry(
    checker: Any, module: Any, inputs: Sequence[Any], pipeline: str, timeout: float
) -> Verdict:
    """check_entry in a forked child: a crash or a hang is this entry's CRASH verdict."""
    if not contain.is_available():
        return check_entry(checker, module, inputs, pipeline)
    ended = contain.run_contained(
        lambda: check_entry(checker, module, inputs, pipeline), timeout=timeout or None
    )
    if ended.ok:
        return ended.value
    last = ended.notes[-1] if ended.notes else None
    if ended.kind == "error":  # check_entry itself failed: ours
        lines = ended.detail.strip().splitlines()
        return Verdict(SweepVerdict.HARNESS, lines[-1] if lines else "an error in the sweep")
    where = f", while {last}" if last else ", while importing"
    return Verdict(SweepVerdict.CRASH, f"{ended.detail}{where}", stage_of_note(last))


# ---- one unit (an op in one dtype) ----------------------------------------------------------


class UnitRunner:
    """Runs units in this process: one checker (pipelines validated once), forked per entry."""

    def __init__(self, settings: SweepSettings):
        from ..check import ModelChecker
        from ..native.runtime import runtime_library

        self.settings = settings
        self.checker = ModelChecker(
            pipeline_dirs=settings.pipeline_dirs,
            cache_dir=None,
            isolation="none",
            work_dir=settings.work_dir or None,
            repros=False,  # the matrix of verdicts is the report: no folder per wrong entry
        )
        for name in settings.pipelines:
            self.checker.pipeline(name)  # an unknown pipeline fails here, before any entry
        runtime_library()  # built once here; the forked children inherit it
        self.checker.work.prepare()

    def run(self, unit: Unit, done: Iterable[tuple[int, str]] = ()) -> list[EntryResult]:
        """Every (sample, pipeline) of `unit` not in `done`."""
        skip = set(done)
        try:
            info = opinfo.find_op(unit.op)
            samples = opinfo.samples_of(info, unit.dtype, unit.samples)
        except Exception as exc:
            why = classify_exception(exc)
            return self._all(
                unit, 0, skip, Verdict(SweepVerdict.TORCH, f"samples: {why.detail}", "samples")
            )
        if not samples:
            none = Verdict(
                SweepVerdict.TORCH, f"OpInfo has no {unit.dtype} sample on CPU", "samples"
            )
            return self._all(unit, 0, skip, none)
        results = []
        for index, sample in enumerate(samples):
            module, inputs = opinfo.module_and_inputs(info, sample)
            for pipeline in self.settings.pipelines:
                if (index, pipeline) in skip:
                    continue
                t0 = time.perf_counter()
                v = contained_entry(self.checker, module, inputs, pipeline, self.settings.timeout)
                results.append(_result(unit, index, pipeline, v, time.perf_counter() - t0))
        return results

    def _all(self, unit: Unit, index: int, skip: set, verdict: Verdict) -> list[EntryResult]:
        return [
            _result(unit, index, p, verdict, 0.0)
            for p in self.settings.pipelines
            if (index, p) not in skip
        ]


def _result(unit: Unit, index: int, pipeline: str, v: Verdict, seconds: float) -> EntryResult:
    return EntryResult(
        unit.op,
        unit.dtype,
        index,
        pipeline,
        v.verdict,
        v.detail,
        v.stage,
        v.pass_name,
        v.max_abs,
        round(seconds, 3),
    )


# ---- worker processes -------------------------------------------------------------------------

_RUNNER: UnitRunner | None = None


def _init_worker(settings: SweepSettings) -> None:
    global _RUNNER
    import torch

    torch.set_num_threads(1)  # one core per worker; forks of a threaded torch can hang
    _RUNNER = UnitRunner(settings)


def _run_in_worker(unit: Unit, done: tuple[tuple[int, str], ...]) -> list[EntryResult]:
    assert _RUNNER is not None
    return _RUNNER.run(unit, done)


# ---- the results file -------------------------------------------------------------------------


def read_results(path: Path) -> dict[tuple[str, str, int, str], EntryResult]:
    """The entries of a results file, the last line of each key winning; a line cut short by
    an interrupted run is ignored."""
    found: dict[tuple[str, str, int, str], EntryResult] = {}
    if not path.exists():
        return found
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            Problem(
                "not the results file of a sweep: it is not UTF-8 text",
                Location(str(path)),
                "name a new folder with --out, or one a sweep wrote, to resume it",
            )
        ) from None
    for line in text.splitlines():
        try:
            result = EntryResult.from_json(json.loads(line))
        except (ValueError, TypeError):
            continue
        found[result.key] = result
    return found


def _done_by_unit(
    units: Sequence[Unit], pipelines: Sequence[str], results: Iterable[tuple[str, str, int, str]]
) -> list[tuple[Unit, tuple[tuple[int, str], ...]]]:
    """Each unit with what the results file already holds of it; finished units left out."""
    held: dict[tuple[str, str], set[tuple[int, str]]] = {}
    for op, dtype, sample, pipeline in results:
        held.setdefault((op, dtype), set()).add((sample, pipeline))
    todo = []
    for unit in units:
        done = held.get((unit.op, unit.dtype), set())
        wanted = {(i, p) for i in range(unit.samples) for p in pipelines}
        if not wanted <= done:
            todo.append((unit, tuple(sorted(done & wanted))))
    return todo


def run_sweep(
    units: Sequence[Unit],
    settings: SweepSettings,
    results_path: Path,
    jobs: int = 1,
    progress: Callable[[int, int, Unit, list[EntryResult]], None] | None = None,
    redo: frozenset[str] = frozenset(),
) -> int:
    """Check every unit not yet in `results_path`, appending each unit's results as it ends;
    an entry held with a verdict in `redo` is checked again (its new line wins). `jobs`
    worker processes (1: in this process). Returns how many units ran."""
    held = [key for key, r in read_results(results_path).items() if r.verdict not in redo]
    todo = _done_by_unit(units, settings.pipelines, held)
    if not todo:
        return 0
    results_path.parent.mkdir(parents=True, exist_ok=True)
    with _appender(results_path) as write:

        def finished(n: int, unit: Unit, results: list[EntryResult]) -> None:
            write(results)
            if progress is not None:
                progress(n, len(todo), unit, results)

        if jobs <= 1:
            runner = UnitRunner(settings)
            try:
                for n, (unit, done) in enumerate(todo, 1):
                    finished(n, unit, runner.run(unit, done))
            finally:
                runner.checker.close()
        else:
            _run_in_pool(todo, settings, jobs, finished)
    return len(todo)


def _run_in_pool(
    todo: Sequence[tuple[Unit, tuple[tuple[int, str], ...]]],
    settings: SweepSettings,
    jobs: int,
    finished: Callable[[int, Unit, list[EntryResult]], None],
) -> None:
    """The units in `jobs` fresh worker processes, each result handed on as it comes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(settings,),
    )
    try:
        with contain.sigint_ignored():  # the workers start as submit needs them
            futures = {pool.submit(_run_in_worker, unit, done): unit for unit, done in todo}
        for n, future in enumerate(as_completed(futures), 1):
            finished(n, futures[future], future.result())
    except KeyboardInterrupt:  # the units that ended are in the results file: resumable
        for process in list((pool._processes or {}).values()):  # no public way to list them
            if process.pid is not None:  # started
                contain.kill_tree(process.pid)
        raise
    except BrokenProcessPool:
        raise MlirpipeError(
            Problem(
                "a sweep worker process died (not in a contained entry)",
                hint="the results so far are kept: run the same command again to resume",
            )
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _appender(path: Path) -> Iterator[Callable[[list[EntryResult]], None]]:
    """A function appending results to the JSONL file, one flushed line each (after a new
    line if an interrupted run left the last one unfinished)."""
    size = path.stat().st_size if path.exists() else 0
    with open(path, "a+b") as out:
        if size:
            out.seek(size - 1)
            if out.read(1) != b"\n":
                out.write(b"\n")

        def write(results: list[EntryResult]) -> None:
            for r in results:
                out.write((json.dumps(r.to_json(), sort_keys=True) + "\n").encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())

        yield write
