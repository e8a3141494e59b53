"""Check models: through each pipeline compile, run once, compare with the reference; time."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import contain
from ..errors import MlirpipeError, Problem, UsageError, first_line
from ..model import ExecutionVerdict, Pipeline
from .bisect import RIGHT, UNKNOWN, WRONG, Bisection, find_divergence
from .cache import ArtifactCache
from .commands import PLAIN, CommandContext
from .frontends import Frontend, ImportedModel, ImportOptions, frontend_for, reference_results
from .native.blas_library import set_blas_threads
from .native.compiled_model import CompiledModel, check_mode, compile_model, ready_for_forks
from .native.jit import NativeFunction
from .native.model_lowering import require_llvm_output
from .refusal import Refusal, refusal_of
from .results.compare import Comparison, Tolerances, compare
from .results.reference import Float64Results, float64_results, reference_label
from .results.samples import reseeded
from .results.timing import TimingConfig, measure
from .workdir import WorkDir

DEFAULT_PIPELINES = ("refbackend",)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One case through one pipeline: verdict, comparison, timings; plain picklable data."""

    case: str
    pipeline: str
    verdict: ExecutionVerdict  # PASS, FAIL or TIMEOUT (its name is taken too)
    abi: str = ""
    mode: str = "jit"
    comparison: Comparison | None = None
    error: str | None = None
    compile_seconds: Mapping[str, float] = field(default_factory=dict)
    timing: Any = None  # timing.Timing of the native code
    torch_timing: Any = None  # timing.Timing of torch eager
    flops: float | None = None
    cached: bool = False
    export: str = ""  # "strict" when torch.export's default (non-strict) mode failed
    refusal: Refusal | None = None  # when torch or the compiler refused the model (see error)
    bisection: Bisection | None = None  # where wrong results begin (check(..., bisect=True))
    repro: str = ""  # for wrong results: the command lowering the saved imported module

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", ExecutionVerdict(self.verdict))

    @property
    def max_abs(self) -> float | None:
        return self.comparison.max_abs if self.comparison is not None else None


class ExecutionMismatch(MlirpipeError):
    """A model's native results differ from torch's, or it failed to compile or run."""

    def __init__(self, case: str, outcomes: Sequence[Outcome], more: Sequence[Problem] = ()):
        self.case = case
        self.outcomes = tuple(outcomes)
        failed = [o for o in outcomes if o.verdict.is_failure]
        super().__init__(
            [
                Problem(
                    f"case '{case}' through pipeline '{o.pipeline}' ({o.mode}"
                    + (f", {o.abi}" if o.abi else "")
                    + (f", {o.export} export" if o.export else "")
                    + "): "
                    + ("TIMEOUT, " if o.verdict is ExecutionVerdict.TIMEOUT else "")
                    + (o.error or (o.comparison.format() if o.comparison else "failed"))
                    + (f"\n  reproduce the lowering with: {o.repro}" if o.repro else "")
                    + (f"\n{o.bisection.format()}" if o.bisection is not None else ""),
                    hint=_BISECT_HINT if _bisectable(o) and o.bisection is None else None,
                )
                for o in failed
            ]
            + list(more)  # what else the check found wrong (a listed failure that passes)
        )


_BISECT_HINT = (
    "to find the first stage after which the results are wrong, rerun with "
    "--mlirpipe-bisect (pytest), `mlirpipe run --bisect`, or check(..., bisect=True)"
)


def _warn_of_unjudged_results(outcomes: Sequence[Outcome]) -> None:
    """A warning per result of a passing check that too few random draws left unjudged: the
    check passed without its values being compared."""
    import warnings

    from .results.compare import RandomResultNotJudged

    for o in outcomes:
        if o.verdict is ExecutionVerdict.PASS and o.comparison is not None:
            for r in o.comparison.unjudged:
                message = f"case '{o.case}' through pipeline '{o.pipeline}': {r.format()}"
                warnings.warn(RandomResultNotJudged(message), stacklevel=_caller_level())


def _caller_level() -> int:
    """The stacklevel, for a warning its caller gives, of the first frame outside this package
    (the test's line, whether it called the checker or the `mlirpipe` fixture)."""
    import sys

    from ..callers import outside

    return 1 + outside(sys._getframe(1))[1]


