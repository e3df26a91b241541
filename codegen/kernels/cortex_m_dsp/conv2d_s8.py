"""templates/kernels/cortex_m_dsp/conv2d_s8.c.j2: im2col of two output pixels into int16
scratch columns, then a 2x2 SMLAD tile (channels x pixels)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels import repack
from codegen.kernels.inplace import allow_pair_conv_overlap
from codegen.kernels.linear import DSP_HEADERS, ConvShape, OutputStage, dsp_requant, int8_prepared, weights
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.lower.kernel import ConstArray


@dataclass(frozen=True)
class Conv2dS8Dsp(ConvShape, OutputStage):
    input_zp: int
    rq_r2: int  # every channel shifts right by 2 or more: kiln_dsp_requant_r2
    k4: int  # window length rounded up to a multiple of 4
    rq: ConstArray  # per output channel (rounded up to even): folded bias, kiln_dsp_requant's words


@kernel_spec
class Conv2dS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s8", "cortex_m_dsp", Conv2dS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        rows = w.reshape(w.shape[0], -1)
        k4, o2 = repack.round_up(rows.shape[1], 4), repack.round_up(rows.shape[0], 2)
        p, r2, rq = dsp_requant(request, ctx, rows, o2)
        return int8_prepared(cls, request, ctx, p, ctx.constant(node, "w", repack.dsp_gemm_rows(rows), "int32"),
                             2 * 2 * k4 + 2 * 4 * o2,  # two int16 columns, two pixels' accumulators
                             rq_r2=r2, k4=k4, rq=rq)

    @classmethod
    def declare(cls, call, ctx):
        allow_pair_conv_overlap(ctx, call)
