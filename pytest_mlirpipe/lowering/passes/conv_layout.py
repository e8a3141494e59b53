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

With `panels=W`, a constant filter of at least `panel-bytes` bytes (default 1 MiB) whose
output channels F are a multiple of W (and more than W) is cut into F / W filters of W output
channels each (the register tile's width), each a contiguous constant, and the convolution
into F / W convolutions, one a panel, each writing its channels of the result
(`tensor.insert_slice`, which `eliminate-empty-tensors` makes a write in place). In one HWCF
filter a register tile's W channels of each input channel are W floats of every row of F
floats: with F a power of two the rows of all filter positions fall into a few cache sets, and
the tile's share of a large filter (5 x 5 x 256 x 32 floats) did not stay in L2 from one tile
to the next, so each tile read it from memory again.
"""

from __future__ import annotations

from ...errors import PipelineSpecError, Problem
from ..op_query import all_ops
from .constants import Blobs, f32_constant
from .generics import reassociation
from .registry import PassBody, register

PASS = "mlirpipe-conv-to-nhwc"
PANELS_OPTION = "panels"
PANEL_BYTES_OPTION = "panel-bytes"

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
    "one filter per channel (M = 1) as a linalg.depthwise_conv_2d_nhwc_hwc; with panels=W (default "
    "0: none), a constant filter of at least panel-bytes bytes (default 1048576) whose output "
    "channels are a multiple of W is cut into panels of W output channels, one convolution each",
    options=(PANELS_OPTION, PANEL_BYTES_OPTION),
)
def conv_to_nhwc(options: dict[str, str]) -> PassBody:
    panels = _count(options.get(PANELS_OPTION, "0"), PANELS_OPTION)
    panel_bytes = _count(options.get(PANEL_BYTES_OPTION, str(1 << 20)), PANEL_BYTES_OPTION)

    def run(op, pass_) -> None:
        from ...mlir_env import ir

        blobs = Blobs(op)
        for conv in [o for o in all_ops(op) if o.name in REWRITES]:
            if _rewritable(conv, ir):
                _rewrite(conv, blobs, ir, panels, panel_bytes)
        for conv in [o for o in all_ops(op) if o.name == MULTIPLIER_DEPTHWISE]:
            if _rewritable(conv, ir) and ir.RankedTensorType(conv.operands[1].type).shape[3] == 1:
                _without_multiplier(conv, ir)

    return run


def _count(text: str, option: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise PipelineSpecError(
            Problem(
                f"{PASS}: {option}={text!r} is not an integer of 0 or more",
                hint=f"give the output channels of a filter panel (0: no panels) and the "
                f"bytes a filter has at least to be cut, e.g. "
                f"{PASS}{{{PANELS_OPTION}=32 {PANEL_BYTES_OPTION}=1048576}}",
            )
        )
    return int(text)


def _rewritable(conv, ir) -> bool:
    types = [v.type for v in conv.operands]
    if len(types) != 3 or not all(isinstance(t, ir.RankedTensorType) for t in types):
        return False
    tensors = [ir.RankedTensorType(t) for t in types]
    # a tensor of no elements has nothing to tile (and tiling it crashes)
    return all(
        t.has_static_shape and 0 not in t.shape and str(t.element_type) == "f32" for t in tensors
    )


def _rewrite(conv, blobs: Blobs, ir, panels: int, panel_bytes: int) -> None:
    image, filter_, init = conv.operands
    name, filter_perm, nchw = REWRITES[conv.name]
    with ir.InsertionPoint(conv), conv.location:
        image_nhwc = transposed(image, TO_NHWC, ir) if nchw else image
        weights = blobs.values(filter_)
        if weights is not None:  # transposed now, into a new constant
            weights = weights.transpose(filter_perm)
        fill = init.owner if getattr(init.owner, "name", None) == "linalg.fill" else None
        fill = fill or _channel_broadcast(init, ir)
        if not nchw:
            fill = None
        if _in_panels(name, weights, panels, panel_bytes, nchw, fill):
            result = _panel_convs(conv, image_nhwc, weights, fill, panels, ir)
        else:
            if weights is not None:
                filter_t = f32_constant(weights, "mlirpipe_filter", ir)
            else:
                filter_t = transposed(filter_, filter_perm, ir)
            if not nchw:
                init_nhwc = init
            elif fill is None:
                init_nhwc = transposed(init, TO_NHWC, ir)
            else:
                init_nhwc = _nhwc_init(fill, _empty_like(init, TO_NHWC, ir), None, ir)
            result = _conv_like(conv, name, image_nhwc, filter_t, init_nhwc)
        back = transposed(result, FROM_NHWC, ir) if nchw else result
    conv.results[0].replace_all_uses_with(back)
    conv.erase()
    if fill is not None and not list(fill.results[0].uses):
        fill.erase()


def _in_panels(name: str, weights, panels: int, panel_bytes: int, nchw: bool, fill) -> bool:
    """Whether a convolution is cut into panels: a constant filter of `panel_bytes` or more,
    output channels a multiple of `panels` and more than one panel, on NCHW images, its
    initial result a fill or a bias (each panel gets its own)."""
    if not panels or weights is None or name != "conv_2d_nhwc_hwcf" or not nchw or fill is None:
        return False
    channels = weights.shape[3]
    return channels > panels and channels % panels == 0 and weights.nbytes >= panel_bytes


def _conv_like(conv, name: str, image, filter_, init):
    """A new convolution `name` of `image` by `filter_` into `init`, with `conv`'s strides and
    dilations; its result."""
    from torch_mlir.dialects import linalg

    result = getattr(linalg, name)(image, filter_, outs=[init])
    for attr in ("strides", "dilations"):  # absent: 1, the default of both ops
        if attr in conv.attributes:
            result.owner.attributes[attr] = conv.attributes[attr]
    return result


def _nhwc_init(fill, empty, channels: tuple[int, int] | None, ir):
    """`fill` (a linalg.fill, or a bias broadcast) made again into `empty` (NHWC), for the
    output channels [start, start + count) of the bias when `channels` is given."""
    from torch_mlir.dialects import linalg, tensor

    if fill.name == "linalg.fill":
        return linalg.fill(fill.operands[0], outs=[empty])
    bias = fill.operands[0]
    if channels is not None:
        start, count = channels
        element = ir.RankedTensorType(bias.type).element_type
        part = ir.RankedTensorType.get([count], element)
        bias = tensor.extract_slice(part, bias, [], [], [], [start], [count], [1])
    return linalg.broadcast(bias, outs=[empty], dimensions=[0, 1, 2])


def _panel_convs(conv, image_nhwc, weights, fill, width: int, ir):
    """The NHWC result of `conv` made panel by panel: per `width` output channels a
    convolution by that panel of `weights` (HWCF), each inserted into the result."""
    from torch_mlir.dialects import tensor

    kind = ir.RankedTensorType(conv.results[0].type)
    n, f, h, w = kind.shape
    element = kind.element_type
    result = tensor.EmptyOp([n, h, w, f], element).result
    for start in range(0, f, width):
        panel = f32_constant(weights[..., start : start + width], "mlirpipe_filter", ir)
        empty = tensor.EmptyOp([n, h, w, width], element).result
        init = _nhwc_init(fill, empty, (start, width), ir)
        part = _conv_like(conv, "conv_2d_nhwc_hwcf", image_nhwc, panel, init)
        result = tensor.insert_slice(
            part, result, [], [], [], [0, 0, 0, start], [n, h, w, width], [1, 1, 1, 1]
        )
    return result


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
