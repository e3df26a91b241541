"""templates/kernels/reference/conv2d_s8.c.j2: TFLM's ConvPerChannel, the input offset folded
into the bias, multipliers and shifts one per output channel."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.inplace import allow_conv_overlap
from codegen.kernels.linear import ConvShape, OutputStage, output_stage, quant, weights
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray

QUANT_HEADERS = ("kiln_quant.h",)


@dataclass(frozen=True)
class Conv2dS8(ConvShape, OutputStage):
    input_zp: int  # what a padding tap reads
    multiplier: ConstArray  # int32 per output channel: TFLM's quantized multiplier and shift
    shift: ConstArray


def int8_linear_fields(request, ctx, rows, fc_per_tensor: bool = False) -> tuple[dict, ConstArray]:
    """The int8 fields of a reference linear kernel and its folded bias constant; multipliers
    and shifts are flash arrays of one entry per output channel (repeated when the weights
    have a single scale), so every reference int8 linear kernel has one code path."""
    node = request.node
    p, folded = quant(request, ctx, rows, fc_per_tensor)
    fields = {**output_stage(p), "input_zp": p.input_zp,
              "multiplier": ctx.constant(node, "multiplier", p.multiplier, "int32"),
              "shift": ctx.constant(node, "shift", p.shift, "int32")}
    return fields, ctx.constant(node, "bias", folded, "int32")


@kernel_spec
class Conv2dS8Reference(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s8", "reference", Conv2dS8, QUANT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        w = weights(request, ctx)
        ins = (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]))
        fields, bias = int8_linear_fields(request, ctx, w.reshape(w.shape[0], -1))
        return Prepared(cls.Params(**request.params, **fields), ins + (bias, ctx.tensor(node.outputs[0])),
                        cls.headers)

    @classmethod
    def declare(cls, call, ctx):
        allow_conv_overlap(ctx, call, itemsize=1)
