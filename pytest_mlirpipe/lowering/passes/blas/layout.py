"""How a gemm matrix reads from its memref: transpose flag, leading dimension, or a copy first."""

from __future__ import annotations

from dataclasses import dataclass

from .matching import Refused
from .ssa import ir


@dataclass(frozen=True, slots=True)
class Layout:
    """How one gemm matrix reads from its memref: transposed?, which dim gives ld, copy first?"""

    trans: bool
    ld_dim: int  # memref dimension whose stride is the leading dimension
    cols_dim: int  # memref dimension whose size the leading dimension must cover
    copy: bool


def layout_of(value, row_dim: int, col_dim: int) -> Layout:
    """The layout of the matrix whose rows and columns are dims `row_dim`, `col_dim` of `value`.

    Either dimension may have the unit stride (the other's stride is the leading dimension);
    a memref with neither is read through a dense row-major copy. Raises Refused when rows
    overlap, which BLAS cannot express."""
    bindings = ir()
    mtype = bindings.MemRefType(value.type)
    strides, _ = mtype.get_strides_and_offset()
    copy = strides[col_dim] != 1 and strides[row_dim] != 1
    if copy:  # a contiguous row-major copy: the last dim has the unit stride
        strides = [0] * (mtype.rank - 1) + [1]
    if strides[col_dim] == 1:
        layout = Layout(False, row_dim, col_dim, copy)
    else:
        layout = Layout(True, col_dim, row_dim, copy)
    ld, shape = strides[layout.ld_dim], mtype.shape
    dyn = bindings.ShapedType.get_dynamic_size()
    if (
        not copy
        and ld != bindings.ShapedType.get_dynamic_stride_or_offset()
        and shape[layout.cols_dim] != dyn
        and shape[layout.ld_dim] != dyn
        and shape[layout.ld_dim] > 1
        and ld < shape[layout.cols_dim]
    ):
        raise Refused(
            f"operand {mtype} has overlapping rows (stride {ld} < {shape[layout.cols_dim]}), "
            "which BLAS cannot express"
        )
    return layout
