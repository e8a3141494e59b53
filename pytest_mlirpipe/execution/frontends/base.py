"""What every front end shares: import levels, import options, the imported model."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...errors import Problem, UsageError
from ...model import IRLevel, Pipeline
from ..cache import ArtifactCache
from ..import_cache import (
    Unkeyable,
    load_imported,
    options_fingerprint,
    store_imported,
)
from ..native.signature import EntrySignature, scalar_results_as_tensors
from ..results.compare import as_numpy, flatten_results
from ..results.samples import Draws

# Pipeline input level -> import_torch's `to`.
TORCH_TARGETS = {
    IRLevel.TORCH: "torch",
    IRLevel.LINALG_ON_TENSORS: "linalg",
    IRLevel.TOSA: "tosa",
}


@dataclass(frozen=True, slots=True)
class ImportedModel:
    """A model as MLIR at a pipeline's input level, with its entry signature."""

    text: str
    level: IRLevel
    signature: EntrySignature
    seconds: float
    cached: bool = False  # read from the artifact cache


# Frontend attributes that are not import options (all others are part of an import's key).
_NOT_OPTIONS = frozenset(
    {
        "model",
        "inputs",
        "name",
        "_imports",
        "proto",
        "_model_digest",
        "exported",  # what an import computes (cached properties), not how it is asked for
        "_result_dtypes",
    }
)

# Named import profiles: the backend_legal_ops another runner imports with, by import target.
# "torch-mlir-e2e": those of torch-mlir's e2e test runner (its lower_module), so a suite can
# import as that runner does; e.g. its adaptive max-pool models need their ops kept whole.
_POOLS = (
    "aten.adaptive_avg_pool1d",
    "aten.adaptive_avg_pool2d",
    "aten.adaptive_max_pool1d",
    "aten.adaptive_max_pool2d",
)

IMPORT_PROFILES: dict[str, dict[str, tuple[str, ...]]] = {
    "torch-mlir-e2e": {
        "torch": (),
        "linalg": ("aten.flatten.using_ints", *_POOLS, "aten.unflatten.int"),
        "tosa": ("aten.flatten.using_ints", "aten.native_layer_norm", *_POOLS, "aten.linear"),
    },
}


@dataclass(frozen=True, slots=True)
class ImportOptions:
    """How a torch module is imported: the ops torch-mlir keeps whole (`backend_legal_ops`,
    e.g. "aten.adaptive_max_pool2d", or those of a named `profile` of IMPORT_PROFILES) and the
    decompositions run on the exported program (op names such as "aten.gelu"; None:
    torch-mlir's default table, (): none at all)."""

    backend_legal_ops: tuple[str, ...] = ()
    decompositions: tuple[str, ...] | None = None
    profile: str = ""

    @classmethod
    def of(
        cls,
        backend_legal_ops: Sequence[str] = (),
        decompositions: Sequence[Any] | None = None,
        profile: str | None = None,
    ) -> ImportOptions:
        """Options from what a caller gives: op names or torch op objects, any sequence."""
        if isinstance(backend_legal_ops, str) or isinstance(decompositions, str):
            raise UsageError(
                Problem(
                    "backend_legal_ops and decompositions take a list of op names, not a string",
                    hint="e.g. backend_legal_ops=['aten.adaptive_max_pool2d']",
                )
            )
        if profile and profile not in IMPORT_PROFILES:
            raise UsageError(
                Problem(
                    f"unknown import profile {profile!r}",
                    hint=f"the profiles: {', '.join(sorted(IMPORT_PROFILES))}",
                )
            )
        if profile and backend_legal_ops:
            raise UsageError(
                Problem(
                    f"import_profile {profile!r} sets the backend_legal_ops: give one of the two",
                    hint="drop backend_legal_ops, or the profile",
                )
            )
        decomps = None if decompositions is None else tuple(_op_name(d) for d in decompositions)
        return cls(tuple(_op_name(o) for o in backend_legal_ops), decomps, profile or "")

    @property
    def is_default(self) -> bool:
        return not self.backend_legal_ops and self.decompositions is None and not self.profile

    def legal_ops(self, to: str) -> tuple[str, ...]:
        """The ops torch-mlir keeps whole when importing to `to` (torch, linalg, tosa)."""
        if self.profile:
            return IMPORT_PROFILES[self.profile][to]
        return self.backend_legal_ops

    def decomposition_table(self) -> dict[Any, Any]:
        """The decomposition table these options ask for (op overload -> function)."""
        if self.decompositions is None:
            from torch_mlir.extras.fx_decomp_util import get_decomposition_table

            return get_decomposition_table()
        from torch._decomp import get_decompositions

        return get_decompositions([_torch_op(n) for n in self.decompositions])


