"""`mlirpipe-conv-to-nhwc`: 2-D convolutions on NCHW images turned into ones on NHWC images.

`linalg.conv_2d_nchw_fchw` (what torch-mlir makes of a convolution) becomes a
`linalg.conv_2d_nhwc_hwcf` between `linalg.transpose`s: the image to NHWC, the filter to HWCF
and the result back to NCHW; `linalg.depthwise_conv_2d_nchw_chw` (a convolution whose groups
are its channels) becomes a `linalg.depthwise_conv_2d_nhwc_hwc` the same way; TOSA's
`linalg.conv_2d_nhwc_fhwc`, on NHWC images already, only has its filter made HWCF. Channels are then
the innermost dimension of the image, the filter and the result: the transform script
vectorizes a convolution along its output channels (contiguous) and broadcasts one input value
per output column. A convolution whose initial result is a `linalg.fill` gets a fill of its
own in NHWC (canonicalization would fold the transpose of a fill, but only after tiling), and
one whose initial result is a bias broadcast along N, H and W (`linalg.broadcast` of a 1-d
tensor, torch-mlir's convolution with bias) a broadcast of its own along N, H and W of the NHWC
result: no NCHW tensor of the bias is made and transposed at every call. A
constant filter (a model's weight) is transposed here, once, into a new constant: no transpose
of it is left to run at every call. Only f32 convolutions of static shapes, no tensor empty, are
rewritten; others (and grouped ones) are left as they are.
"""

from __future__ import annotations

from ..op_query import all_ops
from .constants import Blobs, f32_constant
from .generics import reassociation
from .registry import PassBody, register

PASS = "mlirpipe-conv-to-nhwc"

# NCHW -> NHWC and back; FCHW -> HWCF; CHW -> HWC.
TO_NHWC = (0, 2, 3, 1)
FROM_NHWC = (0, 3, 1, 2)
TO_HWCF = (2, 3, 1, 0)
TO_HWC = (1, 2, 0)
FHWC_TO_HWCF = (1, 2, 3, 0)
# The op, the NHWC op it becomes, its filter's permutation and whether its image and result
# are NCHW (transposed to NHWC and back) or NHWC already (TOSA's convolution, filter FHWC).
REWRITES = {
    "linalg.conv_2d_nchw_fchw": ("conv_2d_nhwc_hwcf", TO_HWCF, True),
    "linalg.depthwise_conv_2d_nchw_chw": ("depthwise_conv_2d_nhwc_hwc", TO_HWC, True),
    "linalg.conv_2d_nhwc_fhwc": ("conv_2d_nhwc_hwcf", FHWC_TO_HWCF, False),
}
# TOSA's depthwise convolution: NHWC images, an HWCM filter (M filters per channel)
MULTIPLIER_DEPTHWISE = "linalg.depthwise_conv_2d_nhwc_hwcm"


