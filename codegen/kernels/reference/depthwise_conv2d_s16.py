"""templates/kernels/reference/depthwise_conv2d_s16.c.j2: TFLM's 16x8 DepthwiseConvPerChannel
(int16 activations, int8 weights, int64 bias and accumulator)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import DepthwiseShape, OutputStage
from codegen.kernels.reference.conv2d_s16 import FIXEDPOINT_HEADERS, int16_linear_call
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS16(DepthwiseShape, OutputStage):
    multiplier: ConstArray
    shift: ConstArray


@kernel_spec
class DepthwiseConv2dS16Reference(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s16", "reference", DepthwiseConv2dS16, FIXEDPOINT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        channels = request.params["in_c"] * request.params["depth_multiplier"]
        return int16_linear_call(cls, request, ctx, channels)
