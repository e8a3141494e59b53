"""Benchmark: ModelChecker.check per model against the floor, on an even sample of OpInfo models.

The sample: torch's OpInfo catalogue (every op with float32 on CPU, its first float32 sample as
an nn.Module, as `mlirpipe sweep` makes them), --models of them evenly spaced over the
catalogue's order; a model that does not pass ModelChecker, or is not small (its check takes
--small seconds or more), is replaced by the next one of the catalogue not yet taken, so every
model timed runs through both. The screening check runs in a
forked child (a few OpInfos crash torch-mlir's import, which check() runs in the test process);
three checks in this process warm it up. Deterministic: the same catalogue, the same sample.

Per model and round, in alternating order (the floor first on even models in even rounds):
  floor    export + import + lower + compile + one call, in this process: no isolation, no
           reference run, no comparison; the same front end, pipeline and compiler as check()
  check    ModelChecker(default isolation, no cache).check(model, *inputs, pipelines=[P]),
           as a test calls it
Prints the median per model of each (the median over rounds first), the ratio of the medians
and the median of the per-model ratios, and where check()'s time goes, by perf_counter stamps
around its steps (the child's stamps travel back with its result): export and import (both
sides), reference runs (eager and float64), fork to the child's first line, the child's lower
(with its MLIR context), native compile, call + comparison, the rest of the child, the result's
trip back (pickling, pipe, exit, wait), and the rest of the parent. --profile N prints the
cProfile of N checks, parent and child (the child's written to a file and read back).

Usage: python bench/check_pace.py [--models 300] [--rounds 2] [--pipeline refbackend]
                                  [--small 3] [--profile N]
       python bench/check_pace.py --quick      # 20 models, 2 rounds: about a minute
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

now = time.perf_counter  # CLOCK_MONOTONIC: parent and forked child stamps compare


# ---- the sample -------------------------------------------------------------------------------


def candidates() -> list[tuple[str, Callable[[], tuple[Any, list[Any]]]]]:
    """Every float32 OpInfo of the catalogue, in order, with a maker of its module and inputs."""
    from pytest_mlirpipe.execution.sweep import opinfo

    infos = {opinfo.op_id(i): i for i in opinfo.op_db()}
    units = opinfo.select_units(None, ["float32"], 1, None)

    def maker(info: Any) -> Callable[[], tuple[Any, list[Any]]]:
        def make() -> tuple[Any, list[Any]]:
            samples = opinfo.samples_of(info, "float32", 1)
            if not samples:
                raise LookupError("no sample")
            return opinfo.module_and_inputs(info, samples[0])

        return make

    return [(u.op, maker(infos[u.op])) for u in units]


def evenly_spaced(total: int, count: int) -> list[int]:
    return [i * total // count for i in range(min(count, total))]


def build_sample(count: int, passes: Callable[[str, Any, list[Any]], bool]) -> list[tuple]:
    """`count` models evenly spaced over the catalogue, each replaced by the next one not taken
    when it does not pass (`passes` is the screening check, and the warm-up)."""
    pool = candidates()
    taken: set[int] = set()
    failed = 0
    sample = []
    for start in evenly_spaced(len(pool), count):
        i = start
        while i < len(pool) + start:
            j = i % len(pool)
            i += 1
            if j in taken:
                continue
            taken.add(j)
            name, make = pool[j]
            try:
                with quiet():
                    model, inputs = make()
            except Exception:
                failed += 1
                continue
            if passes(name, model, inputs):
                sample.append((name, model, inputs))
                break
            failed += 1
    print(f"sample: {len(sample)} models of {len(pool)} ({failed} screened out)", flush=True)
    return sample


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ---- the two candidates -----------------------------------------------------------------------


def clones(inputs: list[Any]) -> list[Any]:
    return [x.clone() for x in inputs]


def floor(model: Any, inputs: list[Any], pipeline: str) -> None:
    """Export, import, lower, compile and call once, in this process."""
    from pytest_mlirpipe.execution.cache import ArtifactCache
    from pytest_mlirpipe.execution.frontends import ImportOptions, frontend_for
    from pytest_mlirpipe.execution.native.compiled_model import compile_model

    pipe = pipes(pipeline)
    cache = ArtifactCache(None)
    frontend = frontend_for(model, inputs, ImportOptions())
    imported = frontend.imported(pipe, cache)
    compiled = compile_model(imported, pipe, frontend.name, "jit", cache, _work())
    compiled.function(*inputs)


@functools.cache
def _work() -> Any:
    from pytest_mlirpipe.execution.workdir import WorkDir

    return WorkDir(None)


@functools.cache
def pipes(name: str) -> Any:
    from pytest_mlirpipe.lowering.catalog import catalog_for

    return catalog_for([]).get(name)


def check(model: Any, inputs: list[Any], pipeline: str) -> bool:
    """ModelChecker.check as a test calls it; whether it passed."""
    from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker

    checker = ModelChecker()
    try:
        checker.check(model, *inputs, pipelines=[pipeline])
    except ExecutionMismatch:
        return False
    finally:
        checker.close()
    return True


def screen(model: Any, inputs: list[Any], pipeline: str, small: float) -> bool:
    """Whether the model is small and passes: check() passes in less than `small` seconds,
    asked in a forked child (some crash torch-mlir's import, which check() runs in its own
    process)."""
    from pytest_mlirpipe import contain

    ended = contain.run_contained(lambda: check(model, clones(inputs), pipeline), timeout=small)
    return ended.ok and ended.value is True


# ---- the breakdown: stamps around check()'s steps ---------------------------------------------


class Stamps:
    """Seconds per step of the current check, parent and child; a step's own time, without
    the time of the steps timed inside it (the export inside the reference runs)."""

    def __init__(self) -> None:
        self.steps: dict[str, float] = defaultdict(float)
        self.child: dict[str, float] | None = None  # set in a contained child
        self.inner: list[float] = []  # per open step, the seconds of steps timed inside it

    def add(self, step: str, seconds: float) -> None:
        target = self.child if self.child is not None else self.steps
        target[step] += seconds


STAMPS = Stamps()


def timed(step: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        STAMPS.inner.append(0.0)
        t0 = now()
        try:
            return fn(*args, **kwargs)
        finally:
            seconds = now() - t0
            STAMPS.add(step, seconds - STAMPS.inner.pop())
            if STAMPS.inner:
                STAMPS.inner[-1] += seconds

    return wrapper


def instrument() -> None:
    """Wrap check()'s steps in stamps (the bench's own patches; the project is unchanged)."""
    from pytest_mlirpipe import contain
    from pytest_mlirpipe.execution import check as check_module
    from pytest_mlirpipe.execution.frontends import torch_module
    from pytest_mlirpipe.execution.native import compiled_model

    torch_module.export_module = timed("export", torch_module.export_module)
    torch_module.lower_exported = timed("import", torch_module.lower_exported)
    check_module.ModelChecker._references = timed(
        "reference runs", check_module.ModelChecker._references
    )
    compiled_model.lower_model = timed("lower", compiled_model.lower_model)
    compiled_model.jit = timed("native compile", compiled_model.jit)
    check_module.compare = timed("comparison", check_module.compare)
    original = contain.run_contained

    @functools.wraps(original)
    def run_contained(fn: Callable[[], Any], timeout: float | None = None) -> Any:
        def child() -> Any:
            first = now()
            STAMPS.child = defaultdict(float)
            STAMPS.inner = []
            value = fn()
            return value, first, dict(STAMPS.child), now()

        t0 = now()
        ended = original(child, timeout)
        t1 = now()
        if not ended.ok:
            return ended
        value, first, steps, last = ended.value
        STAMPS.steps["fork to the child's first line"] += first - t0
        for step, s in steps.items():
            STAMPS.steps[step] += s
        STAMPS.steps["child: the rest"] += (last - first) - sum(steps.values())
        STAMPS.steps["result back, exit, wait"] += t1 - last
        STAMPS.steps["contained (all of the above)"] += t1 - t0
        return replace(ended, value=value)

    contain.run_contained = run_contained


# ---- the run ---------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pipeline", default="refbackend")
    ap.add_argument("--quick", action="store_true", help="20 models, 2 rounds")
    ap.add_argument("--profile", type=int, default=0, metavar="N")
    ap.add_argument("--small", type=float, default=3.0, help="seconds a small model's check takes")
    args = ap.parse_args()
    if args.quick:
        args.models, args.rounds = 20, 2

    t_start = now()
    load_start = os.getloadavg()
    with quiet():
        sample = build_sample(args.models, lambda n, m, x: screen(m, x, args.pipeline, args.small))
        for _, model, inputs in sample[:3]:  # first imports and dispatches, here
            check(model, clones(inputs), args.pipeline)
    if args.profile:
        profile(sample[: args.profile], args.pipeline)
    instrument()
    times: dict[str, list[list[float]]] = {w: [[] for _ in sample] for w in ("floor", "check")}
    steps: dict[str, list[dict[str, list[float]]]] = {
        w: [defaultdict(list) for _ in sample] for w in times
    }
    changed = []
    for r in range(args.rounds):
        for k, (name, model, inputs) in enumerate(sample):
            order = ("floor", "check") if (k + r) % 2 == 0 else ("check", "floor")
            for which in order:
                x = clones(inputs)
                STAMPS.steps, STAMPS.inner = defaultdict(float), []
                with quiet():
                    t0 = now()
                    if which == "floor":
                        floor(model, x, args.pipeline)
                    elif not check(model, x, args.pipeline):
                        changed.append(name)
                    seconds = now() - t0
                times[which][k].append(seconds)
                STAMPS.steps["the rest"] = seconds - sum(
                    s for step, s in STAMPS.steps.items() if step not in _INCLUDED
                )
                for step, s in STAMPS.steps.items():
                    steps[which][k][step].append(s)
    report(args, sample, times, steps, changed, load_start, now() - t_start)


# Steps whose time other steps already count.
_INCLUDED = ("contained (all of the above)",)


def report(args, sample, times, steps, changed, load_start, wall) -> None:
    per_model = {w: [statistics.median(t) for t in ts] for w, ts in times.items()}
    f, c = statistics.median(per_model["floor"]), statistics.median(per_model["check"])
    ratios = [cm / fm for cm, fm in zip(per_model["check"], per_model["floor"], strict=True)]
    print(
        f"{len(sample)} OpInfo models (float32, first sample) through {args.pipeline}, "
        f"{args.rounds} rounds, alternating; load average {load_start[0]:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end; {wall:.0f} s in all"
    )
    print(f"  floor (in-process)     median {f * 1e3:7.1f} ms a model")
    print(f"  check (fork, compare)  median {c * 1e3:7.1f} ms a model")
    print(
        f"  ratio of the medians {c / f:.3f}x; median of per-model ratios "
        f"{statistics.median(ratios):.3f}x (quartiles "
        f"{statistics.quantiles(ratios, n=4)[0]:.3f}-{statistics.quantiles(ratios, n=4)[2]:.3f})"
    )
    extra = [cm - fm for cm, fm in zip(per_model["check"], per_model["floor"], strict=True)]
    print(f"  check minus floor: median {statistics.median(extra) * 1e3:.1f} ms a model")
    if changed:
        print(f"  verdicts that changed after screening: {', '.join(sorted(set(changed)))}")
    names = sorted({s for w in steps.values() for m in w for s in m}, key=_step_order)
    print("  median ms a model per step (medians do not add up; means in brackets):")
    print(f"    {'step':<32} {'floor':>16} {'check':>16}")
    for step in names:
        cells = []
        for w in ("floor", "check"):
            values = [statistics.median(m[step]) if step in m else 0.0 for m in steps[w]]
            cells.append(f"{statistics.median(values) * 1e3:7.2f} ({_mean(values):6.2f})")
        print(f"    {step:<32} {cells[0]:>16} {cells[1]:>16}")


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) * 1e3


_ORDER = (
    "export",
    "import",
    "reference runs",
    "fork",
    "lower",
    "native",
    "comparison",
    "child: the rest",
    "result",
    "contained",
    "the rest",
)


def _step_order(step: str) -> int:
    return next((i for i, p in enumerate(_ORDER) if step.startswith(p)), len(_ORDER))


def profile(sample: list[tuple], pipeline: str) -> None:
    """cProfile of `len(sample)` checks: the parent's, then the children's (each child writes
    its own, merged here)."""
    from pytest_mlirpipe import contain

    original = contain.run_contained
    with tempfile.TemporaryDirectory() as folder:
        files = []

        def run_contained(fn: Callable[[], Any], timeout: float | None = None) -> Any:
            path = os.path.join(folder, f"child{len(files)}.prof")
            files.append(path)

            def child() -> Any:
                p = cProfile.Profile()
                try:
                    return p.runcall(fn)
                finally:
                    p.dump_stats(path)

            return original(child, timeout)

        contain.run_contained = run_contained
        parent = cProfile.Profile()
        with quiet():
            for _, model, inputs in sample:
                parent.runcall(check, model, clones(inputs), pipeline)
        contain.run_contained = original
        for label, stats in (("parent", pstats.Stats(parent)), ("children", None)):
            out = io.StringIO()
            if stats is None:
                stats = pstats.Stats(*files, stream=out)
            stats.stream = out
            stats.sort_stats("cumulative").print_stats(40)
            print(f"---- cProfile, {label}, {len(sample)} checks ----")
            print(out.getvalue())


if __name__ == "__main__":
    from pytest_mlirpipe.execution.workdir import private_torch_cache

    with private_torch_cache():  # torch's cache folder is not left in $TMPDIR
        sys.exit(main())
