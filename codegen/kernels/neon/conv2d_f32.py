"""templates/kernels/neon/conv2d_f32.c.j2: four windows at a time, read in place through a
table of runs (kernel rows, or taps at the border; zeros for the padding), against packed
weight panels (codegen/kernels/repack_f32.gemm_panels); or, for the 3x3 stride-1 layers where
its estimate wins, Winograd F(2x2, 3x3) (codegen/kernels/neon/winograd_f32.py). Weights and
bias must be constants."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.inplace import allow_conv_overlap, allow_overlap_from
from codegen.kernels.linear import ConvShape, FloatClamp
from codegen.kernels.neon import winograd_f32
from codegen.kernels.repack_f32 import ROWS, gemm_panels, neon_constant

GEMM_HEADER = "kiln_neon_f32.h"  # the 4x16 register tile of templates/kernels/neon/_gemm_f32.c.j2
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ScratchArg


@dataclass(frozen=True)
class Conv2dF32Neon(ConvShape, FloatClamp):
    depth: int  # k_h * k_w * in_c: one panel row per step
    pointwise: bool  # 1x1, unpadded: the input pixels are the rows, no im2col
    winograd: bool  # 3x3, stride 1, undilated: by Winograd F(2x2, 3x3)


def panels(request, ctx, winograd: bool = False):
    """The request's weights and bias as NEON's panels (the Winograd positions' panels when
    `winograd`), and the direct path's accumulation depth."""
    node = request.node
    w = neon_constant(node, ctx, 1, "weights")
    rows = w.reshape(w.shape[0], -1)
    bias = neon_constant(node, ctx, 2, "bias")
    bias = np.zeros(rows.shape[0], np.float32) if bias is None else bias.reshape(-1)
    packed = winograd_f32.winograd_panels(w, bias) if winograd else gemm_panels(rows, bias)
    return ctx.constant(node, "w", packed, "float32"), rows.shape[1]


@kernel_spec
class Conv2dF32NeonSpec(KernelSpec):
    kernel, variant, Params = "conv2d_f32", "neon", Conv2dF32Neon

    @classmethod
    def prepare(cls, request, ctx):
        node, shape = request.node, request.params
        # its weights take 16/9 the bytes and its scratch holds 4 tiles' transforms: for speed only
        winograd = ctx.optimize == "speed" and winograd_f32.winograd_wins(shape)
        packed, depth = panels(request, ctx, winograd)
        pointwise = (shape["k_h"] == 1 and shape["k_w"] == 1 and shape["pad_top"] == 0
                     and shape["pad_left"] == 0  # and no pixel in the bottom/right padding:
                     and (shape["out_h"] - 1) * shape["stride_h"] < shape["in_h"]
                     and (shape["out_w"] - 1) * shape["stride_w"] < shape["in_w"])
        # Winograd's (winograd_f32.scratch_bytes); the direct path's: a tile's table of runs (ROWS
        # pointers per kernel tap), a kernel row of zeros, then the windows of a tile gathered at
        # the left and right border
        scratch = ScratchArg(winograd_f32.scratch_bytes(shape["in_c"], shape["out_c"]) if winograd else
                             8 * ROWS * shape["k_h"] * shape["k_w"] + 4 * shape["k_w"] * shape["in_c"]
                             + 4 * ROWS * depth)
        return Prepared(cls.Params(**shape, depth=depth, pointwise=pointwise, winograd=winograd),
                        (ctx.tensor(node.inputs[0]), packed, ctx.tensor(node.outputs[0]), scratch),
                        (*request.headers, GEMM_HEADER))

    @classmethod
    def declare(cls, call, ctx):
        if call.params["winograd"]:
            claim_paths(ctx, call, ["winograd"])
            allow_overlap_from(ctx, call, winograd_f32.overlap_shift(call.params), 4, call.params["out_c"])
        else:  # claims no path: the model's kernel renders the Winograd path only if a call takes it
            claim_paths(ctx, call, [])
            allow_conv_overlap(ctx, call, itemsize=4, tile=ROWS)  # it reads a tile's windows until it writes the tile
