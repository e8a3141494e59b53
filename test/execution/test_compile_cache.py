"""The artifact cache: what its keys cover (never a stale artifact), what a cached compile skips."""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from pytest_mlirpipe.errors import MlirpipeError
from pytest_mlirpipe.execution.cache import ArtifactCache, cache_key
from pytest_mlirpipe.execution.check import ModelChecker
from pytest_mlirpipe.execution.frontends import TorchFrontend
from pytest_mlirpipe.execution.import_cache import torch_import_key, torch_model_digest
from pytest_mlirpipe.execution.native import compiled_model
from pytest_mlirpipe.lowering import passes
from pytest_mlirpipe.lowering.passes import registry

PASS_MODULE = "mlirpipe_cache_test_passes"
PASS_SOURCE = """
from pytest_mlirpipe.lowering.passes import register

@register("cache-test-noop", "does nothing ({version})")
def make(options):
    def run(op, pass_):
        pass
    return run
"""


def linear(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Linear(4, 3)


X = torch.arange(8, dtype=torch.float32).reshape(2, 4)


class Scaled(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


@pytest.fixture
def pass_module(tmp_path, monkeypatch):
    """A pass module on $MLIRPIPE_PASS_MODULES; returns a function that rewrites its source."""
    passes.all_passes()  # the installed passes register once per process: before the copy
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MLIRPIPE_PASS_MODULES", PASS_MODULE)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    path = tmp_path / f"{PASS_MODULE}.py"

    def write(version: str) -> None:
        path.write_text(PASS_SOURCE.format(version=version))
        sys.modules.pop(PASS_MODULE, None)  # the next lookup imports the edited module
        importlib.invalidate_caches()

    write("v1")
    yield write
    sys.modules.pop(PASS_MODULE, None)


def test_editing_a_pass_module_changes_every_key(pass_module) -> None:
    before = cache_key(["module", "pipeline"])
    assert cache_key(["module", "pipeline"]) == before
    pass_module("v2")
    assert cache_key(["module", "pipeline"]) != before


def test_editing_a_pass_module_recompiles_instead_of_reusing_the_cached_artifact(
    pass_module, tmp_path: Path
) -> None:
    def compile_once():
        return ModelChecker(cache_dir=tmp_path / "cache").compile(linear(), X)

    assert not compile_once().cached
    assert compile_once().cached
    pass_module("v2")
    again = compile_once()
    assert not again.cached
    assert np.allclose(again(X), linear()(X).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_shared_library_is_keyed_by_the_host_cpu(monkeypatch) -> None:
    lowered = compiled_model.LoweredModel("llvm text", "refbackend", "k" * 32, (), False, 0.0)
    here = compiled_model.native_key(lowered)
    monkeypatch.setattr(compiled_model, "host_cpu", lambda: "host model name=another CPU")
    assert compiled_model.native_key(lowered) != here
    assert compiled_model.native_key(replace(lowered, key="j" * 32)) != here


def _key(model: nn.Module, *inputs, extra=("TorchFrontend", "linalg-on-tensors")) -> str | None:
    digest = torch_model_digest(model, inputs)
    return torch_import_key(digest, list(extra)) if digest is not None else None


def test_the_import_key_covers_shapes_dtypes_values_parameters_and_options() -> None:
    base = _key(linear(), X)
    assert base is not None and _key(linear(), X) == base
    assert _key(linear(), X[:1]) != base  # shape
    assert _key(linear().double(), X.double()) != base  # dtype
    assert _key(linear(), X + 1) != base  # values (export may specialize on them)
    assert _key(linear(seed=1), X) != base  # parameters
    assert _key(linear().train(False), X) != base  # plain module state
    assert _key(linear(), X, extra=("TorchFrontend", "tosa")) != base  # import target


def test_the_import_key_covers_the_code_a_module_calls() -> None:
    def scale(k):
        return lambda x: x * k

    assert _key(Scaled(scale(2.0)), X) == _key(Scaled(scale(2.0)), X)
    assert _key(Scaled(scale(2.0)), X) != _key(Scaled(scale(3.0)), X)  # closure value
    assert _key(Scaled(lambda x: x + 1), X) != _key(Scaled(lambda x: x - 1), X)  # code
    assert _key(Scaled(torch.relu), X) != _key(Scaled(torch.tanh), X)  # builtins


def test_a_model_holding_an_object_without_a_stable_fingerprint_is_never_cached() -> None:
    model = linear()
    model.handle = object()
    assert _key(model, X) is None


def test_import_options_held_by_the_front_end_are_part_of_the_key(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path)
    pipe = ModelChecker().pipeline("refbackend")
    plain = TorchFrontend(linear(), [X])
    with_options = TorchFrontend(linear(), [X])
    with_options.backend_legal_ops = ("aten.linear",)
    assert plain._cache_key(pipe) != with_options._cache_key(pipe)
    assert not plain.imported(pipe, cache).cached
    assert TorchFrontend(linear(), [X]).imported(pipe, cache).cached
    assert not with_options.imported(pipe, cache).cached


def test_a_cached_compile_skips_import_lowering_and_native_compile(tmp_path: Path) -> None:
    model = linear()
    cold = ModelChecker(cache_dir=tmp_path).compile(model, X)
    warm = ModelChecker(cache_dir=tmp_path).compile(model, X)
    assert not cold.cached and warm.cached
    assert warm.mode == "jit" and warm.library is not None and warm.library.parent != cold.library
    assert set(warm.seconds) == {"import", "lower", "native"}  # no stage ran
    assert np.array_equal(warm(X), cold(X))


def test_new_weights_in_the_same_module_are_compiled_afresh(tmp_path: Path) -> None:
    model = linear()
    ModelChecker(cache_dir=tmp_path).compile(model, X)
    with torch.no_grad():
        model.weight.mul_(2)
    again = ModelChecker(cache_dir=tmp_path).compile(model, X)
    assert not again.cached
    assert np.allclose(again(X), model(X).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_without_a_cache_jit_mode_jit_compiles() -> None:
    compiled = ModelChecker(cache_dir=None).compile(linear(), X)
    assert compiled.library is None and compiled.function.kind == "jit"


def test_a_failing_c_compiler_is_reported_in_aot_mode_and_jit_mode_falls_back(
    tmp_path: Path, monkeypatch
) -> None:
    ModelChecker(cache_dir=None).compile(linear(), X)  # the C runtime is built while cc works
    monkeypatch.setenv("CC", "false")
    with pytest.raises(MlirpipeError, match=r"linking the shared library failed \(.*false -c"):
        ModelChecker(cache_dir=tmp_path, mode="aot").compile(linear(), X)
    compiled = ModelChecker(cache_dir=tmp_path).compile(linear(), X)
    assert compiled.library is None and compiled.function.kind == "jit"
    assert np.allclose(compiled(X), linear()(X).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_the_lowering_key_covers_a_pipelines_own_tool(tmp_path: Path) -> None:
    """The same passes run by an external *-opt are another lowering; a rebuilt tool too."""
    import os

    from pytest_mlirpipe.execution.frontends import ImportedModel
    from pytest_mlirpipe.execution.native.model_lowering import lowering_key
    from pytest_mlirpipe.execution.native.signature import EntrySignature
    from pytest_mlirpipe.lowering.catalog import catalog_for
    from pytest_mlirpipe.model import ExternalTool, IRLevel

    pipeline = catalog_for(()).get("refbackend")
    signature = EntrySignature("f", (), ())
    imported = ImportedModel("module {}", IRLevel.LINALG_ON_TENSORS, signature, 0.0)
    tool = tmp_path / "foo-opt"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    with_tool = replace(pipeline, tool=ExternalTool(str(tool), pipeline.location))
    in_process, by_tool = lowering_key(imported, pipeline), lowering_key(imported, with_tool)
    assert in_process != by_tool
    tool.write_text("#!/bin/sh\n# rebuilt\n")
    os.utime(tool, ns=(1, 1))
    assert lowering_key(imported, with_tool) not in (in_process, by_tool)
