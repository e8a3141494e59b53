"""The default verdict, both ways: correct long computations pass, real miscompiles fail."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from cases import HAS_OPENBLAS, NO_OPENBLAS
from cli_run import MODEL, run_cli

from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.frontends import import_torch
from pytest_mlirpipe.execution.results.compare import Rule
from pytest_mlirpipe.execution.results.reference import float64_results
from pytest_mlirpipe.lowering.passes import PassBody, PythonPass, registry
from pytest_mlirpipe.mlir_env import ir

PIPELINES = ["refbackend", pytest.param("refbackend-blas", marks=pytest.mark.skipif(
    not HAS_OPENBLAS, reason=NO_OPENBLAS))]  # fmt: skip
REFBACKEND_TOML = Path(__file__).parents[2] / "pipelines" / "refbackend.toml"


@pytest.fixture(scope="module")
def checker():
    c = ModelChecker(cache_dir=None)
    yield c
    c.close()


class Matmul(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


class MatmulTransposed(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b.t()


class Addmm(torch.nn.Module):
    def forward(self, bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addmm(bias, a, b)


class Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 0.1


class Sum(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum()


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def square_pair(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Two n x n matrices drawn one after the other from one generator seeded 0."""
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)


# ---- correct code passes ----------------------------------------------------------------------


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_a_random_256x256_matmul_passes_the_scaled_rule(checker, pipeline: str) -> None:
    (outcome,) = checker.check(Matmul(), *square_pair(256), pipelines=[pipeline])
    (result,) = outcome.comparison.results
    assert result.rule == Rule.SCALED and result.total == 65536
    assert 0 < result.native_error <= 10 * result.torch_error


def test_the_same_matmul_fails_a_given_elementwise_tolerance(checker) -> None:
    """A tolerance pair, given explicitly, keeps its meaning: element by element against
    torch, where the scaled rule passes the same result. (The pair is tight enough that every
    CPU's rounding leaves elements beyond it: at rtol=1e-4, atol=1e-5 whether one near-zero
    element after cancellation is beyond it depends on the CPU's kernel.)"""
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(Matmul(), *square_pair(256), rtol=1e-6, atol=1e-7)
    assert re.search(
        r"\d+ elements differ \(\d+\.\d+%\) beyond the given rtol=1e-06, atol=1e-07",
        info.value.format(),
    ), info.value.format()


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_a_sum_of_a_million_elements_passes_the_scaled_rule(checker, pipeline: str) -> None:
    (outcome,) = checker.check(Sum(), randn(1_000_000, seed=2), pipelines=[pipeline])
    (result,) = outcome.comparison.results
    assert result.rule == Rule.SCALED and result.native_error > 0


