"""RUN lines run in-process give the same output and exit status as the same commands run as
processes; the forked child contains crashes and hangs; stage prefixes are lowered once."""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path

import pytest

from pytest_mlirpipe.filetests.runner import FileTestRunner
from pytest_mlirpipe.lowering.prefix_cache import prefix_cache
from pytest_mlirpipe.lowering.stages import run_stages
from pytest_mlirpipe.options import RunConfig

IR = (
    "func.func @forward(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n"
)
CANON = "mlirpipe-opt %s --pass-pipeline 'builtin.module(canonicalize)'"
FORBID = "mlirpipe-opt %s --pass-pipeline 'builtin.module(mlirpipe-forbid-ops{ops=arith.*})'"

# One RUN line each: pipes, redirections, `not`, `!`, stdin, failures, help text.
RUN_LINES = {
    "pipe": f"{CANON} | filecheck %s --check-prefix=OK",
    "stdin": f"{CANON} | mlirpipe-opt - --pass-pipeline 'builtin.module(cse)' | filecheck %s"
    " --check-prefix=OK",
    "to-file": f"{CANON} -o %t.out && filecheck %s --check-prefix=OK --input-file %t.out",
    "redirect-out": f"{CANON} > %t.r && filecheck %s --check-prefix=OK < %t.r",
    "stderr-merged": f"not {FORBID} 2>&1 | filecheck %s --check-prefix=ERR",
    "stderr-to-file": f"not {FORBID} 2> %t.err && filecheck %s --check-prefix=ERR < %t.err",
    "both-to-file": f"not {FORBID} &> %t.both && filecheck %s --check-prefix=ERR < %t.both",
    "bang": f"! {FORBID} 2>&1 | filecheck %s --check-prefix=ERR",
    "tool-fails": f"{FORBID}",
    "check-fails": f"{CANON} | filecheck %s --check-prefix=NOPE",
    "not-passes": f"not {CANON}",
    "usage-error": "mlirpipe-opt %s --pipeline no-such-pipeline",
    "help": "mlirpipe-opt --help | filecheck %s --check-prefix=HELP",
    "filecheck-help": "filecheck --help",
    "bad-input": "mlirpipe-opt %t.missing --pass-pipeline 'builtin.module(cse)'",
}
CHECKS = (
    "// OK: arith.addf\n"
    "// ERR: error: 'arith.addf' is forbidden here by mlirpipe-forbid-ops\n"
    "// NOPE: arith.mulf\n"
    "// HELP: usage: mlirpipe-opt\n"
)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runlines")
    out = {}
    for name, line in RUN_LINES.items():
        path = root / f"{name}.mlir"
        path.write_text(f"// RUN: {line}\n{CHECKS}{IR}")
        out[name] = path
    return out


def _comparable(verdict):
    """What must not differ between runners: verdict and each command's status and output."""

    def same(text: str) -> str:  # each run writes its repro file to a fresh folder
        return re.sub(r"mlirpipe-repro-\w+", "mlirpipe-repro-*", text)

    steps = [
        (s.line, [(r.args, r.exit_code, same(r.stdout), same(r.stderr)) for r in s.results])
        for s in verdict.steps
    ]
    return verdict.code, steps


@pytest.mark.parametrize("name", sorted(RUN_LINES))
def test_in_process_tools_match_subprocesses(name, files, tmp_path):
    lit_way = FileTestRunner(tmp_path, RunConfig(isolation="subprocess")).run(files[name])
    here = FileTestRunner(tmp_path, RunConfig(isolation="none")).run(files[name])

    assert here.in_process >= 1 and here.subprocesses == 0
    assert _comparable(here) == _comparable(lit_way)


def test_the_verdicts_cover_passing_and_failing_lines(files, tmp_path):
    runner = FileTestRunner(tmp_path, RunConfig(isolation="none"))
    codes = {name: runner.run(path).code for name, path in files.items()}

    failing = {"tool-fails", "check-fails", "not-passes", "usage-error", "bad-input"}
    assert {n for n, c in codes.items() if c == "FAIL"} == failing
    assert {n for n, c in codes.items() if c == "PASS"} == set(RUN_LINES) - failing


def test_a_forked_run_gives_the_in_process_verdict(files, tmp_path):
    forked = FileTestRunner(tmp_path, RunConfig(isolation="fork")).run(files["check-fails"])
    here = FileTestRunner(tmp_path, RunConfig(isolation="none")).run(files["check-fails"])

    assert _comparable(forked) == _comparable(here)
    assert forked.crash == ""


