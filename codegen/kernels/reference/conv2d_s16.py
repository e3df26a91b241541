"""templates/kernels/reference/conv2d_s16.c.j2: TFLM's 16x8 ConvPerChannel (int16 activations,
int8 weights, int64 bias and accumulator), multipliers and shifts one per output channel.

Zero points are 0 on the int16 tensors (codegen/ops/int8_linear.check_int16_linear), so
nothing is folded: the bias goes to the kernel as the model stores it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels.linear import ConvShape, OutputStage, output_stage
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.limits import check_shifts
from codegen.ops.request import ConstArray
from codegen.quant.linear import graph_bias, linear_int8_params

FIXEDPOINT_HEADERS = ("kiln_fixedpoint.h",)


@dataclass(frozen=True)
class Conv2dS16(ConvShape, OutputStage):
    multiplier: ConstArray  # int32 per output channel: TFLM's quantized multiplier and shift
    shift: ConstArray


def int16_linear_call(spec, request, ctx, channels: int, fc_per_tensor: bool = False) -> Prepared:
    """The call of a reference int16 linear kernel: (input, weights, int64 bias, output) and
    its block, TFLM's multipliers and shifts as flash arrays of one entry per output channel
    (repeated when the weights have a single scale)."""
    node = request.node
    p = linear_int8_params(node, ctx.g, channels, fc_per_tensor)
    check_shifts(request.kernel, "shift", p.shift, ", ".join(node.origin or (node.name,)))
    fields = {**output_stage(p), "multiplier": ctx.constant(node, "multiplier", p.multiplier, "int32"),
              "shift": ctx.constant(node, "shift", p.shift, "int32")}
    bias = ctx.constant(node, "bias", graph_bias(node, ctx.g, channels).astype(np.int64), "int64")
    args = (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), bias, ctx.tensor(node.outputs[0]))
    return Prepared(spec.Params(**request.params, **fields), args, spec.headers)


@kernel_spec
class Conv2dS16Reference(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s16", "reference", Conv2dS16, FIXEDPOINT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        return int16_linear_call(cls, request, ctx, request.params["out_c"])
