"""Miscompile bisection: a deliberately wrong pass is found at the stage it was put in."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import torch
from cli_run import run_cli

from pytest_mlirpipe.errors import Problem, UsageError
from pytest_mlirpipe.execution import bisect
from pytest_mlirpipe.execution.bisect import (
    RIGHT,
    UNKNOWN,
    WRONG,
    Bisection,
    level_of,
    search,
    shipped_catalog,
    stage_diff,
    tail_for,
)
from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.lowering.passes import PassBody, PythonPass, registry
from pytest_mlirpipe.mlir_env import ir
from pytest_mlirpipe.model import IRLevel, Location, Pipeline, Stage

DOUBLE = "test-bisect-double-constants"
SWAP = "test-bisect-swap-matmul"
FAIL = "test-bisect-fail"


class ScaledMatmul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a @ b) * 0.5 + 1.0


INPUTS = [torch.randn(8, 8, generator=torch.Generator().manual_seed(s)) for s in (0, 1)]


def double_constants(options: dict[str, str]) -> PassBody:
    """Test only: every nonzero scalar float constant (arith or llvm) doubles."""

    def run_pass(op, pass_) -> None:
        found = []

        def visit(inner):
            if inner.name in ("arith.constant", "llvm.mlir.constant"):
                value = inner.attributes["value"]
                if isinstance(value, ir.FloatAttr) and value.value != 0:
                    found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        for constant in found:
            value = constant.attributes["value"]
            with constant.location:
                constant.attributes["value"] = ir.FloatAttr.get(value.type, value.value * 2)

    return run_pass


def swap_matmul_operands(options: dict[str, str]) -> PassBody:
    """Test only: every linalg.matmul computes B @ A instead of A @ B."""

    def run_pass(op, pass_) -> None:
        found = []

        def visit(inner):
            if inner.name == "linalg.matmul":
                found.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        for matmul in found:
            a, b = matmul.operands[0], matmul.operands[1]
            matmul.operands[0], matmul.operands[1] = b, a

    return run_pass


@pytest.fixture
def wrong_passes(monkeypatch) -> None:
    """The wrong passes (and one that fails), registered for one test only."""
    fail = (FAIL, lambda options: lambda op, pass_: pass_.signal_pass_failure())
    for name, factory in ((DOUBLE, double_constants), (SWAP, swap_matmul_operands), fail):
        monkeypatch.setitem(registry._REGISTRY, name, PythonPass(name, "", (), factory))


def wrong_pipeline(folder: Path, name: str, wrong_pass: str, place: str) -> Path:
    """refbackend with a stage 'wrong' of `wrong_pass`, placed by `place` ('after = "S"',
    'before = "S"', or '' to append it)."""
    (folder / f"{name}.toml").write_text(
        f'[pipeline]\nname = "{name}"\nextends = "refbackend"\n\n'
        f'[[stage]]\nname = "wrong"\n{place}\nreason = "test: a miscompile"\n'
        f'passes = ["{wrong_pass}"]\n'
    )
    return folder


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One artifact cache for the module: the tests lower the same snapshots."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def checker(tmp_path: Path, cache: Path):
    (tmp_path / "pipelines").mkdir()
    c = ModelChecker(pipeline_dirs=[tmp_path / "pipelines"], cache_dir=cache)
    yield c
    c.close()


def _bisected(checker: ModelChecker, tmp_path: Path, pipeline: str) -> tuple[Bisection, str]:
    """The bisection of a failing check() and the whole failure report that shows it."""
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(ScaledMatmul(), *INPUTS, pipelines=[pipeline], bisect=True, work_dir=tmp_path)
    (outcome,) = info.value.outcomes
    assert outcome.bisection is not None
    assert outcome.bisection.format() in info.value.format()
    return outcome.bisection, info.value.format()


@pytest.mark.parametrize(
    ("wrong_pass", "place", "index", "previous"),
    [
        (DOUBLE, 'before = "generalize-tensor-pad"', 1, ""),
        (SWAP, 'after = "finalizing-bufferize"', 4, "finalizing-bufferize"),
        (DOUBLE, "", 10, "convert-to-llvm"),
    ],
    ids=["first", "middle", "last"],
)
def test_the_stage_of_a_wrong_pass_is_named(
    wrong_passes, checker, tmp_path: Path, wrong_pass: str, place: str, index: int, previous: str
) -> None:
    wrong_pipeline(tmp_path / "pipelines", "wrong", wrong_pass, place)
    assert checker.pipeline("wrong").stage_names()[index - 1] == "wrong"
    found, report = _bisected(checker, tmp_path, "wrong")
    assert (found.suspects, found.passes, found.previous) == (("wrong",), (wrong_pass,), previous)
    # binary search over 10 stages: the input, then at most 4 more
    assert found.probes[0].point == "input" and found.probes[0].verdict == RIGHT
    assert 2 <= len(found.probes) <= 5
    text = found.format()
    assert text.startswith(
        f"outputs diverge after stage 'wrong' of pipeline 'wrong' (passes: {wrong_pass})"
    )
    assert (
        "error: case 'ScaledMatmul' through pipeline 'wrong' (jit, refbackend-callback): "
        + ("result 0 ('result0'): 64 of 64 elements differ")
        in report.splitlines()[0]
    )
    (folder,) = tmp_path.glob("mlirpipe-bisect-*")
    before, after = folder / "wrong.input.mlir", folder / "wrong.output.mlir"
    assert (
        f"IR before and after: {before} and {after}; rerun the stage with: mlirpipe-opt "
        + (
            f"{before} --pipeline wrong{' --start-after ' + previous if previous else ''} "
            "--stop-after wrong"
        )
        in text
    )
    assert before.read_text() != after.read_text()


def test_the_ir_change_of_the_wrong_stage_is_shown(wrong_passes, checker, tmp_path) -> None:
    wrong_pipeline(tmp_path / "pipelines", "wrong", SWAP, 'after = "finalizing-bufferize"')
    text = _bisected(checker, tmp_path, "wrong")[0].format()
    assert "IR change (against the IR after 'finalizing-bufferize'):" in text
    assert "--- after finalizing-bufferize" in text and "+++ after wrong" in text
    assert "-    linalg.matmul ins(%arg0, %arg1 : " in text
    assert "+    linalg.matmul ins(%arg1, %arg0 : " in text


def test_a_correct_pipeline_reports_no_divergence(checker, tmp_path: Path) -> None:
    (outcome,) = checker.check(ScaledMatmul(), *INPUTS, bisect=True, work_dir=tmp_path)
    assert outcome.verdict == "PASS" and outcome.bisection is None
    found = checker.bisect(ScaledMatmul(), *INPUTS, pipeline="refbackend", work_dir=tmp_path)
    assert found.suspects == () and [p.verdict for p in found.probes] == [RIGHT]
    assert found.format().startswith(
        "bisection named no stage of pipeline 'refbackend': the pipeline's own lowering "
        "computes the right results: outputs do not diverge"
    )


def test_without_bisect_a_mismatch_says_how_to_ask_for_it(wrong_passes, checker, tmp_path):
    wrong_pipeline(tmp_path / "pipelines", "wrong", DOUBLE, "")
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(ScaledMatmul(), *INPUTS, pipelines=["wrong"], work_dir=tmp_path)
    assert info.value.outcomes[0].bisection is None
    assert (
        "hint: to find the first stage after which the results are wrong, rerun with "
        "--mlirpipe-bisect (pytest), `mlirpipe run --bisect`, or check(..., bisect=True)"
    ) in info.value.format()


def test_mlirpipe_run_bisect(wrong_passes, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the command keeps the IR
    (tmp_path / "pipelines").mkdir()
    folder = wrong_pipeline(tmp_path / "pipelines", "wrong", SWAP, 'after = "bufferize"')
    model = tmp_path / "mm.py"
    model.write_text(
        "import torch\n\nclass MM(torch.nn.Module):\n    def forward(self, a, b):\n"
        "        return a @ b\n"
    )
    argv = [
        "run", f"{model}::MM", "--inputs", "8x8xf32,8x8xf32", "--pipeline", "wrong",
        "--pipelines-dir", str(folder), "--no-time", "--bisect",
    ]  # fmt: skip
    code, _, err = run_cli(argv)
    assert code == 1
    assert "outputs diverge after stage 'wrong' of pipeline 'wrong' (passes: " + SWAP in err
    (folder,) = tmp_path.glob("mlirpipe-bisect-*")
    assert f"IR before and after: {folder / 'wrong.input.mlir'} and " in err


# ---- the parts, without compiling ------------------------------------------------------------


def _verdicts(table: dict[int, str]):
    asked: list[int] = []

    def verdict_of(i: int) -> str:
        asked.append(i)
        return table[i]

    return verdict_of, asked


@pytest.mark.parametrize("first_wrong", range(1, 10))
def test_binary_search_finds_the_first_wrong_point(first_wrong: int) -> None:
    verdict_of, asked = _verdicts({i: RIGHT if i < first_wrong else WRONG for i in range(10)})
    assert search(9, verdict_of) == (first_wrong - 1, first_wrong)
    assert len(asked) <= 1 + 4  # the input, then log2(9) rounded up


def test_a_point_that_cannot_be_run_is_stepped_around() -> None:
    table = {0: RIGHT, 1: RIGHT, 2: RIGHT, 3: UNKNOWN, 4: UNKNOWN, 5: WRONG, 6: WRONG}
    verdict_of, _ = _verdicts(table)
    assert search(6, verdict_of) == (2, 5)  # 3 and 4 cannot be told apart from 5


def test_a_wrong_input_names_no_stage() -> None:
    verdict_of, asked = _verdicts({0: WRONG})
    assert search(5, verdict_of) is None and asked == [0]


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("llvm.func @f() {\n  llvm.return\n}", "llvm"),
        ('%0 = torch.operator "onnx.MatMul"(%a, %b)', "onnx"),
        ("%0 = torch.aten.mm %a, %b : !torch.vtensor", "torch"),
        ("%0 = tosa.matmul %a, %b", "tosa"),
        ("%0 = linalg.matmul ins(%a, %b : tensor<2x2xf32>)", "tensors"),
        ("%0 = bufferization.to_tensor %m : memref<2xf32>", "partial-buffers"),
        ("linalg.matmul ins(%a, %b : memref<2x2xf32>)", "buffers"),
        (
            "scf.for %i = %c0 to %c2 step %c1 {\n  memref.store %x, %m[%i] : memref<2xf32>\n}",
            "loops",
        ),
        ("cf.br ^bb1\n  %0 = memref.load %m[%i] : memref<2xf32>", "cfg"),
    ],
)
def test_the_level_of_a_snapshot_comes_from_its_dialects(text: str, level: str) -> None:
    assert level_of(f"module {{\n  {text}\n}}").name == level


def test_the_abi_stage_runs_only_before_the_ir_has_a_calling_convention() -> None:
    loops = "func.func @f(%m: memref<2xf32>) {\n  scf.for %i = %c0 to %c2 step %c1 {\n  }\n}"
    _, tail = tail_for(loops, shipped_catalog().get)
    assert tail.stage_names() == [
        "munge-calling-conventions", "lower-to-cf", "expand-ops-for-llvm", "convert-to-llvm",
    ]  # fmt: skip
    munged = loops.replace("{\n  scf", "attributes {llvm.emit_c_interface} {\n  scf")
    assert tail_for(munged, shipped_catalog().get)[1].stage_names()[0] == "lower-to-cf"


def test_a_long_diff_is_trimmed() -> None:
    before = "\n".join(f"%{i} = arith.constant {i} : i32" for i in range(200))
    diff = stage_diff(before, before.replace(": i32", ": i64"), "after a", "after b")
    assert diff.splitlines()[:2] == ["--- after a", "+++ after b"]
    assert diff.splitlines()[-1] == "... 343 more diff lines" and len(diff.splitlines()) == 61
    assert stage_diff("x", "x", "a", "b") == "(the stage changed nothing in the printed IR)"


SUITE = """
import torch
from test_bisect import ScaledMatmul, INPUTS


