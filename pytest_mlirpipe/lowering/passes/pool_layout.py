"""`mlirpipe-pool-to-nhwc`: 2-D max and sum pooling on NCHW images turned into NHWC pooling.

torch-mlir makes `linalg.pooling_nchw_max` of a max pooling and `linalg.pooling_nchw_sum` of an
average pooling (its division an elementwise op after it). On NCHW images a window slides
along the image's innermost dimension with a stride (2 as a rule), and `linalg-to-loops` made
them scalar loops. Here each becomes `linalg.pooling_nhwc_max` (`pooling_nhwc_sum`) between
`linalg.transpose`s, as `mlirpipe-conv-to-nhwc` does for convolutions: the image to NHWC, the
result back to NCHW, a result filled by a `linalg.fill` filled in NHWC. Channels are then
innermost, and the transform script vectorizes a pooling along them as it does a depthwise
convolution (its loops are the same); `mlirpipe-sink-transposes` cancels the transposes with
those of the convolutions before and after. Only f32 poolings of static shapes, no tensor
empty, are rewritten.
"""

from __future__ import annotations

from ..op_query import all_ops
from .conv_layout import FROM_NHWC, TO_NHWC, transposed
from .registry import PassBody, register

PASS = "mlirpipe-pool-to-nhwc"

REWRITES = {
    "linalg.pooling_nchw_max": "pooling_nhwc_max",
    "linalg.pooling_nchw_sum": "pooling_nhwc_sum",
}


@register(
    PASS,
    "Rewrite each f32 linalg.pooling_nchw_max (pooling_nchw_sum) of static shapes as a "
    "linalg.pooling_nhwc_max (pooling_nhwc_sum) between linalg.transposes of the image and "
    "the result (a filled result filled in NHWC)",
)
def pool_to_nhwc(options: dict[str, str]) -> PassBody:
    def run(op, pass_) -> None:
        from ...mlir_env import ir

        for pool in [o for o in all_ops(op) if o.name in REWRITES]:
            if _rewritable(pool, ir):
                _rewrite(pool, ir)

    return run


def _rewritable(pool, ir) -> bool:
    image, result = pool.operands[0].type, pool.operands[2].type
    if not all(isinstance(t, ir.RankedTensorType) for t in (image, result)):
        return False
    tensors = [ir.RankedTensorType(t) for t in (image, result)]
    # a tensor of no elements has nothing to tile (and tiling it crashes)
    return all(
        t.has_static_shape and 0 not in t.shape and str(t.element_type) == "f32" for t in tensors
    )


def _rewrite(pool, ir) -> None:
    from torch_mlir.dialects import linalg, tensor

    image, window, init = pool.operands
    with ir.InsertionPoint(pool), pool.location:
        image_nhwc = transposed(image, TO_NHWC, ir)
        fill = init.owner if getattr(init.owner, "name", None) == "linalg.fill" else None
        if fill is not None:
            kind = ir.RankedTensorType(init.type)
            empty = tensor.EmptyOp([kind.shape[p] for p in TO_NHWC], kind.element_type).result
            init_nhwc = linalg.fill(fill.operands[0], outs=[empty])
        else:
            init_nhwc = transposed(init, TO_NHWC, ir)
        result = getattr(linalg, REWRITES[pool.name])(image_nhwc, window, outs=[init_nhwc])
        for attr in ("strides", "dilations"):  # absent: 1, the default of both ops
            if attr in pool.attributes:
                result.owner.attributes[attr] = pool.attributes[attr]
        back = transposed(result, FROM_NHWC, ir)
    pool.results[0].replace_all_uses_with(back)
    pool.erase()
    if fill is not None and not list(fill.results[0].uses):
        fill.erase()
