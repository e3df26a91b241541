"""templates/kernels/neon/depthwise_conv2d_s8.c.j2: weights as stored; scratch: a row of
input_zp (what padding taps read), then per tap of the window a pointer, an offset and 16
bytes (eight channels' weights twice)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.call import KernelCall, KernelContext
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


COLUMN_TAPS = 16  # the most taps of a column copy: its weights in registers


def column_copy(params: dict) -> tuple[int, int] | None:
    """The copy of the template's column path (kiln_depthwise_conv2d_s8_columns) a call takes,
    (taps, whether the clamp bites), or None: a k_h x 1 window (2 to COLUMN_TAPS taps), depth
    multiplier 1, channels a multiple of 8, every column's window inside the image, products
    in pairs and right shifts, two output pixels or more (the template tests the same)."""
    if not (params["depth_multiplier"] == 1 and params["k_w"] == 1 and params["pad_left"] == 0
            and (params["out_w"] - 1) * params["stride_w"] < params["in_w"] and params["in_c"] % 8 == 0
            and params["pairs"] and params["right"] and 2 <= params["k_h"] <= COLUMN_TAPS
            and params["out_h"] * params["out_w"] >= 2):
        return None
    return params["k_h"], int(params["act_min"] > -128 or params["act_max"] < 127)


def claim_column_copy(ctx: KernelContext, call: KernelCall) -> None:
    """Add call's column copy to what the model's calls of this kernel render (the template
    variable column_copies, the union over them: the emitter renders a kernel from one call)."""
    same = [c for c in ctx.calls if c.kernel == call.kernel and c.variant == call.variant]
    copies = {copy for c in same for copy in dict(c.template_vars).get("column_copies", ())}
    copies |= {column_copy(call.params)} - {None}
    for c in same:
        c.template_vars = tuple(sorted({**dict(c.template_vars), "column_copies": tuple(sorted(copies))}.items()))


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

    @classmethod
    def declare(cls, call, ctx):
        claim_column_copy(ctx, call)