@pytest.fixture(scope="module")
def crashing_passes():
    """Python passes that abort, exit or hang (test/plugin/crash_passes.py registers them);
    a forked child inherits them."""
    path = Path(__file__).parents[1] / "plugin" / "crash_passes.py"
    spec = importlib.util.spec_from_file_location("crash_passes", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def _file(tmp_path: Path, pass_name: str) -> Path:
    path = tmp_path / f"{pass_name}.mlir"
    line = f"mlirpipe-opt %s --pass-pipeline 'builtin.module({pass_name})' | filecheck %s"
    path.write_text(f"// RUN: {line}\n// CHECK: func.func\n{IR}")
    return path


def test_an_abort_fails_only_its_file_and_says_where(crashing_passes, tmp_path):
    runner = FileTestRunner(tmp_path / "exec", RunConfig(isolation="fork"))

    verdict = runner.run(_file(tmp_path, "crash-abort"))
    after = runner.run(_file(tmp_path, "canonicalize"))

    assert verdict.code == "FAIL"
    assert verdict.crash.startswith(
        "killed by SIGABRT (an abort (failed assertion or LLVM fatal error)), "
        "while running RUN line 1: "
    )
    assert "stage 'pass-pipeline' of pipeline '--pass-pipeline'" in verdict.crash
    assert after.code == "PASS"


def test_a_pass_that_calls_exit_is_reported_with_its_status(crashing_passes, tmp_path):
    verdict = FileTestRunner(tmp_path / "exec", RunConfig(isolation="fork")).run(
        _file(tmp_path, "crash-exit")
    )

    assert verdict.code == "FAIL"
    assert verdict.crash.startswith("exited with status 3, while running RUN line 1: ")


def test_a_hang_is_a_timeout_that_says_where(crashing_passes, tmp_path):
    runner = FileTestRunner(tmp_path / "exec", RunConfig(isolation="fork", timeout=1.0))

    start = time.perf_counter()
    verdict = runner.run(_file(tmp_path, "crash-hang"))

    assert time.perf_counter() - start < 20
    assert verdict.code == "TIMEOUT"
    assert verdict.output.startswith(
        "no verdict after 1 s (mlirpipe_timeout), while running RUN line 1: "
    )
    assert verdict.output.endswith(", stage 'pass-pipeline' of pipeline '--pass-pipeline'")


def test_later_stage_prefixes_start_from_the_cached_ones(refbackend, mm_linalg):
    plain = [
        run_stages(mm_linalg, refbackend, stop_after=s).final_ir
        for s in ("bufferize", "finalizing-bufferize", "linalg-to-loops")
    ]
    with prefix_cache() as cache:
        cached = [
            run_stages(mm_linalg, refbackend, stop_after=s).final_ir
            for s in ("bufferize", "finalizing-bufferize", "linalg-to-loops")
        ]
        again = run_stages(mm_linalg, refbackend, stop_after="bufferize")

    assert cached == plain
    assert again.final_ir == plain[0]
    # bufferize (2 stages) reused by finalizing-bufferize, that (3) by linalg-to-loops, then 2.
    assert (cache.hits, cache.stages_reused) == (3, 2 + 3 + 2)
    assert [s.stage for s in again.snapshots] == ["generalize-tensor-pad", "bufferize"]


def test_a_different_input_is_not_served_from_the_cache(refbackend, mm_linalg):
    with prefix_cache() as cache:
        run_stages(mm_linalg, refbackend, stop_after="bufferize")
        other = run_stages(
            mm_linalg.replace("1.000000e+00", "2.000000e+00"), refbackend, stop_after="bufferize"
        )

    assert cache.hits == 0
    assert "2.000000e+00" in other.final_ir


@pytest.mark.parametrize(
    ("name", "text", "found"),
    [
        ("foo.opt", "foo.opt %s", True),
        ("foo.opt", "fooXopt %s", False),
        ("g++", "g++ -c x.c", True),
        ("g++", "g x.c", False),
        ("mlirpipe-opt", "mlirpipe-opt-x %s", False),
        ("mlirpipe-opt", "not mlirpipe-opt %s | FileCheck %s", True),
        ("foo-opt", "build/bin/foo-opt %s", False),
        ("foo-opt", "foo-opt.py %s", False),
        ("FileCheck", "| FileCheck %s", True),
    ],
)
def test_a_tool_name_is_substituted_as_written_and_only_as_a_whole_name(name, text, found):
    from pytest_mlirpipe.filetests.config import tool_pattern

    assert bool(re.search(tool_pattern(name), text)) is found


class _Format:
    def __init__(self, error):
        self.error = error

    def execute(self, test, lit_config):
        raise self.error


class _Test:
    def __init__(self, error):
        self.config = type("Config", (), {"test_format": _Format(error)})()


def test_an_exception_in_the_script_is_unresolved_with_lits_words():
    from pytest_mlirpipe.filetests.runner import _execute

    result = _execute(_Test(FileNotFoundError(2, "No such file or directory", "x")), None)
    assert result.code.name == "UNRESOLVED"
    assert result.output.startswith("Exception during script execution:\nTraceback")


def test_ctrl_c_in_a_file_stops_the_run_instead_of_failing_the_file():
    from pytest_mlirpipe.filetests.runner import _execute

    with pytest.raises(KeyboardInterrupt):
        _execute(_Test(KeyboardInterrupt()), None)