def _bisectable(outcome: Outcome) -> bool:
    """A pipeline that lowered and ran, with wrong results (a bisection can look for them)."""
    return outcome.verdict.is_failure and outcome.comparison is not None


@dataclass(frozen=True, slots=True)
class _Case:
    """What one check() call fixes for every pipeline it runs."""

    name: str
    frontend: Frontend
    expected: list[Any]
    exact: Float64Results  # the float64 results the scaled rule judges by, or why none
    tolerances: Tolerances
    mode: str
    flops: float | None
    timed: bool
    baseline: Callable[..., Any] | None  # what torch runs when timed against the native code
    work: WorkDir  # where shared libraries are built and repro files written
    reference: str = "torch"  # what computed `expected`, as a report names it
    commands: CommandContext = PLAIN  # what its printed commands need to run


class ModelChecker:
    """Compiles models through pipelines, checks them against their reference, times them.

    Keeps every Outcome in `outcomes` for the end-of-run table and JSON. Shared libraries
    and repro files go under the `work_dir` of a call, else this checker's `work_dir`, else
    a private folder that close() (or the end of the process) removes.
    """

    def __init__(
        self,
        pipeline_dirs: Sequence[str | Path] = (),
        cache_dir: Path | str | None = None,
        timing: TimingConfig | None = None,
        mode: str = "jit",
        default_pipelines: Sequence[str] = DEFAULT_PIPELINES,
        isolation: str = "fork",
        timeout: float = 0.0,
        work_dir: Path | str | None = None,
        bisect: bool = False,
        repros: bool = True,
        timeout_from: str = "mlirpipe_timeout",
    ):
        check_mode(mode)
        self.pipeline_dirs = [str(d) for d in pipeline_dirs]
        self.cache = ArtifactCache(cache_dir)
        self.timing = timing
        self.mode = mode
        self.default_pipelines = tuple(default_pipelines)
        self.outcomes: list[Outcome] = []
        # "fork": compiled code first runs (and is compared) in a forked child, so a crash or
        # a hang fails one pipeline of one case; "none": everything runs in this process.
        self.isolation = isolation
        self.timeout = timeout
        self.timeout_from = timeout_from  # where the limit was set, as a TIMEOUT names it
        self.work = WorkDir(work_dir)
        # Whether check() looks for the first stage after which wrong results begin.
        self.bisect_failures = bisect
        # Whether a pipeline with wrong results writes its imported module for a repro.
        self.repros = repros

    def close(self) -> None:
        """Remove the private folder of build products (a given `work_dir` stays)."""
        self.work.close()

    def _work(self, work_dir: Path | str | None) -> WorkDir:
        return WorkDir(work_dir) if work_dir is not None else self.work

    def commands(self) -> CommandContext:
        """What the commands a failure prints need to run in a shell as they ran here: this
        checker's pipeline folders, the pass modules loaded through the environment."""
        return CommandContext.here(self.pipeline_dirs)

    def pipeline(self, name: str) -> Pipeline:
        from ..lowering.catalog import catalog_for

        return catalog_for(self.pipeline_dirs).get(name)

    def compile(
        self,
        model: Any,
        *inputs: Any,
        pipeline: str = "refbackend",
        mode: str | None = None,
        work_dir: Path | str | None = None,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        import_profile: str | None = None,
    ) -> CompiledModel:
        """Import `model` with `inputs`, lower it through `pipeline`, make it native.

        `backend_legal_ops` and `decompositions`: as for check()."""
        pipe = self.pipeline(pipeline)
        require_llvm_output(pipe)
        options = ImportOptions.of(backend_legal_ops, decompositions, import_profile)
        frontend = frontend_for(model, inputs, options)
        imported = frontend.imported(pipe, self.cache)
        mode = mode or self.mode
        return compile_model(imported, pipe, frontend.name, mode, self.cache, self._work(work_dir))

    def check(
        self,
        model: Any,
        *inputs: Any,
        pipelines: Sequence[str] | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        reference: Callable[..., Any] | None = None,
        name: str | None = None,
        flops: float | None = None,
        mode: str | None = None,
        per_dtype: Mapping[str, tuple[float, float]] | None = None,
        time_it: bool | None = None,
        work_dir: Path | str | None = None,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        import_profile: str | None = None,
        bisect: bool | None = None,
    ) -> list[Outcome]:
        """Run `model` through each pipeline and compare with torch eager (or `reference`).

        Without `rtol`/`atol`, floating-point results are judged against a float64 run of the
        model (compare.Rule.SCALED, see docs/guides/execution-tests.md); given ones judge element
        by element.

        A torch module's import takes `backend_legal_ops` (ops torch-mlir keeps whole, e.g.
        "aten.adaptive_max_pool2d"), or `import_profile` (a named set of them, by import
        target: "torch-mlir-e2e" imports as torch-mlir's e2e runner does), and
        `decompositions` (op names; default torch-mlir's table).

        A model that draws random numbers (an op tagged nondeterministic_seeded) is judged
        by the sample rule, see samples.py.

        With `bisect` (default: this checker's `bisect`), a pipeline whose results are wrong
        is bisected (see bisect()); its Outcome and the report carry the stage found.

        Raises ExecutionMismatch listing every pipeline that failed; the outcomes (with
        timings when this checker times) are kept in `self.outcomes` either way.
        """
        options = ImportOptions.of(backend_legal_ops, decompositions, import_profile)
        frontend = frontend_for(model, inputs, options)
        pipes = list(pipelines or self.default_pipelines)
        if not pipes:
            raise UsageError(Problem("check() got an empty list of pipelines"))
        timed = self.timing is not None if time_it is None else time_it
        tolerances = Tolerances(rtol, atol, per_dtype)
        case = self._case(frontend, pipes[0], reference, tolerances, name, work_dir, mode, timed)
        case = replace(case, flops=flops)  # reported with its timings
        outcomes = self._run(case, pipes)
        if self.bisect_failures if bisect is None else bisect:
            outcomes = [
                replace(o, bisection=self._bisect(case, o.pipeline, True)) if _bisectable(o) else o
                for o in outcomes
            ]
        if frontend.export_mode() == "strict":
            outcomes = [replace(o, export="strict") for o in outcomes]
        self.outcomes.extend(outcomes)
        _warn_of_unjudged_results(outcomes)
        if any(o.verdict.is_failure for o in outcomes):
            raise ExecutionMismatch(case.name, outcomes)
        return outcomes

    def bisect(
        self,
        model: Any,
        *inputs: Any,
        pipeline: str = "refbackend",
        rtol: float | None = None,
        atol: float | None = None,
        reference: Callable[..., Any] | None = None,
        name: str | None = None,
        work_dir: Path | str | None = None,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        import_profile: str | None = None,
    ) -> Bisection:
        """The first stage of `pipeline` after which `model`'s results are wrong.

        Each stage's IR is lowered the rest of the way by a trusted tail (bisect.tail_for),
        compiled, run on `inputs` and judged as check() judges; a binary search over the
        stages names the first whose IR computes wrongly. Options as for check(). Call it
        for a pipeline whose results check() found wrong: otherwise it names no stage.
        """
        options = ImportOptions.of(backend_legal_ops, decompositions, import_profile)
        frontend = frontend_for(model, inputs, options)
        case = self._case(frontend, pipeline, reference, Tolerances(rtol, atol), name, work_dir)
        return self._bisect(case, pipeline, False)

    def _case(
        self,
        frontend: Frontend,
        first_pipeline: str,
        reference: Callable[..., Any] | None,
        tolerances: Tolerances,
        name: str | None,
        work_dir: Path | str | None,
        mode: str | None = None,
        timed: bool = False,
    ) -> _Case:
        """What a check() or bisect() call fixes for every pipeline it runs."""
        expected, exact = self._references(frontend, first_pipeline, reference, tolerances)
        tolerances = replace(tolerances, draws=frontend.draws())
        return _Case(
            name or frontend.name,
            frontend,
            expected,
            exact,
            tolerances,
            mode or self.mode,
            None,
            timed,
            reference or frontend.eager(),
            self._work(work_dir),
            reference_label(reference),
            self.commands(),
        )

    def _bisect(self, case: _Case, pipeline: str, known_wrong: bool) -> Bisection:
        """Bisect `pipeline` for `case`: each probe compiles, runs and compares (contained)."""
        pipe = self.pipeline(pipeline)
        imported = case.frontend.imported(pipe, self.cache)
        untimed = replace(case, timed=False)
        contained = self.isolation == "fork" and contain.is_available()

        def probe(text: str, tail: Pipeline) -> tuple[str, str]:
            snapshot = replace(imported, text=text, cached=False)
            run = self._contained if contained else self._compile_and_compare
            outcome, _ = run(untimed, snapshot, tail)
            if outcome.verdict is ExecutionVerdict.PASS:
                return RIGHT, ""
            if outcome.comparison is not None:
                # "result 0 ('x'): 5 of 8 elements differ (62.50%)", without the rule's numbers
                return WRONG, outcome.comparison.format().splitlines()[0].split(" beyond ")[0]
            return UNKNOWN, (outcome.error or "failed").strip().splitlines()[0]

        try:
            return find_divergence(
                imported.text,
                pipe,
                probe,
                source_name=case.name,
                keep=lambda: case.work.kept_folder("mlirpipe-bisect-"),
                commands=case.commands,
                known_wrong=known_wrong,
            )
        except MlirpipeError as exc:  # the mismatch is still reported, with why this stopped
            return Bisection(pipe.name, len(pipe.stages), why_not=f"it stopped: {first_line(exc)}")

    def _references(
        self,
        frontend: Frontend,
        first_pipeline: str,
        reference: Callable[..., Any] | None,
        tolerances: Tolerances,
    ) -> tuple[list[Any], Float64Results]:
        """The expected results (torch eager, ONNX's evaluator or `reference`) and, when no
        tolerance is given, the float64 run the default verdict judges against."""
        # Each torch run of the model starts from the same seed: a model that draws random
        # numbers draws the same ones in eager, in float64 and in any rerun.
        with reseeded():
            if reference is not None:
                expected = reference_results(reference, frontend.inputs)
            else:
                expected = frontend.expected(lambda: self.pipeline(first_pipeline))
        if not tolerances.uniform:
            with reseeded():
                exact = float64_results(
                    reference or frontend.eager(),
                    frontend.inputs,
                    expected,
                    reference_label(reference),
                )
        else:
            exact = Float64Results(why_not="a tolerance was given")
        return expected, exact

    def _run(self, case: _Case, pipes: Sequence[str]) -> list[Outcome]:
        """Check `case` through each pipeline, then time those that passed (when timed)."""
        outcomes: list[Outcome] = []
        bound: dict[str, Callable[[], object]] = {}
        blas = {}  # the BLAS libraries the compiled code calls, by path
        for p in pipes:
            outcome, fn = self._check_one(case, p)
            outcomes.append(outcome)
            if fn is not None:
                bound[p] = fn.bind(*case.frontend.inputs)
                if fn.blas is not None:
                    blas[fn.blas.path] = fn.blas
        if case.timed and bound:
            config = self.timing or TimingConfig()
            for lib in blas.values():  # the same thread count as torch gets
                set_blas_threads(lib, config.threads)
            outcomes = self._time(case, bound, outcomes)
        return outcomes

    def _check_one(self, case: _Case, pipeline: str) -> tuple[Outcome, NativeFunction | None]:
        """The outcome through one pipeline, and the native function to time if it passed."""
        try:
            pipe = self.pipeline(pipeline)
            require_llvm_output(pipe)
            imported = case.frontend.imported(pipe, self.cache)
        except MlirpipeError as exc:
            return _failed(case, pipeline, exc), None
        if self.isolation != "fork" or not contain.is_available():
            outcome, compiled = self._compile_and_compare(case, imported, pipe)
        else:
            outcome, compiled = self._contained(case, imported, pipe)
        if self.repros and outcome.verdict.is_failure and outcome.comparison is not None:
            _, command = _write_repro(case, pipe, imported)
            outcome = replace(outcome, repro=command)
        if compiled is None or outcome.verdict is not ExecutionVerdict.PASS:
            return outcome, None
        return outcome, compiled.function

    def _contained(
        self, case: _Case, imported: ImportedModel, pipe: Pipeline
    ) -> tuple[Outcome, CompiledModel | None]:
        """Compile and compare in a forked child, so a crash or a hang fails only this pipeline."""
        from .native.runtime import runtime_library

        runtime_library()  # built once here, so children inherit it instead of rebuilding
        ready_for_forks()  # imported and computed once here, not in every child
        case.work.prepare()

        def work() -> Outcome:
            outcome, compiled = self._compile_and_compare(case, imported, pipe)
            contain.keep_until_exit(compiled)  # the child exits without freeing the JIT
            return outcome

        ended = contain.run_contained(work, timeout=self.timeout or None)
        if not ended.ok:
            error = _contained_failure(
                ended, case, pipe, imported, f"{self.timeout:g} s ({self.timeout_from})"
            )
            verdict = ExecutionVerdict.TIMEOUT if ended.kind == "timeout" else ExecutionVerdict.FAIL
            failed = Outcome(case.name, pipe.name, verdict, mode=case.mode, error=error)
            return failed, None
        outcome = ended.value
        if outcome.verdict is ExecutionVerdict.PASS and case.timed:
            # It ran once, contained; timing needs it here (the lowering is cached).
            return outcome, compile_model(
                imported, pipe, case.name, case.mode, self.cache, case.work
            )
        return outcome, None

    def _compile_and_compare(
        self, case: _Case, imported: ImportedModel, pipe: Pipeline
    ) -> tuple[Outcome, CompiledModel | None]:
        """Lower, compile, call once and compare: the steps a broken compiler can crash in."""
        try:
            compiled = compile_model(imported, pipe, case.name, case.mode, self.cache, case.work)
            fn = compiled.function
            contain.note("running the compiled code")
            results = fn.signature.results
            draws = case.tolerances.draws
            drawn = [i for i in range(len(results)) if draws is not None and draws.covers(i)]
            actual = fn.checked_call(*case.frontend.inputs, drawn=drawn)
            names = [f"result {i} ('{t.name}')" for i, t in enumerate(results)]
            comparison = compare(
                actual,
                case.expected,
                names,
                case.tolerances,
                case.exact.results,
                case.exact.why_not,
                case.reference,
            )
        except MlirpipeError as exc:
            return _failed(case, pipe.name, exc), None
        outcome = Outcome(
            case.name,
            pipe.name,
            ExecutionVerdict.PASS if comparison.ok else ExecutionVerdict.FAIL,
            abi=compiled.abi.value,
            mode=case.mode,
            comparison=comparison,
            compile_seconds=dict(compiled.seconds),
            flops=case.flops,
            cached=compiled.cached,
        )
        return outcome, compiled

    def _time(
        self, case: _Case, bound: Mapping[str, Callable[[], object]], outcomes: list[Outcome]
    ) -> list[Outcome]:
        """Time torch (when it has something to run) and each bound native function."""
        import torch

        config = self.timing or TimingConfig()
        target = case.baseline
        candidates: dict[str, Callable[[], object]] = {}
        if target is not None:
            cloned = [x.clone() if isinstance(x, torch.Tensor) else x for x in case.frontend.inputs]
            candidates["torch"] = lambda: target(*cloned)
        candidates.update(bound)
        with torch.no_grad():
            timings = measure(candidates, config)
        torch_timing = timings.get("torch")
        return [
            replace(o, timing=timings.get(o.pipeline), torch_timing=torch_timing)
            if o.pipeline in timings
            else o
            for o in outcomes
        ]