def test_a_model_that_cannot_run_in_float64_falls_back_to_the_per_dtype_pair(checker) -> None:
    class Float32Only(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if x.dtype != torch.float32:
                raise TypeError("float32 only")
            return x * 2

    (outcome,) = checker.check(Float32Only(), randn(4))
    (result,) = outcome.comparison.results
    assert result.rule == Rule.PER_DTYPE
    assert result.why_not_scaled == ("the model does not run in float64 (TypeError: float32 only)")


def wrong_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b.t()


def test_a_wrong_reference_function_is_named_where_the_report_would_say_torch(checker) -> None:
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(Matmul(), randn(8, 8), randn(8, 8, seed=1), reference=wrong_matmul)
    lines = info.value.format().splitlines()
    assert "|native - float64| <= 10 x the reference wrong_matmul's error " in lines[0]
    assert lines[1].startswith("  against the float64 result: native max error ")
    assert ", the reference wrong_matmul's " in lines[1]
    assert lines[2].startswith("  against the reference wrong_matmul: max abs error ")
    assert lines[3] == "  first differing (index: native vs the reference wrong_matmul, float64):"
    assert "torch" not in "\n".join(lines[:4])


def test_a_reference_function_that_cannot_run_in_float64_is_named_not_the_model(checker) -> None:
    def float32_only(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.dtype != torch.float32:
            raise TypeError("float32 only")
        return a @ b.t()

    with pytest.raises(ExecutionMismatch) as info:
        checker.check(Matmul(), randn(8, 8), randn(8, 8, seed=1), reference=float32_only)
    (result,) = info.value.outcomes[0].comparison.results
    assert result.why_not_scaled == (
        "the reference float32_only does not run in float64 (TypeError: float32 only)"
    )
    lines = info.value.format().splitlines()
    assert lines[0].endswith(
        "beyond rtol=0.0001, atol=1e-05 (the float32 default: the reference float32_only does not "
        "run in float64 (TypeError: float32 only))"
    )
    assert lines[2] == "  first differing (index: native vs the reference float32_only):"
    (lambda_result,) = checker.check(
        Matmul(), randn(2, 2), randn(2, 2, seed=1), reference=lambda a, b: a @ b
    )[0].comparison.results
    assert lambda_result.reference == "the reference"


def test_a_constant_created_in_forward_follows_the_float64_default_dtype(checker) -> None:
    class MatmulOnes(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x @ torch.ones(2, 2)

    (outcome,) = checker.check(MatmulOnes(), randn(2, 2))
    assert outcome.comparison.results[0].rule == Rule.SCALED


# ---- wrong native code fails ------------------------------------------------------------------


def _edited(model: torch.nn.Module, inputs: list[torch.Tensor], old: str, new: str) -> str:
    """The model's correct linalg-on-tensors import with `old` (a regex) replaced by `new`."""
    text = import_torch(model, inputs, "linalg")
    edited, count = re.subn(old, new, text)
    assert count == 1, text
    return edited


def _wrong_code_fails(checker, text: str, inputs: list, reference) -> str:
    """`text` runs through refbackend and fails the default rule; the failure report."""
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(text, *inputs, reference=reference, name="wrong")
    (outcome,) = info.value.outcomes
    (result,) = outcome.comparison.results
    assert result.rule == Rule.SCALED
    assert result.native_error > 1000 * result.torch_error
    return info.value.format()


def test_a_wrong_transpose_fails(checker) -> None:
    inputs = [randn(64, 64), randn(64, 64, seed=1)]
    text = _edited(MatmulTransposed(), inputs, r"permutation = \[1, 0\]", "permutation = [0, 1]")
    report = _wrong_code_fails(checker, text, inputs, lambda a, b: a @ b.t())
    assert "beyond the scaled tolerance |native - float64| <= 10 x the reference's error" in report


def test_a_dropped_bias_fails(checker) -> None:
    inputs = [randn(64, seed=2) + 1, randn(16, 64), randn(64, 64, seed=1)]
    text = _edited(Addmm(), inputs, r"return %3 :", "return %2 :")
    _wrong_code_fails(checker, text, inputs, torch.addmm)


def test_a_miscompiled_constant_fails(checker) -> None:
    """0.1 rounded to bfloat16 (0.10009765625): a relative error of 1e-3 in each element."""
    inputs = [randn(1000)]
    text = _edited(Scale(), inputs, r"1\.000000e-01 : f64", "1.000977e-01 : f64")
    report = _wrong_code_fails(checker, text, inputs, lambda x: x * 0.1)
    assert "908 of 1000 elements differ (90.80%)" in report  # the rest are within atol


def shorten_loop(options: dict[str, str]) -> PassBody:
    """Test only: every scf.for whose body holds the op `op` stops one iteration early."""
    body_op = options.get("op", "arith.mulf")

    def run_pass(op, pass_) -> None:
        loops = []

        def visit(inner):
            if inner.name == "scf.for":
                names = [o.name for o in inner.regions[0].blocks[0].operations]
                if body_op in names:
                    loops.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        index = ir.IndexType.get()
        for loop in loops:
            with ir.InsertionPoint(loop), loop.location:
                one = ir.Operation.create(
                    "arith.constant", [index], attributes={"value": ir.IntegerAttr.get(index, 1)}
                )
                upper = ir.Operation.create("arith.subi", [index], [loop.operands[1], one.result])
            loop.operands[1] = upper.result

    return run_pass


def _off_by_one_pipeline(folder: Path, body_op: str) -> Path:
    """refbackend where each loop whose body holds `body_op` stops one iteration early (the
    reduction loop of a matmul or a sum), after linalg-to-loops."""
    toml = REFBACKEND_TOML.read_text().replace('name = "refbackend"', 'name = "off-by-one"')
    stage = (
        '[[stage]]\nname = "off-by-one"\nreason = "test: a wrong loop bound"\n'
        f'passes = ["test-verdict-shorten-loop{{op={body_op}}}"]\n\n'
    )
    toml = toml.replace(
        '[[stage]]\nname = "lower-to-cf"', stage + '[[stage]]\nname = "lower-to-cf"'
    )
    (folder / "off-by-one.toml").write_text(toml)
    return folder


@pytest.mark.parametrize(
    ("model", "inputs", "body_op", "differing"),
    [
        (Matmul(), [randn(64, 64), randn(64, 64, seed=1)], "arith.mulf", 4096),
        (Sum(), [randn(1_000_000, seed=2)], "arith.addf", 1),  # its last element is 0.68
    ],
    ids=["matmul", "sum-1e6"],
)
def test_an_off_by_one_loop_bound_fails(
    tmp_path: Path, monkeypatch, model, inputs, body_op: str, differing: int
) -> None:
    name = "test-verdict-shorten-loop"  # registered for this test only
    monkeypatch.setitem(registry._REGISTRY, name, PythonPass(name, "", ("op",), shorten_loop))
    folder = _off_by_one_pipeline(tmp_path, body_op)
    checker = ModelChecker(pipeline_dirs=[folder], cache_dir=None)
    try:
        checker.check(model, *inputs, pipelines=["refbackend"])  # the correct loops pass
        with pytest.raises(ExecutionMismatch) as info:
            checker.check(model, *inputs, pipelines=["off-by-one"])
    finally:
        checker.close()
    (result,) = info.value.outcomes[0].comparison.results
    assert result.rule == Rule.SCALED and result.differing == differing
    assert result.native_error > 1000 * result.torch_error


def test_the_unedited_lowerings_pass(checker) -> None:
    """The control of the edits above: the same texts, unedited, pass."""
    for model, inputs, reference in [
        (MatmulTransposed(), [randn(64, 64), randn(64, 64, seed=1)], lambda a, b: a @ b.t()),
        (Addmm(), [randn(64, seed=2), randn(16, 64), randn(64, 64, seed=1)], torch.addmm),
        (Scale(), [randn(1000)], lambda x: x * 0.1),
    ]:
        text = import_torch(model, inputs, "linalg")
        (outcome,) = checker.check(text, *inputs, reference=reference, name="right")
        assert outcome.comparison.results[0].rule == Rule.SCALED


# ---- `mlirpipe run --rtol/--atol` ---------------------------------------------------------------


def test_run_passes_a_256_matmul_by_the_default_rule(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    code, out, err = run_cli(
        ["run", f"{tmp_path}/m.py::MM", "--inputs", "256x256xf32,256x256xf32", "--no-time"]
    )
    assert code == 0, err
    assert out.splitlines()[2].split()[1:3] == ["refbackend", "PASS"]


def test_run_judges_by_a_given_rtol_and_atol(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    argv = ["run", f"{tmp_path}/m.py::MM", "--inputs", "64x64xf32,64x64xf32", "--no-time"]
    code, _, err = run_cli([*argv, "--rtol", "0", "--atol", "0"])
    assert code == 1
    assert "beyond the given rtol=0, atol=0" in err
    assert run_cli([*argv, "--rtol", "1e-3", "--atol", "1e-3"])[0] == 0


@pytest.mark.parametrize(
    ("flag", "value"), [("--atol", "-1"), ("--atol", "nan"), ("--rtol", "inf"), ("--rtol", "-inf")]
)
def test_run_refuses_a_tolerance_that_is_not_a_finite_number_at_least_0(
    tmp_path: Path, flag: str, value: str
) -> None:
    (tmp_path / "m.py").write_text(MODEL)
    code, _, err = run_cli(
        ["run", f"{tmp_path}/m.py::MM", "--inputs", "2x2xf32,2x2xf32", f"{flag}={value}"]
    )
    assert code == 2
    assert err == (
        f"mlirpipe run: error: a tolerance must be a finite number >= 0 (got {flag} {value})\n"
        "  hint: e.g. --rtol 1e-5 --atol 1e-6, or leave them out for the scaled rule\n"
    )


def test_float64_results_are_compared_as_float64(checker) -> None:
    x = torch.randn(8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    (outcome,) = checker.check(Matmul(), x, x)
    result = outcome.comparison.results[0]
    assert result.rule == Rule.SCALED and result.rtol == 1e-9
    assert np.isfinite(result.native_error)


def test_the_float64_run_upcasts_parameters_buffers_and_inputs_of_a_copy() -> None:
    class Mixed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = torch.nn.Parameter(torch.tensor([0.1]))
            self.register_buffer("phase", torch.tensor([1 + 2j], dtype=torch.complex64))
            self.register_buffer("count", torch.tensor([3]))

        def forward(self, x: torch.Tensor, z: torch.Tensor):
            return x * self.scale + torch.ones(1), z * self.phase, self.count + 1

    model = Mixed()
    inputs = [torch.randn(3), torch.randn(3, dtype=torch.complex64)]
    with torch.no_grad():
        expected = [r.numpy() for r in model(*inputs)]
    got = float64_results(model, inputs, expected)
    assert [r.dtype.name for r in got.results] == ["float64", "complex128", "int64"]
    # the parameter keeps its float32 value; the arithmetic is float64
    assert got.results[0][0] == inputs[0][0].item() * model.scale.item() + 1
    assert model.scale.dtype == torch.float32 and torch.get_default_dtype() == torch.float32


def test_a_numpy_reference_function_runs_on_float64_arrays() -> None:
    x = np.float32([1.0, 2.0])
    got = float64_results(lambda a: a / 3, [x], [x / 3])
    assert got.results[0].dtype == np.float64 and got.why_not == ""
    assert float64_results(None, [x], [x]).why_not == "no torch model to run in float64"
    assert float64_results(lambda a: (a, a), [x], [x]).why_not == (
        "the float64 run returned 2 results, torch 1"
    )
    assert float64_results(lambda a: (a, a), [x], [x], "the reference").why_not == (
        "the float64 run returned 2 results, the reference 1"
    )
