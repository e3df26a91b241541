"""templates/kernels/neon/conv2d_f32.c.j2: four windows at a time, read in place through a
table of runs (kernel rows, or taps at the border; zeros for the padding), against packed
weight panels (codegen/kernels/repack_f32.gemm_panels). Weights and bias must be constants."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels.inplace import allow_conv_overlap
from codegen.kernels.linear import ConvShape, FloatClamp
from codegen.kernels.repack_f32 import ROWS, gemm_panels, neon_constant

GEMM_HEADER = "kiln_neon_f32.h"  # the 4x16 register tile of templates/kernels/neon/_gemm_f32.c.j2
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ScratchArg


@dataclass(frozen=True)
class Conv2dF32Neon(ConvShape, FloatClamp):
    depth: int  # k_h * k_w * in_c: one panel row per step
    pointwise: bool  # 1x1, unpadded: the input pixels are the rows, no im2col


def panels(request, ctx):
    """The request's weights and bias as NEON's panels, and the accumulation depth."""
    node = request.node
    w = neon_constant(node, ctx, 1, "weights")
    rows = w.reshape(w.shape[0], -1)
    bias = neon_constant(node, ctx, 2, "bias")
    bias = np.zeros(rows.shape[0], np.float32) if bias is None else bias.reshape(-1)
    return ctx.constant(node, "w", gemm_panels(rows, bias), "float32"), rows.shape[1]


@kernel_spec
class Conv2dF32NeonSpec(KernelSpec):
    kernel, variant, Params = "conv2d_f32", "neon", Conv2dF32Neon

    @classmethod
    def prepare(cls, request, ctx):
        node, shape = request.node, request.params
        packed, depth = panels(request, ctx)
        pointwise = (shape["k_h"] == 1 and shape["k_w"] == 1 and shape["pad_top"] == 0
                     and shape["pad_left"] == 0  # and no pixel in the bottom/right padding:
                     and (shape["out_h"] - 1) * shape["stride_h"] < shape["in_h"]
                     and (shape["out_w"] - 1) * shape["stride_w"] < shape["in_w"])
        # a tile's table of runs (ROWS pointers per kernel tap), a kernel row of zeros, then
        # the windows of a tile gathered at the left and right border
        scratch = ScratchArg(8 * ROWS * shape["k_h"] * shape["k_w"] + 4 * shape["k_w"] * shape["in_c"]
                             + 4 * ROWS * depth)
        return Prepared(cls.Params(**shape, depth=depth, pointwise=pointwise),
                        (ctx.tensor(node.inputs[0]), packed, ctx.tensor(node.outputs[0]), scratch),
                        (*request.headers, GEMM_HEADER))

    @classmethod
    def declare(cls, call, ctx):
        allow_conv_overlap(ctx, call, itemsize=4, tile=ROWS)  # it reads a tile's windows until it writes the tile
