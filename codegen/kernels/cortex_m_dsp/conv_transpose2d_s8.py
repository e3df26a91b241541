"""templates/kernels/cortex_m_dsp/conv_transpose2d_s8.c.j2: TFLite Micro's int8 TRANSPOSE_CONV
(codegen/ops/conv_transpose2d.py) gathered per output pixel as the reference kernel does, its
sums over input channels by SMLAD, four output channels at a time.

Which taps reach an output pixel depends on the pixel (its phase against the strides and the
image's edges), so the input offset cannot be folded into the bias as the convolutions do:
each reaching input pixel is widened to int16 once per output pixel with the offset added
(x - zero point, within [-255, 255]), and the records carry the bias as stored. The weights
are repacked per tap (ky, kx): the [O, I] matrix of the tap in dsp_gemm_rows' blocks of four
rows, so that a tap's block is one run of words for kiln_dsp_dot_4x1."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels import repack
from codegen.kernels.linear import DSP_HEADERS, ConvShape, OutputStage, output_stage, weights
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.limits import check_shifts
from codegen.ops.request import ConstArray, ScratchArg
from codegen.quant.linear import graph_bias, linear_int8_params


@dataclass(frozen=True)
class ConvTranspose2dS8Dsp(ConvShape, OutputStage):
    input_offset: int  # -zero point of the input
    rq_r2: int  # every channel shifts right by 2 or more: kiln_dsp_requant_r2
    c4: int  # in_c rounded up to a multiple of 4
    o4: int  # out_c rounded up to a multiple of 4
    max_taps: int  # the most taps that reach one output pixel: ceil(k_h / stride_h) * ceil(k_w / stride_w)
    rq: ConstArray  # per output channel (o4): the bias as stored, kiln_dsp_requant's words


def max_taps(shape: dict) -> int:
    """Taps of one output pixel: those ky with ky = oy + pad_top (mod stride_h), likewise kx."""
    return -(-shape["k_h"] // shape["stride_h"]) * -(-shape["k_w"] // shape["stride_w"])


def tap_rows(w: np.ndarray) -> np.ndarray:
    """[O, KH, KW, I] int8 weights as, per tap (ky, kx) in turn, dsp_gemm_rows of its [O, I] rows."""
    return np.concatenate([repack.dsp_gemm_rows(w[:, ky, kx, :], block=4)
                           for ky in range(w.shape[1]) for kx in range(w.shape[2])])


@kernel_spec
class ConvTranspose2dS8DspSpec(KernelSpec):
    kernel, variant, Params, headers = "conv_transpose2d_s8", "cortex_m_dsp", ConvTranspose2dS8Dsp, DSP_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node, w = request.node, weights(request, ctx)
        channels = w.shape[0]
        p = linear_int8_params(node, ctx.g, channels)
        check_shifts(request.kernel, "shift", p.shift, ", ".join(node.origin or (node.name,)))
        c4, o4 = repack.round_up(w.shape[3], 4), repack.round_up(channels, 4)
        records = repack.dsp_requant_records(graph_bias(node, ctx.g, channels), p.multiplier, p.shift, o4)
        shape = {k: v for k, v in request.params.items() if k in ConvShape.__dataclass_fields__}
        taps = max_taps(shape)
        params = ConvTranspose2dS8Dsp(**shape, **output_stage(p), input_offset=-p.input_zp,
                                      rq_r2=int(repack.dsp_requant_r2(p.multiplier, p.shift)), c4=c4, o4=o4,
                                      max_taps=taps, rq=ctx.constant(node, "rq", records, "int32"))
        args = (ctx.tensor(node.inputs[0]), ctx.constant(node, "w", tap_rows(w), "int32"),
                ctx.tensor(node.outputs[0]), ScratchArg(4 * taps + 2 * taps * c4))
        return Prepared(params, args, cls.headers)
