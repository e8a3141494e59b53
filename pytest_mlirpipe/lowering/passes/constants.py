"""The values of a module's f32 constants read at compile time, and new constants made of them."""

from __future__ import annotations

import re


class Blobs:
    """The data of a module's `dense_resource` constants (its printed resource section,
    printed once, when a constant first asks for it)."""

    def __init__(self, module) -> None:
        self._module = module
        self._text: str | None = None

    def array(self, attr, shape: list[int]):
        """The f32 values of a constant's attribute (dense or dense_resource) as a numpy array
        of `shape`; None when they cannot be read."""
        import numpy as np

        from ...mlir_env import ir

        try:
            return np.array(ir.DenseFPElementsAttr(attr), dtype=np.float32).reshape(shape)
        except ValueError:  # not dense<...>
            pass
        found = re.fullmatch(r"dense_resource<(.+)>", str(attr).split(" : ")[0])
        if found is None:
            return None
        if self._text is None:
            self._text = self._module.get_asm(binary=False)
        blob = re.search(rf'\n\s*"?{re.escape(found.group(1))}"?: "0x([0-9A-Fa-f]*)"', self._text)
        if blob is None:
            return None
        data = bytes.fromhex(blob.group(1))[4:]  # the first 4 bytes: the blob's alignment
        if len(data) != 4 * int(np.prod(shape)):
            return None
        return np.frombuffer(data, dtype=np.float32).reshape(shape)

    def values(self, value):
        """The f32 values of `value` as a numpy array of its shape when it is the result of an
        arith.constant this can read; else None."""
        from ...mlir_env import ir

        owner = value.owner
        if getattr(owner, "name", None) != "arith.constant":
            return None
        return self.array(owner.attributes["value"], ir.RankedTensorType(value.type).shape)


def f32_constant(values, name: str, ir):
    """A new arith.constant holding `values` (a numpy array of f32), its data a resource
    named after `name`; its result."""
    import numpy as np
    from torch_mlir.dialects import arith

    data = np.ascontiguousarray(values, dtype=np.float32)
    kind = ir.RankedTensorType.get(list(data.shape), ir.F32Type.get())
    attr = ir.DenseResourceElementsAttr.get_from_buffer(data, name, kind)
    return arith.ConstantOp(kind, attr).result