def test_scaled_matmul(mlirpipe):
    mlirpipe.check(ScaledMatmul(), *INPUTS, pipelines=["wrong"])
"""


def test_the_pytest_option_bisects_a_failing_test(wrong_passes, pytester, tmp_path) -> None:
    folder = wrong_pipeline(pytester.mkdir("pipelines"), "wrong", SWAP, 'after = "bufferize"')
    pytester.makepyfile(test_suite=SUITE)
    pytester.syspathinsert(Path(__file__).parent)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--mlirpipe-bisect", f"--mlirpipe-pipelines={folder}"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*error: case 'test_scaled_matmul' through pipeline 'wrong' *64 of 64 elements differ*",
            f"outputs diverge after stage 'wrong' of pipeline 'wrong' (passes: {SWAP})",
        ]
    )


def test_results_wrong_from_the_input_on_name_no_stage(checker, tmp_path: Path) -> None:
    with pytest.raises(ExecutionMismatch) as info:  # the expected results are what is wrong
        checker.check(
            ScaledMatmul(), *INPUTS, reference=lambda a, b: a @ b, bisect=True, work_dir=tmp_path
        )
    found = info.value.outcomes[0].bisection
    assert found.suspects == () and [(p.point, p.verdict) for p in found.probes] == [
        ("input", WRONG)
    ]
    assert (
        "bisection named no stage of pipeline 'refbackend': the imported model lowered by the "
        "trusted tail alone is wrong too: the import, the expected results or the tail is at "
        "fault, not a stage of this pipeline"
    ) in info.value.format()


def test_snapshots_the_tail_cannot_lower_are_said(wrong_passes, checker, tmp_path, monkeypatch):
    wrong_pipeline(tmp_path / "pipelines", "wrong", DOUBLE, "")
    broken = Pipeline("broken", "", IRLevel.LINALG_ON_TENSORS, IRLevel.LLVM,
                      (Stage("fail", (FAIL,), "", Location("x")),), Location("x"))  # fmt: skip
    monkeypatch.setattr(bisect, "tail_for", lambda text, reference: (level_of(text), broken))
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(ScaledMatmul(), *INPUTS, pipelines=["wrong"], bisect=True, work_dir=tmp_path)
    assert (
        "bisection named no stage of pipeline 'wrong': the imported model could not be run "
        f"through the trusted tail (error: pipeline 'broken', stage 'fail' failed: pass '{FAIL}' "
    ) in info.value.format()
    found = checker.bisect(ScaledMatmul(), *INPUTS, pipeline="wrong", work_dir=tmp_path)
    assert found.why_not.startswith(
        "the pipeline's own lowering could not be run (error: pipeline 'broken', stage 'fail' "
    )


def test_a_bisection_that_stops_keeps_the_mismatch_report(checker, tmp_path, monkeypatch):
    def refuse():
        raise UsageError(Problem("no shipped pipelines"))

    monkeypatch.setattr(bisect, "shipped_catalog", refuse)
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(
            ScaledMatmul(), *INPUTS, reference=lambda a, b: a @ b, bisect=True, work_dir=tmp_path
        )
    report = info.value.format()
    assert "64 of 64 elements differ" in report
    assert (
        "bisection named no stage of pipeline 'refbackend': it stopped: error: no shipped pipelines"
    ) in report
