"""torch.export's fallback mode, inputs a model writes to, and per-check import options."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import torch
from cases import AdaptiveMaxPool, ItemScale, WritesInputs

from pytest_mlirpipe.cli.main import run
from pytest_mlirpipe.errors import MlirpipeError, UsageError
from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.frontends import (
    ImportOptions,
    TorchFrontend,
    frontend_for,
    import_torch,
)


def test_a_model_calling_item_is_exported_in_strict_mode_and_the_outcome_says_so(mlirpipe):
    (outcome,) = mlirpipe.check(ItemScale(), torch.randn(3), torch.tensor(3))
    assert outcome.verdict == "PASS" and outcome.export == "strict"
    (plain,) = mlirpipe.check(torch.nn.ReLU(), torch.randn(3))
    assert plain.export == ""


def test_a_failure_of_a_strict_export_names_the_export_mode() -> None:
    class Wrong(torch.nn.Module):
        def forward(self, x, n):
            return x * int(n)

    checker = ModelChecker(isolation="none")
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(Wrong(), torch.randn(3), torch.tensor(2), reference=lambda x, n: x * 3)
    assert "through pipeline 'refbackend' (jit, refbackend-callback, strict export): " in str(
        info.value
    )


def test_a_model_neither_export_mode_traces_reports_both() -> None:
    class Branchy(torch.nn.Module):
        def forward(self, x):
            return x + 1 if x.sum() > 0 else x - 1

    with pytest.raises(MlirpipeError) as info:
        import_torch(Branchy(), [torch.ones(2)], "torch")
    assert "could not be exported by torch.export: GuardOnDataDependentSymNode" in str(info.value)
    assert " (in strict mode: " in str(info.value)


def test_mutated_inputs_and_buffers_are_results_compared_after_the_call() -> None:
    x, y = torch.randn(3), torch.randn(3)
    frontend = TorchFrontend(WritesInputs(), [x, y])
    expected = frontend.expected(lambda: None)
    assert [kind for kind, _ in frontend.exported.roles] == ["buffer", "input", "input", "output"]
    np.testing.assert_array_equal(expected[0], np.ones(3, np.float32))
    np.testing.assert_array_equal(expected[1], (x + 1).numpy())
    np.testing.assert_array_equal(expected[2], (y * 2).numpy())
    np.testing.assert_allclose(expected[3], ((x + 1) * (y * 2)).numpy())
    assert frontend.exported.result_names() == [
        "calls (after the call)",
        "x (after the call)",
        "y (after the call)",
        "result3",
    ]
    assert torch.equal(x, frontend.inputs[0])  # the caller's tensors are not written to


def test_backend_legal_ops_keep_an_op_whole_for_torch_to_linalg() -> None:
    x = [torch.randn(1, 2, 5, 5)]
    default = import_torch(AdaptiveMaxPool(), x, "linalg")
    legal = import_torch(
        AdaptiveMaxPool(), x, "linalg", ImportOptions.of(["aten.adaptive_max_pool2d"])
    )
    assert "linalg.pooling_nchw_max" in default
    assert "linalg.pooling_nchw_max" not in legal and "linalg.index" in legal


def test_decompositions_choose_what_the_exported_program_is_decomposed_into() -> None:
    gelu = torch.nn.GELU()
    x = [torch.randn(4)]
    assert "torch.aten.gelu" in import_torch(gelu, x, "torch", ImportOptions.of(decompositions=()))
    decomposed = import_torch(gelu, x, "torch", ImportOptions.of(decompositions=["aten.gelu"]))
    assert "torch.aten.gelu" not in decomposed and "torch.aten.erf" in decomposed


def test_an_unknown_decomposition_is_named() -> None:
    with pytest.raises(UsageError) as info:
        import_torch(
            torch.nn.GELU(), [torch.randn(2)], "torch", ImportOptions.of([], ["aten.nope"])
        )
    assert str(info.value) == (
        "error: decompositions: 'aten.nope' is not a torch op\n"
        "  hint: name ops as torch.ops spells them, e.g. 'aten.gelu' or 'aten.gelu.default'"
    )


def test_import_options_given_as_a_string_are_refused() -> None:
    with pytest.raises(UsageError) as info:
        ModelChecker().check(torch.nn.ReLU(), torch.randn(2), backend_legal_ops="aten.relu")
    assert str(info.value).startswith(
        "error: backend_legal_ops and decompositions take a list of op names, not a string"
    )


def test_import_options_for_mlir_text_are_refused() -> None:
    with pytest.raises(UsageError) as info:
        frontend_for("module {}", [], ImportOptions.of(["aten.relu"]))
    assert str(info.value) == (
        "error: backend_legal_ops and decompositions apply to a torch module, not to MLIR text\n"
        "  hint: drop them, or check the torch module itself"
    )


def _onnx_with_initializer_listed_as_input(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])],
        "g",
        [
            helper.make_tensor_value_info("W", TensorProto.FLOAT, [3, 4]),
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])],
        initializer=[w],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_run_onnx_feeds_inputs_by_graph_name_when_an_initializer_is_a_graph_input(tmp_path):
    model = tmp_path / "init.onnx"
    _onnx_with_initializer_listed_as_input(model)
    out, err = io.StringIO(), io.StringIO()
    code = run(["run", str(model), "--no-time"], io.StringIO(), out, err)
    assert code == 0, err.getvalue()
    assert out.getvalue().splitlines()[2].split()[1:3] == ["refbackend", "PASS"]


def test_the_torch_mlir_e2e_import_profile_keeps_adaptive_max_pool_whole_as_that_runner_does(
    tmp_path,
) -> None:
    x = [torch.randn(1, 2, 5, 5, generator=torch.Generator().manual_seed(0))]
    profile = ImportOptions.of(profile="torch-mlir-e2e")
    assert profile.legal_ops("linalg") == (
        "aten.flatten.using_ints",
        "aten.adaptive_avg_pool1d",
        "aten.adaptive_avg_pool2d",
        "aten.adaptive_max_pool1d",
        "aten.adaptive_max_pool2d",
        "aten.unflatten.int",
    )
    kept = import_torch(AdaptiveMaxPool(), x, "linalg", profile)
    assert "linalg.pooling_nchw_max" not in kept and "linalg.index" in kept
    checker = ModelChecker(cache_dir=None, work_dir=tmp_path)
    (outcome,) = checker.check(
        AdaptiveMaxPool(), *x, pipelines=["refbackend"], import_profile="torch-mlir-e2e"
    )
    assert outcome.verdict == "PASS"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"import_profile": "iree"},
            "error: unknown import profile 'iree'\n  hint: the profiles: torch-mlir-e2e",
        ),
        (
            {"import_profile": "torch-mlir-e2e", "backend_legal_ops": ["aten.linear"]},
            "error: import_profile 'torch-mlir-e2e' sets the backend_legal_ops: give one of "
            "the two\n  hint: drop backend_legal_ops, or the profile",
        ),
    ],
)
def test_a_bad_import_profile_is_refused_with_the_profiles_there_are(options, message) -> None:
    with pytest.raises(UsageError) as info:
        ModelChecker(cache_dir=None).check(torch.nn.ReLU(), torch.ones(2), **options)
    assert info.value.format() == message
