"""templates/kernels/reference/conv_transpose2d_quantized.c.j2: TFLite Micro's int8 and 16x8
TRANSPOSE_CONV (kernels conv_transpose2d_s8, conv_transpose2d_s16; codegen/ops/conv_transpose2d.py
gives the geometry): TFLM's per-channel output stage, arguments input, weights, bias as stored
(int32 / int64; zeros without one), output."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels.linear import ConvShape, OutputStage, output_stage
from codegen.kernels.spec import KernelFamily, Prepared, kernel_family, make_block
from codegen.ops.request import ConstArray
from codegen.quant.linear import linear_int8_params


@dataclass(frozen=True)
class ConvTransposeQuantized(ConvShape, OutputStage):
    input_offset: int  # -zero point of the input (0 for int16)
    multiplier: ConstArray  # int32 per output channel: TFLM's quantized multiplier and shift
    shift: ConstArray


class ConvTransposeQuantizedFamily(KernelFamily):
    @classmethod
    def prepare(cls, request, ctx):
        node, g = request.node, ctx.g
        channels = g.values[node.inputs[1]].shape[0]
        p = linear_int8_params(node, g, channels)
        block = make_block(cls.Params, {**request.params, **output_stage(p), "input_offset": -p.input_zp,
                                        "multiplier": ctx.constant(node, "multiplier", p.multiplier, "int32"),
                                        "shift": ctx.constant(node, "shift", p.shift, "int32")})
        bias_type = cls.members[request.kernel]["A"][:-len("_t")]
        b = node.inputs[2] if len(node.inputs) > 2 else ""
        bias = ctx.tensor(b) if b else ctx.constant(node, "zero_bias", np.zeros(channels, bias_type), bias_type)
        args = (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), bias, ctx.tensor(node.outputs[0]))
        return Prepared(block, args, tuple(dict.fromkeys(tuple(request.headers) + cls.headers)))


kernel_family("conv_transpose2d_quantized", {
    "conv_transpose2d_s8": {"function": "conv_transpose2d_s8", "T": "int8_t", "A": "int32_t",
                            "requant": "kiln_requant_s8"},
    "conv_transpose2d_s16": {"function": "conv_transpose2d_s16", "T": "int16_t", "A": "int64_t",
                             "requant": "kiln_requant_s16"}},
    params=ConvTransposeQuantized, doc="TFLite Micro's int8 and 16x8 TRANSPOSE_CONV, gathered per output",
    base=ConvTransposeQuantizedFamily)
