"""Every case of the library through each of its pipelines, compared with torch eager."""

from __future__ import annotations

import pytest
import torch
from cases import (
    CASES,
    HAS_OPENBLAS,
    NO_OPENBLAS,
    Case,
    Ending,
    is_blas,
    onnx_gemm_relu,
    onnx_matmul,
)

from pytest_mlirpipe.execution.check import ExecutionMismatch, ModelChecker
from pytest_mlirpipe.execution.frontends import import_onnx
from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stages import run_stages

needs_openblas = pytest.mark.skipif(not HAS_OPENBLAS, reason=NO_OPENBLAS)
# torch warns on the first complex32 tensor it makes (the complex32 case)
pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")


def _params() -> list:
    out = []
    for case in CASES:
        for pipeline in case.pipelines:
            marks = [needs_openblas] if is_blas(pipeline) else []
            if pipeline in case.xfail:
                marks.append(pytest.mark.xfail(reason=case.xfail[pipeline], strict=True))
            out.append(pytest.param(case, pipeline, id=f"{case.name}-{pipeline}", marks=marks))
    return out


@pytest.mark.parametrize(("case", "pipeline"), _params())
def test_case_matches_torch_eager(mlirpipe, case: Case, pipeline: str) -> None:
    gen = torch.Generator().manual_seed(0)
    (outcome,) = mlirpipe.check(
        case.model(),
        *case.inputs(gen),
        pipelines=[pipeline],
        rtol=case.rtol,
        atol=case.atol,
        flops=case.flops,
        name=case.name,
        backend_legal_ops=case.backend_legal_ops,
        decompositions=case.decompositions,
    )
    assert outcome.verdict == "PASS" and outcome.pipeline == pipeline


def _endings() -> list:
    return [
        pytest.param(case, pipeline, ending, id=f"{case.name}-{pipeline}")
        for case in CASES
        for pipeline, ending in case.ends.items()
    ]


@pytest.mark.parametrize(("case", "pipeline", "ending"), _endings())
def test_case_that_cannot_pass_ends_in_its_verdict_with_its_message(
    tmp_path, case: Case, pipeline: str, ending: Ending
) -> None:
    # the default isolation, with a short time limit for the cases that never return
    checker = ModelChecker(cache_dir=None, isolation="fork", timeout=4.0, work_dir=tmp_path)
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ExecutionMismatch) as info:
        checker.check(case.model(), *case.inputs(gen), pipelines=[pipeline], name=case.name)
    (outcome,) = info.value.outcomes
    assert outcome.verdict == ending.verdict
    assert ending.message in (outcome.error or "")
    refusal = outcome.refusal
    assert (None if refusal is None else (refusal.by, refusal.stage)) == ending.refusal
    if ending.verdict == "TIMEOUT":
        assert f"case '{case.name}' through pipeline '{pipeline}' (jit): TIMEOUT, no result " in (
            info.value.format()
        )


def test_onnx_matmul_matches_torch_matmul_through_onnx_linalg_and_refbackend(mlirpipe) -> None:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 3, generator=gen), torch.randn(3, 4, generator=gen)
    outcomes = mlirpipe.check(
        onnx_matmul(),
        a,
        b,
        pipelines=["onnx-linalg", "refbackend", "onnx-linalg-vectorized"],
        reference=torch.matmul,
        name="onnx-matmul",
        flops=2 * 2 * 3 * 4,
    )
    assert {o.pipeline: o.abi for o in outcomes} == {
        "onnx-linalg": "returned-memrefs",
        "refbackend": "refbackend-callback",
        "onnx-linalg-vectorized": "destination-passing",
    }


@needs_openblas
def test_onnx_matmul_matches_torch_matmul_with_blas_calls(mlirpipe) -> None:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 3, generator=gen), torch.randn(3, 4, generator=gen)
    outcomes = mlirpipe.check(
        onnx_matmul(),
        a,
        b,
        pipelines=["onnx-linalg-blas", "refbackend-blas", "refbackend-dps-blas"],
        reference=torch.matmul,
        name="onnx-matmul",
        flops=2 * 2 * 3 * 4,
    )
    assert {o.pipeline: o.abi for o in outcomes} == {
        "onnx-linalg-blas": "returned-memrefs",
        "refbackend-blas": "refbackend-callback",
        "refbackend-dps-blas": "destination-passing",
    }


@pytest.mark.parametrize("cpu", ["avx2,fma", "avx2,fma,avx512f"], ids=["avx2", "avx512f"])
def test_an_onnx_matmul_is_packed_and_matches_torch_through_onnx_linalg_vectorized(
    mlirpipe, monkeypatch, cpu: str
) -> None:
    monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", cpu)
    model = onnx_matmul(30, 40, 128)  # N a multiple of both panel widths (16 and 64)
    pipeline = catalog_for([]).get("onnx-linalg-vectorized")
    packed = run_stages(import_onnx(model), pipeline, stop_after="pack-panels").snapshots[-1].ir
    assert "linalg.pack" in packed and "mlirpipe.packed" in packed
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(30, 40, generator=gen), torch.randn(40, 128, generator=gen)
    (outcome,) = mlirpipe.check(
        model, a, b, pipelines=[pipeline.name], reference=torch.matmul, name="onnx-matmul-128"
    )
    assert outcome.verdict == "PASS"


@pytest.mark.parametrize(
    "pipeline",
    [
        "onnx-linalg",
        pytest.param("onnx-linalg-blas", marks=needs_openblas),
        "onnx-linalg-vectorized",
    ],
)
def test_onnx_gemm_relu_matches_onnx_reference_evaluator(mlirpipe, pipeline: str) -> None:
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0))
    (outcome,) = mlirpipe.check(onnx_gemm_relu(), x, pipelines=[pipeline], name="onnx-gemm-relu")
    assert outcome.comparison is not None and outcome.comparison.results[0].total == 24