def _op_name(op: Any) -> str:
    """ "aten.gelu" for torch.ops.aten.gelu (packet or overload) or the text itself."""
    return op if isinstance(op, str) else str(op).removesuffix(".default")


def _torch_op(name: str) -> Any:
    """The torch op (packet or overload) an op name such as "aten.gelu" names."""
    import torch

    target: Any = torch.ops
    try:
        for part in name.split("."):
            target = getattr(target, part)
    except (AttributeError, RuntimeError):
        target = None
    if not isinstance(target, torch._ops.OpOverloadPacket | torch._ops.OpOverload):
        raise UsageError(
            Problem(
                f"decompositions: '{name}' is not a torch op",
                hint="name ops as torch.ops spells them, e.g. 'aten.gelu' or 'aten.gelu.default'",
            )
        )
    return target


class Frontend:
    """A model and its example inputs as one of the three front ends (chosen by
    `frontend_for`): how it becomes MLIR, what results it expects, what torch can time.

    Each input level is imported once and shared by the pipelines that take it.
    """

    name = "model"  # the case name when a check gives none

    def __init__(self, model: Any, inputs: Sequence[Any]):
        self.model = model
        self.inputs = tuple(inputs)
        self._imports: dict[IRLevel, ImportedModel] = {}

    def imported(self, pipeline: Pipeline, cache: ArtifactCache | None = None) -> ImportedModel:
        """The model as MLIR at `pipeline`'s input level (from `cache` when it holds it)."""
        level = pipeline.input
        if level not in self._imports:
            t0 = time.perf_counter()
            key = self._cache_key(pipeline) if cache is not None and cache.enabled else None
            found = load_imported(cache, key) if cache is not None and key else None
            if found is None:
                text, signature = self._import(pipeline)
                text = scalar_results_as_tensors(text, signature)
                found = ImportedModel(text, level, signature, 0.0)
                if cache is not None and key:
                    store_imported(cache, key, found)
            else:
                found = replace(found, cached=True)
            self._imports[level] = replace(found, seconds=time.perf_counter() - t0)
        return self._imports[level]

    def _cache_key(self, pipeline: Pipeline) -> str | None:
        """The artifact-cache key of the import for `pipeline` (None: never cached)."""
        try:
            extra = [
                type(self).__name__,
                pipeline.input.value,
                options_fingerprint(self, _NOT_OPTIONS),
            ]
        except Unkeyable:
            return None
        return self._model_key(extra)

    def _model_key(self, extra: list[str]) -> str | None:
        return None

    def _import(self, pipeline: Pipeline) -> tuple[str, EntrySignature]:
        raise NotImplementedError

    def expected(self, first_pipeline: Callable[[], Pipeline]) -> list[np.ndarray]:
        """The results to compare with, from the model's own reference run."""
        raise NotImplementedError

    def eager(self) -> Callable[..., Any] | None:
        """What torch runs when the native code is timed against it (None: nothing)."""
        return None

    def export_mode(self) -> str:
        """How torch.export traced the model ("" when it was not exported)."""
        return ""

    def draws(self) -> Draws | None:
        """The random ops the model calls and the samples they draw (None: it draws none)."""
        return None


def reference_results(reference: Callable[..., Any], inputs: Sequence[Any]) -> list[np.ndarray]:
    """A user's reference function on cloned inputs, as numpy arrays."""
    import torch

    cloned = [x.clone() if isinstance(x, torch.Tensor) else np.copy(x) for x in inputs]
    with torch.no_grad():
        return [as_numpy(r) for r in flatten_results(reference(*cloned))]


def describe(x: Any) -> str:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", type(x).__name__)
    if shape is None:
        return f"{type(x).__name__}"
    return "x".join([*map(str, shape), str(dtype).replace("torch.", "")])


@contextlib.contextmanager
def private_tempdir() -> Iterator[None]:
    """torch-mlir writes the module of a failing lowering to $TMPDIR/UnnammedModule.mlir (its
    `run_pipeline_with_repro_report`, with no option to send it elsewhere); our own error
    says how to reproduce, so that file goes to a private folder, removed afterwards."""
    import tempfile

    saved = tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="mlirpipe-import-") as private:
        tempfile.tempdir = private
        try:
            yield
        finally:
            tempfile.tempdir = saved
