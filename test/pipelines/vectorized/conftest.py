"""What the execution tests of this folder share: a model's verdict against torch through
refbackend-vectorized as on a given CPU."""

from __future__ import annotations

import pytest


@pytest.fixture
def verdict_on_cpu(tmp_path, monkeypatch):
    """verdict(model, shape, cpu): the verdict of `model` (a module) on a seeded random input of
    `shape` through refbackend-vectorized, with $MLIRPIPE_CPU_FEATURES set to `cpu`."""
    torch = pytest.importorskip("torch")
    from pytest_mlirpipe.execution.check import ModelChecker

    def verdict(model, shape, cpu: str):
        monkeypatch.setenv("MLIRPIPE_CPU_FEATURES", cpu)
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape)))
        checker = ModelChecker(cache_dir=None, mode="jit", work_dir=tmp_path)
        (outcome,) = checker.check(model, x, pipelines=["refbackend-vectorized"])
        return outcome.verdict

    return verdict