@register(
    PASS,
    "Rewrite each f32 linalg.conv_2d_nchw_fchw (depthwise_conv_2d_nchw_chw) of static shapes "
    "as a linalg.conv_2d_nhwc_hwcf (depthwise_conv_2d_nhwc_hwc) between linalg.transposes of "
    "the image, the filter and the result, and each linalg.conv_2d_nhwc_fhwc as a "
    "linalg.conv_2d_nhwc_hwcf of its filter transposed; a linalg.depthwise_conv_2d_nhwc_hwcm of "
    "one filter per channel (M = 1) as a linalg.depthwise_conv_2d_nhwc_hwc",
)
def conv_to_nhwc(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        blobs = Blobs(op)
        for conv in [o for o in all_ops(op) if o.name in REWRITES]:
            if _rewritable(conv, ir):
                _rewrite(conv, blobs, ir)
        for conv in [o for o in all_ops(op) if o.name == MULTIPLIER_DEPTHWISE]:
            if _rewritable(conv, ir) and ir.RankedTensorType(conv.operands[1].type).shape[3] == 1:
                _without_multiplier(conv, ir)

    return run


def _rewritable(conv, ir) -> bool:
    types = [v.type for v in conv.operands]
    if len(types) != 3 or not all(isinstance(t, ir.RankedTensorType) for t in types):
        return False
    tensors = [ir.RankedTensorType(t) for t in types]
    # a tensor of no elements has nothing to tile (and tiling it crashes)
    return all(
        t.has_static_shape and 0 not in t.shape and str(t.element_type) == "f32" for t in tensors
    )


def _rewrite(conv, blobs: Blobs, ir) -> None:
    from torch_mlir.dialects import linalg

    image, filter_, init = conv.operands
    name, filter_perm, nchw = REWRITES[conv.name]
    with ir.InsertionPoint(conv), conv.location:
        image_nhwc = transposed(image, TO_NHWC, ir) if nchw else image
        weights = blobs.values(filter_)
        if weights is not None:  # transposed now, into a new constant
            filter_t = f32_constant(weights.transpose(filter_perm), "mlirpipe_filter", ir)
        else:
            filter_t = transposed(filter_, filter_perm, ir)
        fill = init.owner if getattr(init.owner, "name", None) == "linalg.fill" else None
        fill = fill or _channel_broadcast(init, ir)
        if not nchw:
            fill, init_nhwc = None, init
        elif fill is None:
            init_nhwc = transposed(init, TO_NHWC, ir)
        elif fill.name == "linalg.fill":
            init_nhwc = linalg.fill(fill.operands[0], outs=[_empty_like(init, TO_NHWC, ir)])
        else:  # a bias, broadcast along the channels of the NHWC result
            empty = _empty_like(init, TO_NHWC, ir)
            init_nhwc = linalg.broadcast(fill.operands[0], outs=[empty], dimensions=[0, 1, 2])
        result = getattr(linalg, name)(image_nhwc, filter_t, outs=[init_nhwc])
        new = result.owner
        for attr in ("strides", "dilations"):  # absent: 1, the default of both ops
            if attr in conv.attributes:
                new.attributes[attr] = conv.attributes[attr]
        back = transposed(result, FROM_NHWC, ir) if nchw else result
    conv.results[0].replace_all_uses_with(back)
    conv.erase()
    if fill is not None and not list(fill.results[0].uses):
        fill.erase()


def _channel_broadcast(init, ir):
    """The linalg.broadcast that makes `init` from a bias (one value per channel: a 1-d tensor
    along dimension 1 of an NCHW result), or None."""
    op = init.owner
    if getattr(op, "name", None) != "linalg.broadcast":
        return None
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    return op if dims == [0, 2, 3] and ir.RankedTensorType(op.operands[0].type).rank == 1 else None


def _without_multiplier(conv, ir) -> None:
    """`conv` (depthwise, NHWC, an HWCM filter with M = 1) as a depthwise_conv_2d_nhwc_hwc on
    the filter and the result without their last dimension of 1 (reshapes: no copy)."""
    from torch_mlir.dialects import linalg, tensor

    image, filter_, init = conv.operands
    last_two = reassociation([[0], [1], [2], [3, 4]], ir)
    first_two = reassociation([[0], [1], [2, 3]], ir)
    f_shape = ir.RankedTensorType(filter_.type).shape
    r_type = ir.RankedTensorType(init.type)
    element = r_type.element_type
    with ir.InsertionPoint(conv), conv.location:
        filter_hwc = tensor.collapse_shape(
            ir.RankedTensorType.get(f_shape[:3], element), filter_, first_two
        )
        init_nhwc = tensor.collapse_shape(
            ir.RankedTensorType.get(r_type.shape[:4], element), init, last_two
        )
        result = linalg.depthwise_conv_2d_nhwc_hwc(image, filter_hwc, outs=[init_nhwc])
        for attr in ("strides", "dilations"):
            if attr in conv.attributes:
                result.owner.attributes[attr] = conv.attributes[attr]
        back = tensor.expand_shape(r_type, result, last_two, [], list(r_type.shape))
    conv.results[0].replace_all_uses_with(back)
    conv.erase()


def _empty_like(value, perm: tuple[int, ...], ir):
    """A tensor.empty of `value`'s shape permuted by `perm`."""
    from torch_mlir.dialects import tensor

    kind = ir.RankedTensorType(value.type)
    return tensor.EmptyOp([kind.shape[p] for p in perm], kind.element_type).result


def transposed(value, perm: tuple[int, ...], ir):
    """`value` with its dimensions permuted by `perm` (a linalg.transpose)."""
    from torch_mlir.dialects import linalg

    empty = _empty_like(value, perm, ir)
    return linalg.transpose(value, outs=[empty], permutation=list(perm)).results[0]
