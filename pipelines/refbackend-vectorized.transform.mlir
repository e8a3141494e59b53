// Tiling and vectorization of refbackend-vectorized (run by mlirpipe-transform, stage
// tile-and-vectorize). Ops marked {mlirpipe.sizes = [...]} take their sizes from the pipeline
// file's `sizes` (or $MLIRPIPE_TRANSFORM_SIZES); the numbers written here are placeholders.
//
// A matmul whose B the stage before packed into panels (a linalg.contract over panel, m,
// column in panel, k): blocks of `block-panels` (panels x rows) as scf.forall, register tiles
// of `register-mn-panels` (rows x the panel width) on one panel, each with its share of C's
// zero fill fused in (its accumulators start at zero in registers, C is written once, when the
// tile is done) and the whole k loop inside; the packing (lower_pack: a transpose) copied by
// vectors of a panel's rows.
//
// Per other matmul (linalg.matmul with any operand maps, linalg.batch_matmul): blocks of
// `block` (M x N) as scf.forall (one block per thread when parallel), the zero fill of C fused
// into each block; a k loop of `k-block`; register tiles of `register` (M x N x K) whose
// accumulator stays in vector registers through the k loop; register tiles walk the block column
// by column (n outer, m inner), so the k-block x 16 panel of B is reused by every row tile. Loops whose step does not divide
// their extent are peeled: the full tiles are static, and the partial ones at the edges are
// vectorized with masks of the register tile's size.
//
// Per convolution on NHWC images (linalg.conv_2d_nhwc_hwcf, linalg.depthwise_conv_2d_nhwc_hwc:
// mlirpipe-conv-to-nhwc made them): blocks of `conv-rows` output rows as scf.forall, register
// tiles of one output row (`conv-register`, `depthwise-register`: output columns x channels),
// loops over the filter's rows and the input channels inside them, each tile decomposed into a
// 1-D convolution and vectorized (outer products of input columns and output channels).
//
// Per elementwise op (mlirpipe-mark-elementwise gave it mlirpipe.elementwise = its rank): blocks
// of `elementwise-block` (ranks 3 and 4: of channels) as scf.forall, rows of up to
// `elementwise-row` elements of its last dimension, each vectorized where the vectorizer can.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_matmul failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %bmm = transform.structured.match ops{["linalg.batch_matmul"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %bmm : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @block_batch_matmul failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    // A convolution with an elementwise epilogue (mlirpipe-mark-elementwise marked both): the
    // epilogue's blocks of output rows, each computing its convolution's block first.
    // Those whose output channels leave a last register tile of a width that is not a power of
    // two (mlirpipe-mark-elementwise marked them: 24 channels in tiles of 32) first, in
    // register tiles of `conv-register-narrow`.
    %conv_epi_narrow = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]}
      attributes{mlirpipe.conv_epilogue, mlirpipe.narrow_channels} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %conv_epi_narrow : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %blk = transform.include @tile_conv_epilogue failures(propagate) (%op)
        : (!transform.any_op) -> !transform.any_op
      transform.include @conv_register_tiles_narrow failures(propagate) (%blk)
        : (!transform.any_op) -> ()
    }
    // (the convolutions fused into their epilogues' blocks are left behind, dead, until then)
    %funcs_epi = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_dce to %funcs_epi : !transform.any_op
    %conv_epi = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]}
      attributes{mlirpipe.conv_epilogue} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %conv_epi : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %blk = transform.include @tile_conv_epilogue failures(propagate) (%op)
        : (!transform.any_op) -> !transform.any_op
      transform.include @conv_register_tiles failures(propagate) (%blk)
        : (!transform.any_op) -> ()
    }
    %dw_epi = transform.structured.match ops{["linalg.depthwise_conv_2d_nhwc_hwc"]}
      attributes{mlirpipe.conv_epilogue} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %dw_epi : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_depthwise_epilogue failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    // Convolutions (on NHWC images: mlirpipe-conv-to-nhwc ran before) into 1-D ones.
    %convs_narrow = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]}
      attributes{mlirpipe.narrow_channels} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %convs_narrow : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %blk = transform.include @tile_conv failures(propagate) (%op)
        : (!transform.any_op) -> !transform.any_op
      transform.include @conv_register_tiles_narrow failures(propagate) (%blk)
        : (!transform.any_op) -> ()
    }
    %convs = transform.structured.match ops{["linalg.conv_2d_nhwc_hwcf"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %convs : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %blk = transform.include @tile_conv failures(propagate) (%op)
        : (!transform.any_op) -> !transform.any_op
      transform.include @conv_register_tiles failures(propagate) (%blk)
        : (!transform.any_op) -> ()
    }
    %dws = transform.structured.match ops{["linalg.depthwise_conv_2d_nhwc_hwc"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %dws : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_depthwise_conv failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    // Poolings on NHWC images (mlirpipe-pool-to-nhwc): the loops of a depthwise convolution.
    %pools = transform.structured.match ops{["linalg.pooling_nhwc_max", "linalg.pooling_nhwc_sum"]}
      in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %pools : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_depthwise_conv failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    // The zero fill of C moves after the reshape to panels (then it is the contract's producer).
    %all = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %all {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // A batch matmul's blocks, static now where the block was larger than the matrix (the
    // canonicalization dropped the forall's single-iteration dimension and its affine.min):
    // register tiles of a static block need no masks, and their accumulator leaves the k loop.
    %bblocks = transform.structured.match attributes{mlirpipe.batch_block} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %bblocks : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_batch_block failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %panels = transform.structured.match ops{["linalg.contract"]}
      attributes{mlirpipe.packed = "rhs"} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %panels : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_panel_matmul failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %strips = transform.structured.match ops{["linalg.contract"]}
      attributes{mlirpipe.packed = "both"} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %strips : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_strip_matmul failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    // A chain that reads a row statistic (a softmax: mlirpipe-mark-elementwise marked its last
    // op) a block of `row-chain-rows` rows at a time: its last op in blocks as
    // scf.forall, the ops before it fused into each block (structured.fuse), each of those
    // read twice (a softmax's exponentials: by the sum and by the division) computed once
    // (CSE in the block), the ops left behind unread gone (DCE); then each op of a block by
    // rows as below, all of a block's rows in cache from one op to the next. Blocks of no more
    // rows than `elementwise-block`: the rows' own blocks are then one iteration, folded away
    // (more would be parallel regions nested in the chain's).
    %chain2 = transform.structured.match attributes{mlirpipe.row_chain = 2 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %chain2 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @fuse_row_chain_2d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %chain3 = transform.structured.match attributes{mlirpipe.row_chain = 3 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %chain3 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @fuse_row_chain_3d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %chain4 = transform.structured.match attributes{mlirpipe.row_chain = 4 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %chain4 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @fuse_row_chain_4d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %chain_funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_dce to %chain_funcs : !transform.any_op
    // Elementwise ops (mlirpipe-mark-elementwise marked them with their rank) by rows of their
    // last dimension.
    %ew1 = transform.structured.match attributes{mlirpipe.elementwise = 1 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ew1 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_elementwise_1d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %ew2 = transform.structured.match attributes{mlirpipe.elementwise = 2 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ew2 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_elementwise_2d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %ew3 = transform.structured.match attributes{mlirpipe.elementwise = 3 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ew3 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_elementwise_3d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %ew4 = transform.structured.match attributes{mlirpipe.elementwise = 4 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ew4 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_elementwise_4d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %ew5 = transform.structured.match attributes{mlirpipe.elementwise = 5 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %ew5 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_elementwise_5d failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    // Reductions of the last dimension (marked likewise): rows, each split into lanes.
    %red2 = transform.structured.match attributes{mlirpipe.row_reduction = 2 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %red2 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_row_reduction_2d failures(suppress) (%op) : (!transform.any_op) -> ()
    }
    %red3 = transform.structured.match attributes{mlirpipe.row_reduction = 3 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %red3 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_row_reduction_3d failures(suppress) (%op) : (!transform.any_op) -> ()
    }
    %red4 = transform.structured.match attributes{mlirpipe.row_reduction = 4 : i64} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %red4 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @tile_row_reduction_4d failures(suppress) (%op) : (!transform.any_op) -> ()
    }
    %packs = transform.structured.match ops{["linalg.pack"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %packs : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      transform.include @copy_panels failures(propagate) (%op) : (!transform.any_op) -> ()
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    // Partial register tiles get a loop of their own (their shapes static in the full ones), the
    // loops inside a partial iteration too (skip-partial off): a corner tile, partial in both
    // columns and channels, would keep a dynamic shape that the vectorizer refuses.
    %peeled = transform.apply_registered_pass "scf-for-loop-peeling" with options = { "skip-partial" = false } to %funcs
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %peeled {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // One function at a time: the matchers inside take one target each.
    transform.foreach %peeled : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      %vectorized = transform.include @vectorize_tiles failures(propagate) (%f)
        : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }

  // The second stage (lower-contractions): vector.contract -> outer products -> vector.fma.
  transform.named_sequence @lower_contractions(%root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.include @lower_vectors failures(propagate) (%funcs)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // One matmul: blocks, the fill fused into them, the k loop, register tiles.
  transform.named_sequence @tile_matmul(%mm: !transform.any_op {transform.consumed}) {
    %init = transform.get_operand %mm[2] : (!transform.any_op) -> !transform.any_value
    %blk, %forall = transform.structured.tile_using_forall %mm tile_sizes [64, 256]
      {mlirpipe.sizes = ["block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_fill failures(suppress) (%init, %forall, %blk)
      : (!transform.any_value, !transform.any_op, !transform.any_op) -> ()
    %kb, %kl = transform.structured.tile_using_for %blk tile_sizes [0, 0, 256]
      {mlirpipe.sizes = [0, 0, "k-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %reg, %rl:3 = transform.structured.tile_using_for %kb tile_sizes [8, 32, 1]
      interchange = [1, 0, 2] {mlirpipe.sizes = ["register"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %reg "mlirpipe.register_tile" : !transform.any_op
    transform.yield
  }

  // A convolution on NHWC images (loops n, oh, ow, f, kh, kw, c): blocks of `conv-rows`
  // output rows as scf.forall with the fill of the result fused in; the block, for the caller
  // to cut into register tiles of `conv-register` (output columns x output channels) of one
  // output row; in each, a loop over the filter's rows and one over the input channels by
  // `conv-channels`, then the tile as a 1-D convolution (one filter row over one input row)
  // that the vectorizer handles.
  transform.named_sequence @tile_conv(%conv: !transform.any_op {transform.consumed})
      -> !transform.any_op {
    %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
    %blk, %forall = transform.structured.tile_using_forall %conv tile_sizes [1, 4]
      {mlirpipe.sizes = [1, "conv-rows"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_conv_fill failures(suppress) (%fill, %forall)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield %blk : !transform.any_op
  }

  // A depthwise convolution on NHWC images (loops n, oh, ow, c, kh, kw): blocks of
  // `conv-rows` output rows as scf.forall, register tiles of `depthwise-register` (output
  // columns x channels) of one output row, a loop over the filter's rows, each a 1-D depthwise
  // convolution.
  transform.named_sequence @tile_depthwise_conv(%conv: !transform.any_op {transform.consumed}) {
    %bias = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
    %blk, %forall = transform.structured.tile_using_forall %conv tile_sizes [1, 4]
      {mlirpipe.sizes = [1, "conv-rows"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_conv_bias failures(suppress) (%bias, %forall)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.include @depthwise_register_tiles failures(propagate) (%blk)
      : (!transform.any_op) -> ()
    transform.yield
  }

  // A convolution and the elementwise op that reads its result (its epilogue: a batch norm and
  // a ReLU): the epilogue in blocks of `conv-rows` output rows as scf.forall, rows of
  // `elementwise-row` elements inside; the convolution's block fused into each (with its fill)
  // and tiled as in tile_conv (the block for the caller to tile). The block is read back from
  // cache, not from memory.
  transform.named_sequence @tile_conv_epilogue(%conv: !transform.any_op {transform.consumed})
      -> !transform.any_op {
    %forall, %fill = transform.include @tile_epilogue failures(propagate) (%conv)
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %blk, %new = transform.structured.fuse_into_containing_op %conv into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_conv_fill failures(suppress) (%fill, %new)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield %blk : !transform.any_op
  }
  transform.named_sequence @tile_depthwise_epilogue(%conv: !transform.any_op {transform.consumed}) {
    %forall, %fill = transform.include @tile_epilogue failures(propagate) (%conv)
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %blk, %new = transform.structured.fuse_into_containing_op %conv into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_conv_bias failures(suppress) (%fill, %new)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.include @depthwise_register_tiles failures(propagate) (%blk)
      : (!transform.any_op) -> ()
    transform.yield
  }
  // The epilogue of `conv` in blocks of output rows, rows inside; the forall and the
  // convolution's init (a fill, as a rule) for the caller to fuse into it.
  transform.named_sequence @tile_epilogue(%conv: !transform.any_op {transform.readonly})
      -> (!transform.any_op, !transform.any_op) {
    %ew = transform.get_consumers_of_result %conv[0] : (!transform.any_op) -> !transform.any_op
    %fill = transform.get_producer_of_operand %conv[2] : (!transform.any_op) -> !transform.any_op
    %blk, %forall = transform.structured.tile_using_forall %ew tile_sizes [1, 4]
      {mlirpipe.sizes = [1, "conv-rows"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:4 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 1, 64]
      {mlirpipe.sizes = [1, 1, 1, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %row "mlirpipe.row_tile" : !transform.any_op
    transform.yield %forall, %fill : !transform.any_op, !transform.any_op
  }

  // A block of a convolution (one image, some output rows) in register tiles of
  // `conv-register` (output columns x output channels) of one output row, loops over the
  // filter's rows and `conv-channels` input channels inside, each tile a 1-D convolution.
  transform.named_sequence @conv_register_tiles(%blk: !transform.any_op {transform.consumed}) {
    %reg, %rl:4 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 8, 32]
      {mlirpipe.sizes = [1, 1, "conv-register"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @conv_row_tiles failures(propagate) (%reg) : (!transform.any_op) -> ()
    transform.yield
  }
  // The same with register tiles of `conv-register-narrow`.
  transform.named_sequence @conv_register_tiles_narrow(%blk: !transform.any_op {transform.consumed}) {
    %reg, %rl:4 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 8, 16]
      {mlirpipe.sizes = [1, 1, "conv-register-narrow"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @conv_row_tiles failures(propagate) (%reg) : (!transform.any_op) -> ()
    transform.yield
  }
  // A register tile: loops over the filter's rows and `conv-channels` input channels, inside
  // them a 1-D convolution.
  transform.named_sequence @conv_row_tiles(%reg: !transform.any_op {transform.consumed}) {
    %red, %kl:2 = transform.structured.tile_using_for %reg tile_sizes [0, 0, 0, 0, 1, 0, 1]
      {mlirpipe.sizes = [0, 0, 0, 0, 1, 0, "conv-channels"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %row = transform.structured.decompose %red : (!transform.any_op) -> !transform.any_op
    transform.annotate %row "mlirpipe.conv_tile" : !transform.any_op
    transform.yield
  }
  // A block of a depthwise convolution in register tiles of `depthwise-register` (output
  // columns x channels) of one output row, a loop over the filter's rows inside, each tile a
  // 1-D depthwise convolution.
  transform.named_sequence @depthwise_register_tiles(%blk: !transform.any_op {transform.consumed}) {
    %reg, %rl:4 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 8, 32]
      {mlirpipe.sizes = [1, 1, "depthwise-register"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %red, %kl = transform.structured.tile_using_for %reg tile_sizes [0, 0, 0, 0, 1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row = transform.structured.decompose %red : (!transform.any_op) -> !transform.any_op
    transform.annotate %row "mlirpipe.conv_tile" : !transform.any_op
    transform.yield
  }

  // The zero fill of a convolution's result, or its bias broadcast along N, H and W
  // (mlirpipe-conv-to-nhwc made it), fused into a block and tiled like its register tiles.
  transform.named_sequence @fuse_conv_fill(%fill: !transform.any_op {transform.consumed},
                                           %forall: !transform.any_op {transform.readonly}) {
    transform.match.operation_name %fill ["linalg.fill", "linalg.broadcast"] : !transform.any_op
    %fused, %new = transform.structured.fuse_into_containing_op %fill into %forall
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %t, %l:4 = transform.structured.tile_using_for %fused tile_sizes [1, 1, 8, 32]
      {mlirpipe.sizes = [1, 1, "conv-register"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %t "mlirpipe.panel_fill" : !transform.any_op
    transform.yield
  }

  // A depthwise convolution's bias, as fuse_conv_fill (its zero fill, and a pooling's, stay
  // a pass of their own).
  transform.named_sequence @fuse_conv_bias(%bias: !transform.any_op {transform.consumed},
                                           %forall: !transform.any_op {transform.readonly}) {
    transform.match.operation_name %bias ["linalg.broadcast"] : !transform.any_op
    transform.include @fuse_conv_fill failures(propagate) (%bias, %forall)
      : (!transform.any_op, !transform.any_op) -> ()
    transform.yield
  }

  // An elementwise op: blocks of `elementwise-block` along its first dimension (rank 1 and 2)
  // or its second (rank 3 and 4: batch, channels) as scf.forall, rows of up to
  // `elementwise-row` elements of its last dimension inside them.
  transform.named_sequence @tile_elementwise_1d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [512]
      {mlirpipe.sizes = ["elementwise-1d-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l = transform.structured.tile_using_for %blk tile_sizes [64]
      {mlirpipe.sizes = ["elementwise-row"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.annotate %row "mlirpipe.row_tile" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @tile_elementwise_2d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [8]
      {mlirpipe.sizes = ["elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:2 = transform.structured.tile_using_for %blk tile_sizes [1, 64]
      {mlirpipe.sizes = [1, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %row "mlirpipe.row_tile" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @tile_elementwise_3d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8]
      {mlirpipe.sizes = [1, "elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:3 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 64]
      {mlirpipe.sizes = [1, 1, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %row "mlirpipe.row_tile" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @tile_elementwise_4d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8]
      {mlirpipe.sizes = [1, "elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:4 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 1, 64]
      {mlirpipe.sizes = [1, 1, 1, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %row "mlirpipe.row_tile" : !transform.any_op
    transform.yield
  }
  // (rank 5: only transposes that keep their last dimension, as q, k and v split from one
  // projection)
  transform.named_sequence @tile_elementwise_5d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8]
      {mlirpipe.sizes = [1, "elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:5 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 1, 1, 64]
      {mlirpipe.sizes = [1, 1, 1, 1, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %row "mlirpipe.row_tile" : !transform.any_op
    transform.yield
  }

  // The last op of a chain that reads a row statistic, in blocks of `row-chain-rows` rows
  // (ranks 3 and 4: of one sequence, one head) as scf.forall, the chain fused into each.
  transform.named_sequence @fuse_row_chain_2d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.fuse %op tile_sizes [8, 0]
      {apply_cleanup, use_forall, mlirpipe.sizes = ["row-chain-rows", 0]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @clean_row_chain_block failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @fuse_row_chain_3d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.fuse %op tile_sizes [1, 8, 0]
      {apply_cleanup, use_forall, mlirpipe.sizes = [1, "row-chain-rows", 0]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @clean_row_chain_block failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @fuse_row_chain_4d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.fuse %op tile_sizes [1, 1, 8, 0]
      {apply_cleanup, use_forall, mlirpipe.sizes = [1, 1, "row-chain-rows", 0]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @clean_row_chain_block failures(propagate) (%forall) : (!transform.any_op) -> ()
    transform.yield
  }
  // A chain's block: an op read twice computed once (CSE), the chain's empty tensors folded.
  transform.named_sequence @clean_row_chain_block(%forall: !transform.any_op {transform.readonly}) {
    transform.apply_cse to %forall : !transform.any_op
    transform.apply_patterns to %forall {
      transform.apply_patterns.tensor.fold_tensor_empty
    } : !transform.any_op
    transform.yield
  }

  // A reduction of the last dimension: blocks of `elementwise-block` rows (ranks 3 and 4: of
  // channels) as scf.forall, then row by row, each row's reduction split into `elementwise-row`
  // lanes (tile_reduction_using_for): a vector of partial results carried through a loop over
  // the row's chunks (contiguous reads, one vector op a chunk), reduced across the lanes once at
  // the end of the row. Fails, and leaves the rows as they are, when the combiner is not one the
  // split knows (the maximum and its index of torch's max(dim)).
  transform.named_sequence @tile_row_reduction_2d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [8]
      {mlirpipe.sizes = ["elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l = transform.structured.tile_using_for %blk tile_sizes [1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fill, %lanes, %merge, %chunks = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 64] {mlirpipe.sizes = [0, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @mark_row_reduction failures(propagate) (%fill, %lanes, %merge)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @tile_row_reduction_3d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8]
      {mlirpipe.sizes = [1, "elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:2 = transform.structured.tile_using_for %blk tile_sizes [1, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill, %lanes, %merge, %chunks = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 64] {mlirpipe.sizes = [0, 0, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @mark_row_reduction failures(propagate) (%fill, %lanes, %merge)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @tile_row_reduction_4d(%op: !transform.any_op {transform.consumed}) {
    %blk, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8]
      {mlirpipe.sizes = [1, "elementwise-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %row, %l:3 = transform.structured.tile_using_for %blk tile_sizes [1, 1, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill, %lanes, %merge, %chunks = transform.structured.tile_reduction_using_for %row
      by tile_sizes = [0, 0, 0, 64] {mlirpipe.sizes = [0, 0, 0, "elementwise-row"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @mark_row_reduction failures(propagate) (%fill, %lanes, %merge)
      : (!transform.any_op, !transform.any_op, !transform.any_op) -> ()
    transform.yield
  }
  transform.named_sequence @mark_row_reduction(%fill: !transform.any_op {transform.readonly},
                                               %lanes: !transform.any_op {transform.readonly},
                                               %merge: !transform.any_op {transform.readonly}) {
    transform.annotate %fill "mlirpipe.row_tile" : !transform.any_op
    transform.annotate %lanes "mlirpipe.row_tile" : !transform.any_op
    transform.annotate %merge "mlirpipe.row_tile" : !transform.any_op
    transform.yield
  }

  // A row of an elementwise op as vectors (failing, and left as it is, when its body has an op
  // the vectorizer does not take, e.g. cf.assert).
  transform.named_sequence @vectorize_row(%op: !transform.any_op {transform.consumed}) {
    transform.structured.vectorize %op : !transform.any_op
    transform.yield
  }

  // A matmul on panels of B (mlirpipe-pack-matmul made it a linalg.contract over the loops
  // panel, m, column in panel, k): blocks of `block-panels` (panels x rows) as scf.forall,
  // register tiles of `register-mn-panels` rows of one panel's columns (scf.for, C's fill
  // fused into each: structured.fuse follows C through the loops to the block's fill), the k
  // loop inside each. A fill of the whole block before its tiles was a pass of stores alone,
  // each waiting for its line of C from memory (1.4x torch at K = 128, 1.2x at K = 768).
  transform.named_sequence @tile_panel_matmul(%mm: !transform.any_op {transform.consumed}) {
    %init = transform.get_operand %mm[2] : (!transform.any_op) -> !transform.any_value
    %blk, %forall = transform.structured.tile_using_forall %mm tile_sizes [16, 64]
      {mlirpipe.sizes = ["block-panels"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_block_fill failures(suppress) (%init, %forall)
      : (!transform.any_value, !transform.any_op) -> ()
    %tile, %tl:3 = transform.structured.fuse %blk tile_sizes [1, 8, 32, 0]
      {mlirpipe.sizes = [1, "register-mn-panels", 0]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %reg, %kl = transform.structured.tile_using_for %tile tile_sizes [0, 0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.annotate %reg "mlirpipe.panel_register_tile" : !transform.any_op
    transform.yield
  }

  // A matmul on panels of B and strips of A (the contract's loops: panel, strip, row in strip,
  // column in panel, k): blocks of `block-strips` (panels x strips) as scf.forall, a k loop of
  // `k-block-strips`, register tiles of one strip by one panel (static: the packing's sizes),
  // strip by strip.
  transform.named_sequence @tile_strip_matmul(%mm: !transform.any_op {transform.consumed}) {
    %init = transform.get_operand %mm[2] : (!transform.any_op) -> !transform.any_value
    %blk, %forall = transform.structured.tile_using_forall %mm tile_sizes [16, 16]
      {mlirpipe.sizes = ["block-strips"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.include @fuse_strip_fill failures(suppress) (%init, %forall)
      : (!transform.any_value, !transform.any_op) -> ()
    %kb, %kl = transform.structured.tile_using_for %blk tile_sizes [0, 0, 0, 0, 256]
      {mlirpipe.sizes = [0, 0, 0, 0, "k-block-strips"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %reg, %rl:3 = transform.structured.tile_using_for %kb tile_sizes [1, 1, 0, 0, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %reg "mlirpipe.strip_register_tile" : !transform.any_op
    transform.yield
  }

  // The zero fill of C in strips and panels, fused into a block: one row of a panel a vector.
  transform.named_sequence @fuse_strip_fill(%init: !transform.any_value {transform.readonly},
                                            %forall: !transform.any_op {transform.readonly}) {
    %fill = transform.get_defining_op %init : (!transform.any_value) -> !transform.any_op
    // none when C is a function's argument
    transform.foreach %fill : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.match.operation_name %one ["linalg.fill"] : !transform.any_op
      %fused, %new = transform.structured.fuse_into_containing_op %one into %forall
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %t, %l:3 = transform.structured.tile_using_for %fused tile_sizes [1, 1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.annotate %t "mlirpipe.panel_fill" : !transform.any_op
    }
    transform.yield
  }

  // The zero fill of C fused into a block as it is; the register tiles fuse it into theirs.
  transform.named_sequence @fuse_block_fill(%init: !transform.any_value {transform.readonly},
                                            %forall: !transform.any_op {transform.readonly}) {
    %fill = transform.get_defining_op %init : (!transform.any_value) -> !transform.any_op
    // none when C is a function's argument
    transform.foreach %fill : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.match.operation_name %one ["linalg.fill"] : !transform.any_op
      %fused, %new = transform.structured.fuse_into_containing_op %one into %forall
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      transform.annotate %fused "mlirpipe.panel_tile_fill" : !transform.any_op
    }
    transform.yield
  }

  // The packing of B (or A): a pad, a reshape and a linalg.transpose into panels (strips),
  // `copy-panels` at a time per thread (scf.forall), each copied by vectors of 8 of its rows.
  transform.named_sequence @copy_panels(%pack: !transform.any_op {transform.consumed}) {
    %p = transform.cast %pack : !transform.any_op to !transform.op<"linalg.pack">
    %pad, %expand, %transpose = transform.structured.lower_pack %p
      : (!transform.op<"linalg.pack">)
      -> (!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, !transform.op<"linalg.transpose">)
    %share, %forall = transform.structured.tile_using_forall %transpose tile_sizes [8, 0, 0]
      {mlirpipe.sizes = ["copy-panels", 0, 0]}
      : (!transform.op<"linalg.transpose">) -> (!transform.any_op, !transform.any_op)
    %t, %l:2 = transform.structured.tile_using_for %share tile_sizes [1, 8, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %t "mlirpipe.panel_copy" : !transform.any_op
    transform.yield
  }

  // A batch matmul's blocks with the zero fill of C fused in, the block marked: its k loop and
  // register tiles once the function is canonicalized.
  transform.named_sequence @block_batch_matmul(%mm: !transform.any_op {transform.consumed}) {
    %init = transform.get_operand %mm[2] : (!transform.any_op) -> !transform.any_value
    %blk, %forall = transform.structured.tile_using_forall %mm tile_sizes [1, 64, 256]
      {mlirpipe.sizes = [1, "block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.annotate %blk "mlirpipe.batch_block" : !transform.any_op
    transform.include @fuse_batch_fill failures(suppress) (%init, %forall)
      : (!transform.any_value, !transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @tile_batch_block(%blk: !transform.any_op {transform.consumed}) {
    %kb, %kl = transform.structured.tile_using_for %blk tile_sizes [0, 0, 0, 256]
      {mlirpipe.sizes = [0, 0, 0, "k-block"]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %reg, %rl:4 = transform.structured.tile_using_for %kb tile_sizes [1, 8, 32, 1]
      {mlirpipe.sizes = [1, "register"]}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.annotate %reg "mlirpipe.batch_register_tile" : !transform.any_op
    transform.yield
  }

  // The zero fill of C, fused into a block and tiled like C's register tiles (fails, and is
  // skipped, when C is not filled by a linalg.fill: a bias copied in, a function argument).
  transform.named_sequence @fuse_fill(%init: !transform.any_value {transform.readonly},
                                      %forall: !transform.any_op {transform.readonly},
                                      %blk: !transform.any_op {transform.readonly}) {
    %fill = transform.get_defining_op %init : (!transform.any_value) -> !transform.any_op
    // none when C is a function's argument
    transform.foreach %fill : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.match.operation_name %one ["linalg.fill"] : !transform.any_op
      %fused, %new = transform.structured.fuse_into_containing_op %one into %forall
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %t, %l:2 = transform.structured.tile_using_for %fused tile_sizes [8, 32]
        {mlirpipe.sizes = ["register-mn"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
      transform.annotate %t "mlirpipe.fill_tile" : !transform.any_op
    }
    transform.yield
  }

  transform.named_sequence @fuse_batch_fill(%init: !transform.any_value {transform.readonly},
                                            %forall: !transform.any_op {transform.readonly}) {
    %fill = transform.get_defining_op %init : (!transform.any_value) -> !transform.any_op
    // none when C is a function's argument
    transform.foreach %fill : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.match.operation_name %one ["linalg.fill"] : !transform.any_op
      %fused, %new = transform.structured.fuse_into_containing_op %one into %forall
        : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
      %t, %l:3 = transform.structured.tile_using_for %fused tile_sizes [1, 8, 32]
        {mlirpipe.sizes = [1, "register-mn"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      transform.annotate %t "mlirpipe.batch_fill_tile" : !transform.any_op
    }
    transform.yield
  }

  // Register tiles to vector ops (masked where a tile is partial), then every other op with
  // static shapes inside the tiled loops; the accumulator leaves the k loop (on tensors).
  transform.named_sequence @vectorize_tiles(%f: !transform.any_op {transform.consumed})
      -> !transform.any_op {
    %reg = transform.structured.match attributes{mlirpipe.register_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %reg vector_sizes [8, 32, 1]
      {mlirpipe.sizes = ["register"], create_named_contraction} : !transform.any_op
    %preg = transform.structured.match attributes{mlirpipe.panel_register_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %preg vector_sizes [1, 8, 32, 1]
      {mlirpipe.sizes = [1, "register-panels"], create_named_contraction} : !transform.any_op
    %sreg = transform.structured.match attributes{mlirpipe.strip_register_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %sreg {create_named_contraction} : !transform.any_op
    %copies = transform.structured.match attributes{mlirpipe.panel_copy} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %copies : !transform.any_op
    // A convolution's bias, with masks: its input is a slice of the bias's channels, partial
    // where a register tile's channels are.
    %bias = transform.structured.match ops{["linalg.broadcast"]} attributes{mlirpipe.panel_fill}
      in %f : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %bias vector_sizes [1, 1, 8, 32]
      {mlirpipe.sizes = [1, 1, "conv-register"]} : !transform.any_op
    %tfill = transform.structured.match attributes{mlirpipe.panel_tile_fill} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %tfill : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      transform.include @vectorize_row failures(suppress) (%one) : (!transform.any_op) -> ()
    }
    %pfill = transform.structured.match attributes{mlirpipe.panel_fill} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %pfill : !transform.any_op
    %breg = transform.structured.match attributes{mlirpipe.batch_register_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %breg vector_sizes [1, 8, 32, 1]
      {mlirpipe.sizes = [1, "register"], create_named_contraction} : !transform.any_op
    %conv = transform.structured.match attributes{mlirpipe.conv_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    // (none for a convolution of one block of rows: canonicalization folded its forall away)
    %conv_blocks = transform.get_parent_op %conv
      {op_name = "scf.forall", deduplicate, allow_empty_results}
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %conv : !transform.any_op
    // The register tile's write folded into the block it came from (then its accumulator can
    // leave the loops over the filter's rows and the input channels).
    transform.apply_patterns to %conv_blocks {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %rows = transform.structured.match attributes{mlirpipe.row_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %rows : !transform.any_op {
    ^bb0(%row: !transform.any_op):
      transform.include @vectorize_row failures(suppress) (%row) : (!transform.any_op) -> ()
    }
    // The tiles of the transposes around convolutions (tile-transposes made them) that
    // mlirpipe-mark-elementwise marked (static shapes, bytes or wider): one transfer_read (the
    // tile's columns gathered) and one transfer_write each; a partial tile at the edge of an
    // image, or one of i1, stays a loop nest.
    %transposes = transform.structured.match attributes{mlirpipe.transpose_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %transposes : !transform.any_op {
    ^bb0(%t: !transform.any_op):
      transform.include @vectorize_tile failures(suppress) (%t) : (!transform.any_op) -> ()
    }
    %fill = transform.structured.match attributes{mlirpipe.fill_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fill vector_sizes [8, 32]
      {mlirpipe.sizes = ["register-mn"]} : !transform.any_op
    %bfill = transform.structured.match attributes{mlirpipe.batch_fill_tile} in %f
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %bfill vector_sizes [1, 8, 32]
      {mlirpipe.sizes = [1, "register-mn"]} : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
    } : !transform.any_op
    %hoisted = transform.apply_registered_pass "loop-invariant-subset-hoisting" to %f
      : (!transform.any_op) -> !transform.any_op
    transform.yield %hoisted : !transform.any_op
  }

  // One tile vectorized; a silenceable failure when the vectorizer refuses it.
  transform.named_sequence @vectorize_tile(%op: !transform.any_op {transform.consumed}) {
    transform.structured.vectorize %op : !transform.any_op
    transform.yield
  }

  // vector.contract -> outer products -> vector.fma, n-D transfers to 1-D ones, a
  // vector.multi_reduction to vector.reduction of its rows. No
  // canonicalization after this: it folds the accumulator's rows back into scalars.
  transform.named_sequence @lower_vectors(%f: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_masked_transfers
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.reorder_multi_reduction_dims lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.multi_reduction_flattening lowering_strategy = "innerreduction"
      transform.apply_patterns.vector.multi_reduction_unrolling lowering_strategy = "innerreduction"
    } : !transform.any_op
    transform.yield
  }

  // Stage tile-transposes: the transposes around convolutions (images to NHWC, results back to
  // NCHW) in tiles of `transpose-tile` x `transpose-tile` of the two dimensions they swap
  // (channels and image columns), each tile still a loop nest but its cache lines read and
  // written whole: untiled, a result of 128 channels back to NCHW read each line once per channel
  // (1.6 MB apart, out of L1 and L2 between two uses). The tiles are an scf.forall (shared among
  // threads): its result is the transpose's buffer itself, where an scf.for nest's result was
  // copied into the caller's buffer when the transpose was the function's result.
  transform.named_sequence @tile_transposes(%root: !transform.any_op {transform.readonly}) {
    %to_nchw = transform.structured.match ops{["linalg.transpose"]}
      attributes{permutation = array<i64: 0, 3, 1, 2>} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %to_nchw : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %tile, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8, 1, 8]
        {mlirpipe.sizes = [1, "transpose-tile", 1, "transpose-tile"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    %to_nhwc = transform.structured.match ops{["linalg.transpose"]}
      attributes{permutation = array<i64: 0, 2, 3, 1>} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %to_nhwc : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %tile, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 1, 8, 8]
        {mlirpipe.sizes = [1, 1, "transpose-tile", "transpose-tile"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    // The transposes of the last two dimensions (an attention's keys for q @ k^T: each head's
    // rows of 64 floats to columns) likewise.
    %swap2 = transform.structured.match ops{["linalg.transpose"]}
      attributes{permutation = array<i64: 1, 0>} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %swap2 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %tile, %forall = transform.structured.tile_using_forall %op tile_sizes [8, 8]
        {mlirpipe.sizes = ["transpose-tile", "transpose-tile"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    %swap3 = transform.structured.match ops{["linalg.transpose"]}
      attributes{permutation = array<i64: 0, 2, 1>} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %swap3 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %tile, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 8, 8]
        {mlirpipe.sizes = [1, "transpose-tile", "transpose-tile"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    %swap4 = transform.structured.match ops{["linalg.transpose"]}
      attributes{permutation = array<i64: 0, 1, 3, 2>} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %swap4 : !transform.any_op {
    ^bb0(%op: !transform.any_op):
      %tile, %forall = transform.structured.tile_using_forall %op tile_sizes [1, 1, 8, 8]
        {mlirpipe.sizes = [1, 1, "transpose-tile", "transpose-tile"]}
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    transform.yield
  }
}
