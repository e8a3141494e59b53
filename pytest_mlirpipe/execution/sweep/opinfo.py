"""torch's OpInfo catalogue as sweep units: each op × dtype × sample as a module and inputs."""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import MlirpipeError, Problem, UsageError, close_matches

SEED = 0  # torch's seed before an op's samples are made, so every run sees the same inputs


@dataclass(frozen=True, slots=True)
class Unit:
    """The work one worker does at once: an op's first `samples` samples in one dtype.

    Plain data (strings and ints), so it crosses to a worker process as it is."""

    op: str  # the OpInfo's name, with its variant after a dot (`max.reduction_no_dim`)
    dtype: str  # a torch dtype's name: float32, float64, ...
    samples: int


def op_db() -> list[Any]:
    """torch's OpInfo list (it needs the `expecttest` package)."""
    try:
        from torch.testing._internal.common_methods_invocations import op_db as ops
    except ImportError as exc:
        raise MlirpipeError(
            Problem(f"torch's OpInfo catalogue cannot be imported: {exc}", hint=_needs(exc))
        ) from None
    return list(ops)


def _needs(exc: ImportError) -> str:
    """What to install when the catalogue's import failed: the package whose import did."""
    extra = " (or pip install -e '.[all]')"
    top = (exc.name or "").split(".")[0]
    if top and top != "torch":
        return f"it needs the '{top}' package: pip install {top}{extra}"
    try:
        import torch  # noqa: F401
    except ImportError:
        return f"it needs torch: pip install torch{extra}"
    # A module of torch's own is missing: a torch build without its testing modules.
    return (
        "it needs torch with its testing modules and the 'expecttest' package: "
        f"pip install torch expecttest{extra}"
    )


def op_id(info: Any) -> str:
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


def torch_dtype(name: str) -> Any:
    import torch

    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise UsageError(
            Problem(
                f"unknown dtype '{name}'",
                hint="a torch dtype name, e.g. float32, float64, float16, bfloat16, int64",
            )
        )
    return dtype


def select_units(
    ops: Sequence[str] | None, dtypes: Sequence[str], samples: int, limit: int | None
) -> list[Unit]:
    """The units of the ops named in `ops` (an OpInfo's name takes all its variants; None:
    every op), in the catalogue's order, for each dtype the op supports on CPU; the first
    `limit` ops."""
    catalogue = op_db()
    if ops is not None:
        _refuse_unknown_ops(ops, catalogue)
    chosen = [info for info in catalogue if ops is None or info.name in ops or op_id(info) in ops]
    wanted = [(d, torch_dtype(d)) for d in dtypes]
    units: list[Unit] = []
    for info in chosen[:limit] if limit is not None else chosen:
        supported = info.supported_dtypes("cpu")
        units.extend(Unit(op_id(info), name, samples) for name, dt in wanted if dt in supported)
    return units


def _refuse_unknown_ops(ops: Sequence[str], catalogue: Sequence[Any]) -> None:
    known = {info.name for info in catalogue} | {op_id(info) for info in catalogue}
    unknown = [name for name in ops if name not in known]
    if unknown:
        raise UsageError(
            [
                Problem(
                    f"no OpInfo named '{name}'",
                    hint=(
                        "did you mean " + " or ".join(f"'{m}'" for m in close_matches(name, known))
                        if close_matches(name, known)
                        else "the names are torch's OpInfo names (e.g. add, nn.functional.relu)"
                    ),
                )
                for name in unknown
            ]
        )


def find_op(name: str) -> Any:
    for info in op_db():
        if op_id(info) == name:
            return info
    raise UsageError(Problem(f"no OpInfo named '{name}'"))


def samples_of(info: Any, dtype: str, count: int) -> list[Any]:
    """The op's first `count` sample inputs on CPU in `dtype`, made after seeding torch
    (quietly: torch's notes on beta features, such as sparse tensors, are not the sweep's)."""
    import torch

    torch.manual_seed(SEED)
    made = info.sample_inputs("cpu", torch_dtype(dtype), requires_grad=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return list(itertools.islice(made, count))
    finally:
        # Closed now: a generator closed later, inside torch.export's tracing, raises there.
        close = getattr(made, "close", None)
        if close is not None:
            close()


def module_and_inputs(info: Any, sample: Any) -> tuple[Any, list[Any]]:
    """The op called on `sample` as an nn.Module: the sample's tensors (its input, args and
    kwargs, nested lists included) are the module's inputs, everything else is a constant."""
    import torch
    from torch.utils import _pytree

    leaves, spec = _pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    inputs = [leaves[i].detach().clone() for i in slots]
    return _op_module_class()(info.op, leaves, slots, spec), inputs


@functools.cache
def _op_module_class() -> type:
    """The nn.Module class of one op (defined on first use: torch is imported lazily)."""
    import torch

    class OpModule(torch.nn.Module):
        """One OpInfo op on fixed non-tensor arguments; forward takes the sample's tensors."""

        def __init__(self, op: Any, leaves: list[Any], slots: list[int], spec: Any):
            super().__init__()
            self.op = op
            self.constants = [None if i in slots else leaf for i, leaf in enumerate(leaves)]
            self.slots = slots
            self.spec = spec

        def forward(self, *tensors: Any) -> Any:
            from torch.utils import _pytree

            leaves = list(self.constants)
            for slot, tensor in zip(self.slots, tensors, strict=True):
                leaves[slot] = tensor
            first, args, kwargs = _pytree.tree_unflatten(leaves, self.spec)
            return self.op(first, *args, **kwargs)

    return OpModule
