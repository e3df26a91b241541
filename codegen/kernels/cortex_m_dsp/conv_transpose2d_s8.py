"""templates/kernels/cortex_m_dsp/conv_transpose2d_s8.c.j2: TFLite Micro's int8 TRANSPOSE_CONV
(codegen/ops/conv_transpose2d.py) gathered per output pixel as the reference kernel does, its
sums over input channels by SMLAD, four output channels at a time.

Which taps reach an output pixel depends on the pixel (its phase against the strides and the
image's edges), so the input offset cannot be folded into the bias as the convolutions do:
each reaching input pixel is widened to int16 once per output pixel with the offset added
(x - zero point, within [-255, 255]; zeros for a tap past the image's edge), and the records
carry the bias as stored. The taps that can reach a pixel are those of its phase against the
strides; the weights are repacked per phase, its taps' [O, I] matrices side by side in
dsp_gemm_rows' blocks of four rows, so that four channels are one run of kiln_dsp_dot_4x1
over the phase's columns."""

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
    """The most taps of one output pixel: those of its phase, ky = oy + pad_top (mod stride_h),
    likewise kx; phase 0 has the most."""
    return -(-shape["k_h"] // shape["stride_h"]) * -(-shape["k_w"] // shape["stride_w"])


def phase_rows(w: np.ndarray, stride_h: int, stride_w: int) -> np.ndarray:
    """[O, KH, KW, I] int8 weights as, per phase (py, px) of the strides in turn, the
    dsp_gemm_rows (blocks of four) of its taps' rows end to end: [O, taps x I rounded up to 4],
    taps ky = py, py + stride_h, ... then kx likewise, the order of the kernel's columns."""
    w = np.pad(w, ((0, 0), (0, 0), (0, 0), (0, repack.round_up(w.shape[3], 4) - w.shape[3])))
    parts = []
    for py in range(min(stride_h, w.shape[1])):
        for px in range(min(stride_w, w.shape[2])):
            taps = w[:, py::stride_h, px::stride_w, :]
            parts.append(repack.dsp_gemm_rows(taps.reshape(w.shape[0], -1), block=4))
    return np.concatenate(parts)


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
        shape = dict(request.params)  # the geometry (codegen/ops/conv_transpose2d.py)
        taps = max_taps(shape)
        params = ConvTranspose2dS8Dsp(**shape, **output_stage(p), input_offset=-p.input_zp,
                                      rq_r2=int(repack.dsp_requant_r2(p.multiplier, p.shift)), c4=c4, o4=o4,
                                      max_taps=taps, rq=ctx.constant(node, "rq", records, "int32"))
        packed = ctx.constant(node, "w", phase_rows(w, shape["stride_h"], shape["stride_w"]), "int32")
        args = (ctx.tensor(node.inputs[0]), packed, ctx.tensor(node.outputs[0]), ScratchArg(2 * taps * c4))
        return Prepared(params, args, cls.headers)
