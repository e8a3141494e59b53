"""The values of a module's f32 constants read at compile time, and new constants made of them."""

from __future__ import annotations

import re

# Ops that give their operand's elements, in the same order, another shape.
RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


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
        arith.constant this can read, or a reshape of one (tensor.collapse_shape, expand_shape:
        torch-mlir's view of a depthwise filter C x 1 x KH x KW as C x KH x KW); else None."""
        from ...mlir_env import ir

        shape = ir.RankedTensorType(value.type).shape
        owner = value.owner
        while getattr(owner, "name", None) in RESHAPES:
            owner = owner.operands[0].owner
        if getattr(owner, "name", None) != "arith.constant":
            return None
        source = ir.RankedTensorType(owner.results[0].type).shape
        found = self.array(owner.attributes["value"], source)
        return None if found is None else found.reshape(shape)


def f32_constant(values, name: str, ir):
    """A new arith.constant holding `values` (a numpy array of f32), its data a resource
    named after `name`; its result."""
    import numpy as np
    from torch_mlir.dialects import arith

    data = np.ascontiguousarray(values, dtype=np.float32)
    kind = ir.RankedTensorType.get(list(data.shape), ir.F32Type.get())
    attr = ir.DenseResourceElementsAttr.get_from_buffer(data, name, kind)
    return arith.ConstantOp(kind, attr).result
