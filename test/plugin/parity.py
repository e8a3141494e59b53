"""Differential suites: RUN/CHECK files drawn from lit's feature set, run by lit and by pytest in
every isolation mode, and each file's verdict compared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

# --- the inputs and what tools print for them -------------------------------------------------

ADD = """\
func.func @add(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
MATMUL = """\
func.func @mm(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
"""
SPLIT = ADD + "\n// -----\n\n" + ADD.replace("@add", "@add2").replace("addf", "mulf")
# For -verify-diagnostics: a chunk whose verifier error is expected (or, UNMET, expected in
# other words), then a chunk that lowers.
VERIFY_MET = (
    """\
func.func @bad(%a: i32) -> i64 {
  // expected-error@+1 {{doesn't match function result type}}
  return %a : i32
}

// -----

"""
    + ADD
)
VERIFY_UNMET = VERIFY_MET.replace("doesn't match function", "no such message in")

# Text each command is known to print somewhere; CHECK lines pick from these (true matches)
# and from WRONG (never printed), so files pass and fail in about equal numbers.
CANONICALIZE = "--pass-pipeline='builtin.module(canonicalize)'"
CANON = f"mlirpipe-opt %s {CANONICALIZE}"
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "canon": (CANON, ("func.func @add", "arith.addf", "return %0", "tensor<4xf32>")),
    "cse-stdin": (
        f"{CANON} | mlirpipe-opt - --pass-pipeline='builtin.module(cse)'",
        ("func.func @add", "arith.addf"),
    ),
    "forbid": (
        "not mlirpipe-opt %s --pass-pipeline='builtin.module(mlirpipe-forbid-ops{ops=arith.*})'"
        " 2>&1",
        ("error:", "forbidden", "arith.addf"),
    ),
    "op-stats": (
        "mlirpipe-opt %s --pass-pipeline='builtin.module(print-op-stats)' 2>&1",
        ("Operations encountered", "arith.addf", "func.func"),
    ),
    "stage": (
        "mlirpipe-opt %s --pipeline refbackend --stop-after bufferize",
        ("memref", "func.func @add", "bufferization.to_tensor"),
    ),
    "split": (
        "mlirpipe-opt %s --split-input-file --pass-pipeline='builtin.module(canonicalize)'",
        ("@add2", "arith.mulf", "// -----"),
    ),
    "blas-debug": (
        "mlirpipe-opt %s --pass-pipeline='builtin.module(mlirpipe-matmul-to-blas{debug=true})'"
        " 2>&1",
        ("cblas_sgemm", "remark:", "func.call", "scipy_cblas_sgemm", "foo_cblas_sgemm"),
    ),
    "verify-met": (
        f"mlirpipe-opt %s -verify-diagnostics --split-input-file {CANONICALIZE}",
        ("func.func @add", "arith.addf", "return %0"),
    ),
    "verify-unmet": (  # fails at this RUN line: lit's pipefail
        f"mlirpipe-opt %s --split-input-file -verify-diagnostics {CANONICALIZE} 2>&1",
        ("was not produced", "func.func @add"),
    ),
    "verify-unmet-not": (
        f"not mlirpipe-opt -verify-diagnostics=all %s --split-input-file {CANONICALIZE} 2>&1",
        (
            'error: expected error "no such message in result type" was not produced',
            "error: unexpected error: type of return operand 0",
            "func.func @add",
        ),
    ),
    # external producers, whose output a FileCheck after them reads (in-process under pytest)
    "cat": ("cat %s", ("func.func @add", "arith.addf", "return %0")),
    "cat-opt": (f"cat %s | mlirpipe-opt - {CANONICALIZE}", ("func.func @add", "arith.addf")),
    "py-stderr": (
        "%python -c \"import sys; print('func.func @add'); "
        "print('warning: from python', file=sys.stderr)\" 2>&1",
        ("func.func @add", "warning: from python"),
    ),
    "py-exit-not": (
        "not %python -c \"import sys; print('arith.addf'); sys.exit(3)\"",
        ("arith.addf",),
    ),
    "py-exit": (  # fails at this RUN line: lit's pipefail
        "%python -c \"import sys; print('arith.addf'); sys.exit(3)\"",
        ("arith.addf",),
    ),
}
INPUTS = {
    "split": SPLIT,
    "blas-debug": MATMUL,
    "verify-met": VERIFY_MET,
    "verify-unmet": VERIFY_UNMET,
    "verify-unmet-not": VERIFY_UNMET,
}
WRONG = ("linalg.generic", "arith.subf", "no such text", "llvm.func")
PREFIXES = ("CHECK", "A", "B")
# Plain CHECK most often; the others as often as suites use them.
CHECK_KINDS = ("", "", "", "-NOT", "-DAG", "-LABEL", "-SAME", "-NEXT", "-COUNT-1", "-EMPTY")
FEATURES = ("mlirpipe", "torch", "no-such-feature", "onnx")


