"""templates/kernels/cortex_m_dsp/depthwise_conv2d_s8.c.j2: four channels per word, SXTB16
unpacking the input, SMLABB/SMLATT multiplying lane by lane."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.inplace import allow_rows_depthwise_overlap
from codegen.kernels.linear import (DSP_HEADERS, DepthwiseShape, OutputStage, depthwise_rows_bytes, dsp_requant,
                                    int8_prepared, weights)
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.lower.kernel import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS8Dsp(DepthwiseShape, OutputStage):
    input_zp: int
    rq_r2: int
    rq: ConstArray


@kernel_spec
class DepthwiseConv2dS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s8", "cortex_m_dsp", DepthwiseConv2dS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        taps = w.reshape(-1, w.shape[3])  # [KH*KW, C*M]
        rows = taps.T
        p, r2, rq = dsp_requant(request, ctx, rows, repack.round_up(rows.shape[0], 4))
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", repack.dsp_depthwise_taps(taps), "int32"),
                             depthwise_rows_bytes(request.params), rq_r2=r2, rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        allow_rows_depthwise_overlap(ctx, call, vector=4)
