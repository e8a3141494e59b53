"""Shared inputs of the unit tests: the seed 2x2 matmul, pipeline files, the real pass registry."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_mlirpipe.lowering.spec import PipelineCatalog, load_catalog
from pytest_mlirpipe.model import Pipeline

# The linalg-on-tensors 2x2 matmul every pipeline test starts from (line numbers matter:
# linalg.fill is at 6:10, linalg.matmul at 7:10).
MM_LINALG = (
    "module {\n"
    "  func.func @forward(%arg0: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
    "    %cst = arith.constant 0.000000e+00 : f32\n"
    "    %cst_0 = arith.constant dense<1.000000e+00> : tensor<2x2xf32>\n"
    "    %0 = tensor.empty() : tensor<2x2xf32>\n"
    "    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "    %2 = linalg.matmul ins(%arg0, %cst_0 : tensor<2x2xf32>, tensor<2x2xf32>)"
    " outs(%1 : tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "    return %2 : tensor<2x2xf32>\n"
    "  }\n"
    "}\n"
)

# A tosa op no lowering knows: `func.func(tosa-to-linalg)` fails on it at 2:8.
UNLOWERABLE_TOSA = (
    "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    '  %0 = tosa.custom %a {domain_name = "d", operator_name = "op", implementation_attrs = ""}'
    " : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  return %0 : tensor<2xf32>\n"
    "}\n"
)


@pytest.fixture
def mm_linalg() -> str:
    return MM_LINALG


@pytest.fixture
def unlowerable_tosa() -> str:
    return UNLOWERABLE_TOSA


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write dedented `text` to tmp_path/`name` and return the path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return write


@pytest.fixture(scope="session")
def real_pass_checks() -> dict[str, Callable]:
    """`load_catalog` keyword arguments that check pass names against the MLIR bindings."""
    from pytest_mlirpipe.lowering.catalog import is_known_pass, known_pass_names

    return {"pass_exists": is_known_pass, "known_passes": known_pass_names}


@pytest.fixture(scope="session")
def shipped_catalog(real_pass_checks: dict[str, Callable]) -> PipelineCatalog:

    return load_catalog((), **real_pass_checks)


@pytest.fixture(scope="session")
def refbackend(shipped_catalog: PipelineCatalog) -> Pipeline:
    return shipped_catalog.get("refbackend")
