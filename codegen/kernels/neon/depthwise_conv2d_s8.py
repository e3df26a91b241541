"""templates/kernels/neon/depthwise_conv2d_s8.c.j2: weights as stored; scratch: a row of
input_zp (what padding taps read), then per tap of the window a pointer, an offset and 16
bytes (eight channels' weights twice)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.neon.conv2d_s8 import shifts_right
from codegen.kernels.linear import NEON_HEADERS, DepthwiseShape, OutputStage, int8_prepared, vector_requant, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS8Neon(DepthwiseShape, OutputStage):
    input_zp: int
    zp_row_bytes: int  # the input_zp row, channels rounded up to 16
    pairs: bool  # products summed in int16 pairs: no weight is -128
    rq: ConstArray
    right: int  # every channel shifts right by 1 or more (neon/conv2d_s8.shifts_right)


@kernel_spec
class DepthwiseConv2dS8NeonSpec(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s8", "neon", DepthwiseConv2dS8Neon, NEON_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w, shape = request.node, weights(request, ctx), request.params
        taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
        p, rq = vector_requant(request, ctx, taps.T)
        zp_row = repack.round_up(shape["in_c"], 16)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", taps, "int8"),
                             zp_row + (8 + 4 + 16) * shape["k_h"] * shape["k_w"],
                             zp_row_bytes=zp_row, pairs=not (taps == -128).any(), rq=rq,
                             right=shifts_right(p))
