"""`mlirpipe-opt`: an opt-like driver that runs a named pipeline (or a pass pipeline) on MLIR."""

from __future__ import annotations

import functools
import os
import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..atomic import is_special
from ..errors import (
    IRParseError,
    MlirpipeError,
    PipelineSpecError,
    Problem,
    StageFailure,
    UsageError,
)
from ..lowering.catalog import is_known_pass, known_pass_names, pipeline_dirs
from ..model import Diagnostic, Pipeline
from ..options import add_cli_options
from .common import (
    ArgumentParser,
    add_stage_range_options,
    add_version_option,
    console_main,
    named_pipelines,
    read_input,
    run_tool,
    split_input,
    torch_mlir_version,
    write_atomic,
    write_output,
)
from .diagnostic_verifier import MODES, DiagnosticVerifier
from .ir_assert import StageAssertions

# Where a failing stage's input IR goes when --repro-dir is not given; a file test sets it to
# its own output folder (lit's `%t.repro`), so a test run leaves nothing in $TMPDIR.
REPRO_DIR_ENV = "MLIRPIPE_REPRO_DIR"


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="mlirpipe-opt",
        single_dash_long=True,
        description="Run a named lowering pipeline (or an MLIR pass pipeline) on MLIR text, "
        "stage by stage, and print the result.",
        epilog="Long options also take one dash, as in mlir-opt (-pass-pipeline=...). "
        "Diagnostics use mlir-opt's form, file:line:col: error: message. Exit status: "
        "0 success, 1 the input or a pass failed, 2 bad arguments. A pipeline's stages take "
        "their [stage.cpu.F] tables by the host's CPU features, or $MLIRPIPE_CPU_FEATURES "
        "(e.g. avx2,fma); $MLIRPIPE_TRANSFORM_SIZES overrides transform-script sizes.",
    )
    p.add_argument(
        "input",
        nargs="?",
        default="-",
        metavar="FILE",
        help="MLIR file to read, '-' for standard input (default)",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--pipeline", metavar="NAME", help="a pipeline from pipelines/*.toml (`mlirpipe list`)"
    )
    what.add_argument(
        "--pass-pipeline",
        metavar="TEXT",
        help="an MLIR textual pass pipeline, e.g. 'builtin.module(canonicalize)'",
    )
    add_stage_range_options(p)
    p.add_argument(
        "--print-after",
        action="append",
        default=[],
        metavar="STAGE|all",
        help="print the IR after STAGE (or every stage) to stderr (repeatable)",
    )
    p.add_argument(
        "--split-input-file",
        action="store_true",
        help="split the input at '// -----' lines and process each chunk on its own",
    )
    _add_verify_option(p)
    p.add_argument(
        "-o", dest="output", metavar="OUT", help="write the result to OUT (default stdout)"
    )
    p.add_argument(
        "--no-verify-each", action="store_true", help="do not run the verifier after each pass"
    )
    p.add_argument(
        "--repro-dir",
        metavar="DIR",
        help=f"where a failing stage's input IR is written (default: ${REPRO_DIR_ENV}, else "
        "next to -o, else a new mlirpipe-repro-* folder in $TMPDIR, kept for the repro)",
    )
    add_cli_options(p, "pipelines")
    add_version_option(p, torch_mlir_version())
    return p


def _add_verify_option(p: ArgumentParser) -> None:
    p.add_argument(
        "--assert",
        dest="assertions",
        action="append",
        default=[],
        metavar="ASSERTION",
        help="check a structural assertion on the output, or after a stage with 'after STAGE' "
        "(repeatable): 'no-dialect linalg after linalg-to-loops', 'exactly 1 func.call "
        "@cblas_sgemm', 'count(linalg.*) == 0', 'only-dialects llvm,builtin'; exit 1 when one "
        "does not hold (the IR is still printed)",
    )
    p.add_argument(
        "--verify-diagnostics",
        "-verify-diagnostics",
        choices=MODES,
        metavar="all|only-expected",
        help="check the diagnostics against the input's `expected-error {{text}}` lines "
        "(also -warning, -remark, -note; @above, @below, @+N, @-N, @unknown; -re for "
        "{{regex}} parts), as mlir-opt does: exit 0 when each was produced and, unless "
        "=only-expected, no other; a bare flag means =all",
    )


def run(
    argv: Sequence[str],
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    crash_repro: CrashRepro | None = None,
) -> int:
    """The tool as a function: (argv, streams) -> exit status. The console script wraps it;
    the RUN-line shell calls it in-process, with `crash_repro` when re-running a crash."""
    body = functools.partial(_main, crash_repro=crash_repro)
    return run_tool(body, build_parser(), _bare_flags(argv), stdin, stdout, stderr)


def _bare_flags(argv: Sequence[str]) -> list[str]:
    """A bare -verify-diagnostics means =all, as in mlir-opt (argparse would otherwise take
    the next argument, the input file perhaps, as its value)."""
    bare = ("-verify-diagnostics", "--verify-diagnostics")
    return [f"{a}=all" if a in bare else a for a in argv]


def _main(
    args, stdin: TextIO, stdout: TextIO, stderr: TextIO, crash_repro: CrashRepro | None = None
) -> int:
    _check_stage_flags(args)
    text, name = read_input(args.input, stdin)
    pipeline = _pipeline(args)
    chunks = split_input(text) if args.split_input_file else [text]
    checks = StageAssertions.of(args, pipeline)
    if args.verify_diagnostics:
        return _verify_chunks(args, (text, name), pipeline, chunks, (stdout, stderr), crash_repro)
    with checks.cache():
        streams = (stdout, stderr)
        status, held = _run_chunks(args, (name, chunks), pipeline, checks, streams, crash_repro)
    return status or int(not held)


def _run_chunks(
    args, source, pipeline, checks: StageAssertions, streams, crash_repro: CrashRepro | None
) -> tuple[int, bool]:
    """Run every chunk, print the output; (exit status, whether every assertion held)."""
    (name, chunks), (stdout, stderr) = source, streams
    outputs: list[str] = []
    status, held = 0, True
    for i, chunk in enumerate(chunks):
        index = i + 1 if args.split_input_file else None
        before_stage = crash_repro.hook(name, args, pipeline, index) if crash_repro else None
        try:
            output, _, run = _run_chunk(chunk, name, pipeline, args, stderr, before_stage)
            outputs.append(output)
            held = checks.check(chunk, name, run, index, stderr) and held
        except StageFailure as exc:
            exc = exc.with_repro(_write_repro(exc, name, args, pipeline, index))
            stderr.write(exc.format() + "\n")
            hint = _level_hint(chunk, args, pipeline)
            if hint:
                stderr.write(f"  hint: {hint}\n")
            status = 1
        except MlirpipeError as exc:
            if not args.split_input_file:
                raise
            stderr.write(exc.format() + "\n")
            status = 1
    if status == 0 or args.split_input_file:
        write_output(args.output, "// -----\n".join(outputs), stdout)
    return status, held


def _verify_chunks(
    args,
    source: tuple[str, str],
    pipeline: Pipeline | None,
    chunks: Sequence[str],
    streams: tuple[TextIO, TextIO],
    crash_repro: CrashRepro | None,
) -> int:
    """--verify-diagnostics: each chunk's diagnostics are checked against the `expected-*`
    lines of the whole file instead of reported; the exit status is the verifier's."""
    (text, name), (stdout, stderr) = source, streams
    verifier = DiagnosticVerifier(text, name, args.verify_diagnostics == "only-expected")
    _flush(verifier, stderr)
    outputs: list[str] = []
    status = 0
    for i, chunk in enumerate(chunks):
        index = i + 1 if args.split_input_file else None
        before_stage = crash_repro.hook(name, args, pipeline, index) if crash_repro else None
        if not chunk.strip():  # mlir-opt parses an empty module: no diagnostics, no output
            continue
        try:
            output, diagnostics, _ = _run_chunk(chunk, name, pipeline, args, stderr, before_stage)
            outputs.append(output)
        except (StageFailure, IRParseError) as exc:
            diagnostics = exc.diagnostics
        except MlirpipeError as exc:  # not a diagnostic: a pipeline that cannot be built
            stderr.write(exc.format() + "\n")
            status, diagnostics = 1, ()
        verifier.process(diagnostics)
        _flush(verifier, stderr)
    if not verifier.finish():
        status = 1
    _flush(verifier, stderr)
    write_output(args.output, "// -----\n".join(outputs), stdout)
    return status


def _flush(verifier: DiagnosticVerifier, stderr: TextIO) -> None:
    for message in verifier.report:
        stderr.write(message + "\n")
    verifier.report.clear()


def _check_stage_flags(args) -> None:
    if args.pass_pipeline and (args.stop_after or args.start_after or args.print_after):
        raise UsageError(
            Problem(
                "--stop-after, --start-after and --print-after need --pipeline, "
                "not --pass-pipeline",
                hint="name the stages of a pipeline from `mlirpipe list`",
            )
        )


def _pipeline(args) -> Pipeline | None:
    """The --pipeline named, its --print-after stages checked (None for --pass-pipeline, once
    its text is checked)."""
    if not args.pipeline:
        args.pass_pipeline = checked_pass_pipeline(args.pass_pipeline)
        return None
    pipeline = named_pipelines(args.pipelines_dir, [args.pipeline])[0]
    unknown = sorted(set(args.print_after) - {"all"} - set(pipeline.stage_names()))
    if unknown:
        from ..errors import did_you_mean

        raise UsageError(
            [
                Problem(
                    f"--print-after: pipeline '{pipeline.name}' has no stage '{u}'",
                    hint=did_you_mean(u, pipeline.stage_names())
                    or f"its stages: {', '.join(pipeline.stage_names())}",
                )
                for u in unknown
            ]
        )
    return pipeline


def checked_pass_pipeline(text: str) -> str:
    """A --pass-pipeline, checked (every pass known, the pass manager buildable) and anchored
    as mlir-opt anchors it; UsageError, before any pass runs, when it is wrong."""
    from ..lowering import passes as python_passes
    from ..lowering.spec import check_pipeline_text

    # A module of $MLIRPIPE_PASS_MODULES that cannot be imported is not the option's fault.
    python_passes.all_passes()
    try:
        check_pipeline_text(text, is_known_pass, known_pass_names)
    except PipelineSpecError as exc:  # the option's fault, found before any pass runs
        raise UsageError(
            [Problem(f"--pass-pipeline: {p.message}", hint=p.hint) for p in exc.problems]
        ) from None
    anchored = _anchored(text)
    _check_buildable(anchored)
    return anchored


def _check_buildable(text: str) -> None:
    """A usage error when MLIR cannot build the pass manager of `text` (an option a pass does
    not have, a pass nested where it cannot run): checked once, before any pass runs."""
    from ..lowering.pipeline_text import parse_pipeline
    from ..lowering.stages import build_pass_manager
    from ..mlir_env import new_context

    try:
        module = parse_pipeline(text)[0]  # builtin.module(...): the passes inside it
        build_pass_manager(module.children or (), new_context())
    except ValueError as exc:
        detail = "; ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
        raise UsageError(
            Problem(
                f"--pass-pipeline: MLIR cannot build it: {detail}",
                hint="check the pass options and the op each pass is nested in "
                "(e.g. a module pass inside func.func(...))",
            )
        ) from None


def _anchored(text: str) -> str:
    """mlir-opt's rule: the whole --pass-pipeline is one `builtin.module(...)`, or `any(...)`
    (the input's top op, here always a module: returned as `builtin.module(...)`)."""
    from ..lowering.pipeline_text import parse_pipeline

    elements = parse_pipeline(text)
    top = elements[0] if len(elements) == 1 and elements[0].is_anchor else None
    if top is not None and top.name == "builtin.module":
        return text
    if top is not None and top.name == "any":
        return f"builtin.module({','.join(child.text for child in top.children or ())})"
    hint = f"write --pass-pipeline='builtin.module({text.strip()})', as mlir-opt requires"
    if top is not None:
        message = f"can't run '{top.name}' pass manager on 'builtin.module' op"
    else:
        message = "expected pass pipeline to be wrapped with the anchor operation type, e.g. "
        message += "'builtin.module(...)'"
        if not elements:
            hint = "name the passes to run: --pass-pipeline='builtin.module(canonicalize)'"
        elif all(e.is_anchor for e in elements):
            hint = "give one builtin.module(...) holding all the passes"
    raise UsageError(Problem(f"--pass-pipeline: {message}", hint=hint))


@dataclass(frozen=True, slots=True)
class CrashRepro:
    """Before the stage that `stage_note` names (a progress note of the stage runner, "stage
    'S' of pipeline 'P'") runs, write its input IR under `directory` and send the command that
    re-runs that stage as a progress note `repro: COMMAND`. A containing parent reads the note
    after the stage crashes the process again."""

    directory: Path
    stage_note: str

    def hook(self, name: str, args, pipeline: Pipeline | None, chunk: int | None):
        """The stage runner's `before_stage` callback for one input (chunk)."""

        def before_stage(stage, module) -> None:
            from ..contain import note
            from ..mlir_env import print_ir

            shown = pipeline.name if pipeline is not None else "--pass-pipeline"
            if f"stage '{stage.name}' of pipeline '{shown}'" != self.stage_note:
                return
            path = _repro_path(self.directory, name, stage.name, chunk)
            try:
                write_atomic(path, print_ir(module.operation), make_parents=True)
            except OSError:
                return
            note(f"repro: {_repro_command(path, args, pipeline, stage.name)}")

        return before_stage


def _run_chunk(
    chunk: str, name: str, pipeline, args, stderr: TextIO, before_stage
) -> tuple[str, tuple[Diagnostic, ...], object]:
    """The output IR of one input (chunk), the diagnostics its stages emitted, and the
    stage run (a StageRun)."""
    from ..lowering.stages import run_pass_pipeline, run_stages

    if pipeline is None:
        run = run_pass_pipeline(
            chunk,
            args.pass_pipeline,
            source_name=name,
            verify_each=not args.no_verify_each,
            before_stage=before_stage,
        )
        return run.final_ir, _diagnostics_of(run), run
    want_all = "all" in args.print_after
    capture = want_all or bool(args.print_after)
    run = run_stages(
        chunk,
        pipeline,
        source_name=name,
        start_after=args.start_after,
        stop_after=args.stop_after,
        capture=capture,
        verify_each=not args.no_verify_each,
        before_stage=before_stage,
    )
    for snap in run.snapshots:
        if want_all or snap.stage in args.print_after:
            stderr.write(
                f"// -----// IR Dump After stage '{snap.stage}' "
                f"({','.join(snap.passes)}) //----- //\n{snap.ir}\n"
            )
    if capture and run.snapshots:
        return run.snapshots[-1].ir or run.final_ir, _diagnostics_of(run), run
    return run.final_ir, _diagnostics_of(run), run


def _level_hint(chunk: str, args, pipeline: Pipeline | None) -> str | None:
    """When a pipeline run from its first stage fails on IR of another level than it takes."""
    if pipeline is None or args.start_after:
        return None
    from ..lowering.catalog import catalog_for
    from ..lowering.ir_level import wrong_level_hint

    return wrong_level_hint(chunk, pipeline, catalog_for(args.pipelines_dir))


def _diagnostics_of(run) -> tuple[Diagnostic, ...]:
    return tuple(d for snap in run.snapshots for d in snap.diagnostics)


def _write_repro(
    exc: StageFailure,
    name: str,
    args,
    pipeline: Pipeline | None,
    chunk: int | None = None,
) -> str:
    """Write the failing stage's input IR to a file; return the command that re-runs the stage.

    `chunk` (1-based, with --split-input-file) keeps the repro files of two chunks apart."""
    if exc.stage_input is None:
        return "(the stage input could not be recomputed; re-run the command above)"
    if args.repro_dir:
        directory = Path(args.repro_dir)
    elif os.environ.get(REPRO_DIR_ENV):
        directory = Path(os.environ[REPRO_DIR_ENV])
    elif _beside_output(args.output):
        directory = Path(args.output).resolve().parent
    else:
        directory = Path(tempfile.mkdtemp(prefix="mlirpipe-repro-"))
    path = _repro_path(directory, name, exc.stage, chunk)
    try:
        write_atomic(path, exc.stage_input, make_parents=True)
    except OSError as err:
        return f"(cannot write the repro input to {path}: {err.strerror})"
    return _repro_command(path, args, pipeline, exc.stage)


def _beside_output(output: str | None) -> bool:
    """The repro goes beside `-o` only when `-o` names a regular file (or a new one) in a
    folder we may write: never into `/dev/` for `-o /dev/null`, nor beside a FIFO."""
    if not output or output == "-" or is_special(output):
        return False
    folder = Path(output).resolve().parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def _repro_path(directory: Path, name: str, stage: str, chunk: int | None) -> Path:
    stem = Path(name).stem if name != "<stdin>" else "stdin"
    if chunk is not None:
        stem += f".chunk-{chunk}"
    return directory / f"{stem}.{stage}.input.mlir"


def _repro_command(path: Path, args, pipeline: Pipeline | None, stage: str) -> str:
    """The mlirpipe-opt command that runs only `stage` on its input IR in `path`."""
    cmd = ["mlirpipe-opt", str(path)]
    if pipeline is not None:
        cmd += ["--pipeline", pipeline.name]

        before = pipeline.stage_before(stage)
        if before:
            cmd += ["--start-after", before]
        cmd += ["--stop-after", stage]
        for d in pipeline_dirs(args.pipelines_dir):
            cmd += ["--pipelines-dir", d]
    else:
        cmd += ["--pass-pipeline", args.pass_pipeline]
    if args.no_verify_each:
        cmd.append("--no-verify-each")
    return shlex.join(cmd)


def main() -> None:
    console_main(run, "mlirpipe-opt")


if __name__ == "__main__":
    main()
