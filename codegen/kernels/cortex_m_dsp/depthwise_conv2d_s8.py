"""templates/kernels/cortex_m_dsp/depthwise_conv2d_s8.c.j2: four channels per word, SXTB16
unpacking the input, SMLABB/SMLATT multiplying lane by lane."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.cortex_m_dsp.conv2d_s8 import DSP_LOOP_HEADERS
from codegen.kernels.cortex_m_dsp.paths import claim_paths
from codegen.kernels.inplace import allow_rows_depthwise_overlap
from codegen.kernels.linear import (DepthwiseShape, OutputStage, depthwise_rows_bytes, depthwise_rows_path,
                                    dsp_requant, int8_prepared, weights)
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS8Dsp(DepthwiseShape, OutputStage):
    input_zp: int
    rq_r2: int
    ring: int  # 1: the widened ring-rows path (ring_path)
    rq: ConstArray


def ring_path(shape: dict, r2: bool) -> bool:
    """Whether the kernel takes its ring path (kiln_depthwise_conv2d_s8_ring): a 3x3 window,
    dilation 1, depth multiplier 1, channels a multiple of 4, every channel shifting right by
    2 or more. It reads each output row's input rows into scratch before writing the row, as
    the padded-rows path does, so the overlaps declared below hold for it."""
    return (shape["k_h"] == 3 and shape["k_w"] == 3 and shape["dilation_h"] == 1 and shape["dilation_w"] == 1
            and shape["depth_multiplier"] == 1 and shape["in_c"] % 4 == 0 and r2)


def ring_bytes(shape: dict) -> int:
    """The ring path's scratch: three input rows as wide as one output row's windows reach,
    padding included, widened to int16."""
    reach_w = (shape["out_w"] - 1) * shape["stride_w"] + 3
    return 3 * reach_w * shape["in_c"] * 2


def template_paths(params: dict) -> set[str]:
    """The template's paths a call with parameter block `params` takes (paths.py), as the
    kernel tests them: the ring; the general loop (depth multiplier, channels not a multiple
    of 4); else the padded rows where the layer needs them, and per pixel the dilated 3x3 or
    k_h x 1 assembly loops or the C loop."""
    if params["ring"]:
        return {"ring"}
    if params["depth_multiplier"] != 1 or params["in_c"] % 4:
        return {"generic"}
    r2 = bool(params["rq_r2"])
    per_pixel = ("3x3_r2" if r2 and params["k_h"] == 3 and params["k_w"] == 3
                 else "col_r2" if r2 and params["k_w"] == 1 else "pixel")
    return {per_pixel} | ({"rows"} if depthwise_rows_path(params) else set())


@kernel_spec
class DepthwiseConv2dS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s8", "cortex_m_dsp", DepthwiseConv2dS8Dsp, DSP_LOOP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
        rows = taps.T
        p, r2, rq = dsp_requant(request, ctx, rows, repack.round_up(rows.shape[0], 4))
        ring = ring_path(request.params, r2) and not ctx.compact_kernels  # --ram-limit may ask for less scratch
        scratch = ring_bytes(request.params) if ring else depthwise_rows_bytes(request.params)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", repack.dsp_depthwise_taps(taps), "int32"),
                             scratch, rq_r2=r2, ring=int(ring), rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        allow_rows_depthwise_overlap(ctx, call, vector=4)
        claim_paths(ctx, call, template_paths(call.params) | ({"small"} if ctx.optimize == "size" else set()))
