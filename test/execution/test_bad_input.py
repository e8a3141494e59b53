"""Bad input to execution tests: each gives a clear message, asserted here word for word."""

from __future__ import annotations

import os
import subprocess

import pytest
import torch
from cases import Add, PrimsViewOf
from cli_run import MLIRPIPE, run_cli

from pytest_mlirpipe.errors import MlirpipeError, UsageError
from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker


@pytest.fixture(scope="module")
def checker() -> ModelChecker:
    return ModelChecker(cache_dir=None)


def test_inputs_that_do_not_fit_the_module_are_reported_with_their_shapes(checker) -> None:
    with pytest.raises(MlirpipeError) as info:
        checker.check(torch.nn.Linear(4, 2), torch.randn(3, 5))
    text = info.value.format()
    assert "error: module 'Linear' fails on the example inputs (3x5xfloat32): RuntimeError:" in text
    assert "hint: give one example input per forward() argument" in text


def test_an_unsupported_dtype_names_the_input_and_the_supported_types(checker) -> None:
    with pytest.raises(MlirpipeError) as info:
        f8 = torch.float8_e4m3fn
        checker.compile(Add(), torch.ones(4, dtype=f8), torch.ones(4, dtype=f8))
    text = info.value.format()
    assert "error: input 'a' has element type f8E4M3FN, which execution tests do not support" in (
        text
    )
    assert "supported element types: f16, bf16, f32, f64, complex<f32>, complex<f64>, i1," in text


class Unexportable(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.sum().item() > 0 else x


def test_a_module_torch_export_cannot_export_says_so(checker) -> None:
    with pytest.raises(MlirpipeError) as info:
        checker.compile(Unexportable(), torch.ones(3))
    text = info.value.format()
    assert "error: module 'Unexportable' could not be exported by torch.export:" in text
    assert "(in strict mode: " in text and "avoid .tolist()/.numpy()" in text


def test_a_prims_op_torch_cannot_functionalize_is_torch_s_refusal_not_a_raw_error(
    checker,
) -> None:
    from pytest_mlirpipe.execution.refusal import TORCH

    with pytest.raises(ExecutionMismatch) as info:
        checker.check(PrimsViewOf(), torch.ones(3))
    text = info.value.format()
    assert (
        "error: module 'PrimsViewOf' was exported but torch could not decompose its program: "
        "RuntimeError: Found a custom (non-ATen) operator whose output has alias annotations: "
        "prims::view_of(Tensor(a) a) -> Tensor(a)."
    ) in text
    assert "use the ATen op (x.view, x.squeeze) or add .clone()" in text
    refusals = {o.refusal for o in info.value.outcomes}
    assert {(r.by, r.stage) for r in refusals if r is not None} == {(TORCH, "decompose")}
    assert None not in refusals  # every pipeline's outcome is the refusal


def test_a_pipeline_that_does_not_end_in_llvm_is_refused(checker) -> None:
    with pytest.raises(UsageError) as info:
        checker.compile(Add(), torch.ones(2), torch.ones(2), pipeline="torch-to-linalg")
    text = info.value.format()
    assert (
        "error: pipeline 'torch-to-linalg' ends in linalg-on-tensors, not in the llvm dialect, "
        "so its output cannot be run"
    ) in text
    assert 'execution tests need a pipeline with output = "llvm"' in text


class Log(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


def test_nan_where_torch_has_nan_too_passes_with_a_note(checker) -> None:
    x = torch.tensor([1.0, -1.0, 4.0, -2.0])
    (outcome,) = checker.check(Log(), x)
    assert outcome.comparison.format() == (
        "result 0 ('result0'): matches (4 elements); NaN at the same 2 positions in both"
    )


def test_nan_where_torch_has_a_number_is_reported_with_positions(checker) -> None:
    x = torch.tensor([1.0, -1.0, 4.0, -2.0])
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(Log(), x, reference=lambda t: torch.log(t.abs()))
    text = info.value.format()
    assert (
        "result 0 ('result0'): 2 of 4 elements differ (50.00%) beyond the scaled tolerance "
        "|native - float64| <= 10 x the reference's error 3.81e-09 + rtol=0.0001 x |float64| "
        "+ atol=1e-05"
    ) in text
    assert "against the float64 result: native max error nan, the reference's 3.80931e-09" in text
    assert "    [1]: nan vs 0.0, 0.0" in text
    nan = "NaN in the native result where the reference has a number: 2 positions, first [1], [3]"
    assert nan in text


def test_a_missing_c_compiler_is_reported_for_aot(checker, monkeypatch) -> None:
    monkeypatch.setenv("CC", "no-such-cc")
    with pytest.raises(MlirpipeError) as info:
        checker.compile(Add(), torch.ones(2), torch.ones(2), mode="aot")
    text = info.value.format()
    assert (
        "error: no C compiler found for ahead-of-time compilation "
        "(looked for 'no-such-cc' from $CC)"
    ) in text
    assert "JIT execution (mode='jit') needs no C compiler" in text


def test_mlir_text_without_a_reference_is_refused(checker) -> None:
    with pytest.raises(UsageError) as info:
        checker.check(
            "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }"
        )
    assert "error: MLIR text has no torch eager to compare with" in info.value.format()


def test_an_unknown_mode_lists_the_accepted_ones() -> None:
    with pytest.raises(UsageError) as info:
        ModelChecker(mode="interp")
    assert (
        info.value.format() == "error: unknown execution mode 'interp'\n  hint: accepted: jit, aot"
    )


def test_inf_where_torch_has_a_number_is_reported_with_positions(checker) -> None:
    x = torch.tensor([1.0, 0.0, 4.0, 0.0])
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(Log(), x, reference=lambda t: torch.log(t + 1.0))
    text = info.value.format()
    assert "result 0 ('result0'): 4 of 4 elements differ (100.00%)" in text
    assert "Inf in the native result: 2 positions, first [1], [3]" in text


LINEAR = """\
import torch


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.linear(x)
"""


def test_a_wrong_input_shape_gives_our_error_without_torch_tracebacks(tmp_path) -> None:
    (tmp_path / "linear.py").write_text(LINEAR)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    run = subprocess.run(
        [*MLIRPIPE, "run", "linear.py::Linear", "--inputs", "3x5xf32", "--no-time"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert run.stderr.startswith(
        "error: module 'Linear' fails on the example inputs (3x5xfloat32): RuntimeError: "
        "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x2)\n"
    )
    assert "Traceback" not in run.stderr and "fake_tensor.py" not in run.stderr


def test_import_with_an_input_of_the_wrong_width_names_the_shapes_not_tracing_advice(
    tmp_path,
) -> None:
    (tmp_path / "linear.py").write_text(LINEAR)
    argv = ["import", f"{tmp_path}/linear.py::Linear", "--inputs", "3x5xf32", "--to", "linalg"]
    code, out, err = run_cli(argv)
    assert (code, out) == (1, "")
    assert err == (
        "error: module 'Linear' fails on the example inputs (3x5xfloat32): RuntimeError: "
        "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x2)\n"
        "  hint: give one example input per forward() argument, with the shapes and dtypes "
        "the model expects\n"
    )