@dataclass(frozen=True)
class GeneratedFile:
    name: str  # relative to the suite's folder; a .mlir file is a test, others are inputs
    text: str | bytes


def _feature_expr(draw) -> str:
    names = draw(st.lists(st.sampled_from(FEATURES), min_size=1, max_size=2, unique=True))
    op = draw(st.sampled_from((" && ", " || ")))
    negate = draw(st.booleans())
    return ("!" if negate else "") + op.join(names)


def _check_lines(draw, prefix: str, known: tuple[str, ...]) -> list[str]:
    """1-3 CHECK lines, mostly true (known text for positive kinds, absent text for -NOT), so
    about half the files pass."""
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(CHECK_KINDS))
        if kind == "-EMPTY":
            lines.append(f"// {prefix}-EMPTY:")
            continue
        truthful = draw(st.integers(0, 9)) < 8
        pool = (WRONG if kind == "-NOT" else known) if truthful else known + WRONG
        lines.append(f"// {prefix}{kind}: {draw(st.sampled_from(pool))}")
    return lines


def _run_line(draw, command: str, prefix: str, index: int) -> list[str]:
    """One or two RUN lines feeding `command`'s output to FileCheck, in one of lit's shapes."""
    check = "FileCheck %s" if prefix == "CHECK" else f"FileCheck %s --check-prefix={prefix}"
    if draw(st.booleans()):
        check = check.replace("FileCheck", "filecheck")
    shape = draw(st.sampled_from(("pipe", "file", "append", "and", "or", "define", "env", "cd")))
    if shape == "pipe":
        return [f"// RUN: {command} | {check}"]
    if shape == "file":
        return [f"// RUN: {command} > %t.{index}", f"// RUN: {check} < %t.{index}"]
    if shape == "append":
        return [
            f"// RUN: rm -f %t.{index} && {command} >> %t.{index}",
            f"// RUN: {check} --input-file %t.{index}",
        ]
    if shape == "and":
        return [f"// RUN: true && {command} | {check}"]
    if shape == "or":
        return [f"// RUN: {command} | {check} || false"]
    if shape == "define":
        return [f"// DEFINE: %{{cmd{index}}} = {command}", f"// RUN: %{{cmd{index}}} | {check}"]
    if shape == "env":
        return [f"// RUN: env MLIRPIPE_UNUSED=1 {command} | {check}"]
    return [f"// RUN: cd %S && {command} | {check}"]


@st.composite
def generated_file(draw, name: str = "f") -> GeneratedFile:
    """One RUN/CHECK file over one input: directives, RUN lines, CHECK lines."""
    picks = draw(st.lists(st.sampled_from(sorted(COMMANDS)), min_size=1, max_size=3))
    source = INPUTS.get(picks[0], ADD)
    picks = [p for p in picks if INPUTS.get(p, ADD) == source]
    header: list[str] = []
    if draw(st.integers(0, 5)) == 5:
        header.append(f"// REQUIRES: {_feature_expr(draw)}")
    if draw(st.integers(0, 6)) == 6:
        header.append(f"// UNSUPPORTED: {_feature_expr(draw)}")
    if draw(st.integers(0, 4)) == 4:
        header.append(f"// XFAIL: {draw(st.sampled_from(('*', 'mlirpipe', 'no-such-feature')))}")
    if draw(st.integers(0, 8)) == 8:
        header.append(f"// ALLOW_RETRIES: {draw(st.integers(1, 2))}")
    if draw(st.integers(0, 6)) == 6:
        header.append("// RUN: export MLIRPIPE_BLAS_PREFIX=foo_")
    runs: list[str] = []
    checks: list[str] = []
    for index, pick in enumerate(picks):
        command, known = COMMANDS[pick]
        prefix = draw(st.sampled_from(PREFIXES))
        runs += _run_line(draw, command, prefix, index)
        checks += _check_lines(draw, prefix, known)
    if draw(st.integers(0, 10)) == 10:
        runs.append("// RUN: not not true")
    text = "\n".join([*header, *runs, *checks, "", source])
    return GeneratedFile(f"{name}.mlir", text)