def _failed(case: _Case, pipeline: str, exc: MlirpipeError) -> Outcome:
    return Outcome(
        case.name,
        pipeline,
        ExecutionVerdict.FAIL,
        mode=case.mode,
        error=exc.format(),
        refusal=refusal_of(exc),
    )


def _contained_failure(
    ended, case: _Case, pipe: Pipeline, imported: ImportedModel, limit: str
) -> str:
    """What ended the contained compile-and-run, where, and how to reproduce it; `limit` is
    the time limit with the option that set it."""
    where = ended.notes[-1] if ended.notes else "compiling"
    if ended.kind == "timeout":
        what = f"no result after {limit}, while {where}"
    elif ended.kind == "error":
        what = f"internal error, while {where}: {ended.detail.strip().splitlines()[-1]}"
    else:
        what = f"{ended.detail}, while {where}"
    source, command = _write_repro(case, pipe, imported)
    return f"{what}\n  the imported module is in {source}; lower it with: {command}"


def _write_repro(case: _Case, pipe: Pipeline, imported: ImportedModel) -> tuple[Path, str]:
    """The imported module written to a kept folder of the case's work folder, and the
    command that lowers it through `pipe` outside pytest."""
    folder = case.work.kept_folder("mlirpipe-repro-")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in case.name)
    source = folder / f"{safe}.input.mlir"
    source.write_text(imported.text)
    output = folder / f"{safe}.llvm.mlir"
    return source, case.commands.line("mlirpipe-opt", source, "--pipeline", pipe.name, "-o", output)