@st.composite
def generated_suite(draw, size: int, min_size: int | None = None) -> list[GeneratedFile]:
    """`size` files (or between `min_size` and `size`: then the simplest suite is one file)."""
    count = size if min_size is None else draw(st.integers(min_size, size))
    return [draw(generated_file(name=f"g{i:04d}")) for i in range(count)]


VERDICT = "mlirpipe_verdict"  # the junit property holding lit's code (pytest_mlirpipe.items)

# --- running the suite -------------------------------------------------------------------------

LIT_CFG = """\
import os
from pytest_mlirpipe.filetests.config import configure
_root = os.path.dirname(os.path.abspath(__file__))
configure(config, source_root=_root, exec_root=os.path.join(_root, "build", "lit"))
"""

# pytest's outcome for each lit code: the finest view of a verdict both runners give.
PYTEST_OUTCOME = {
    "PASS": "passed",
    "FLAKYPASS": "passed",
    "FAIL": "failed",
    "XPASS": "failed",
    "UNRESOLVED": "failed",
    "TIMEOUT": "failed",
    "XFAIL": "xfailed",
    "UNSUPPORTED": "skipped",
}

MODES: dict[str, tuple[str, ...]] = {
    "fork": ("--mlirpipe-isolation=fork",),
    "none": ("--mlirpipe-isolation=none",),
    "subprocess": ("--mlirpipe-isolation=subprocess",),
    "xdist": ("--mlirpipe-isolation=fork", "-n", "2"),
}


@dataclass
class ParityResult:
    files: int
    lit: dict[str, str]
    modes: dict[str, dict[str, str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def disagreements(self) -> list[str]:
        out = []
        for mode, verdicts in self.modes.items():
            for name, code in sorted(self.lit.items()):
                got = verdicts.get(name, "missing")
                if got not in (code, PYTEST_OUTCOME.get(code, code)):
                    out.append(f"{name}: lit {code}, pytest ({mode}) {got}")
        return out


def write_suite(folder: Path, files: Iterable[GeneratedFile]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lit.cfg.py").write_text(LIT_CFG, encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    names = []
    for f in files:
        target = folder / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = f.text.encode("utf-8") if isinstance(f.text, str) else f.text
        target.write_bytes(data)
        if target.suffix == ".mlir":
            names.append(f.name)
    return names


def run_lit(folder: Path, jobs: int = 2) -> dict[str, str]:
    out = folder / "build" / "lit-results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lit.main import main; main()",
            "-q",
            f"-j{jobs}",
            "-o",
            str(out),
            str(folder),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
    )
    if not out.is_file():
        raise RuntimeError(f"lit wrote no results:\n{ran.stdout}{ran.stderr}")
    data = json.loads(out.read_text(encoding="utf-8"))
    return {Path(t["name"].split(" :: ")[-1]).name: t["code"] for t in data["tests"]}


def run_pytest(folder: Path, *args: str) -> dict[str, str]:
    xml = folder / "build" / f"junit-{time.monotonic_ns()}.xml"
    command = [sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider"]
    ran = subprocess.run(
        [*command, f"--junitxml={xml}", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env=_env(),
    )
    if not xml.is_file():
        raise RuntimeError(f"pytest {' '.join(args)} wrote no results:\n{ran.stdout}{ran.stderr}")
    return junit_outcomes(xml)


def junit_outcomes(xml: Path) -> dict[str, str]:
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name", "")
        kinds = {child.tag: child for child in case}
        if "failure" in kinds or "error" in kinds:
            outcome = "failed"
        elif "skipped" in kinds:
            skipped = kinds["skipped"]
            outcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            outcome = "passed"
        # lit's own code when the plugin recorded it: the finest comparison there is.
        codes = [p.get("value") for p in case.iter("property") if p.get("name") == VERDICT]
        outcomes[name] = codes[-1] if codes else outcome
    return outcomes


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    return env


def compare_runners(
    folder: Path,
    files: list[GeneratedFile],
    modes: Iterable[str] = tuple(MODES),
    clock: Callable[[], float] = time.perf_counter,
) -> ParityResult:
    """Run `files` under lit and under pytest in each mode, each runner in its own copy of the
    suite (so files that append to %t start alike); verdicts and wall times."""
    write_suite(folder / "lit", files)
    start = clock()
    result = ParityResult(len(files), run_lit(folder / "lit"))
    result.seconds["lit -j2"] = clock() - start
    for mode in modes:
        write_suite(folder / mode, files)
        start = clock()
        result.modes[mode] = run_pytest(folder / mode, *MODES[mode])
        result.seconds[f"pytest {mode}"] = clock() - start
    return result
