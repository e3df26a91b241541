"""templates/kernels/reference/depthwise_conv2d_s8.c.j2: TFLM's DepthwiseConvPerChannel; its
in-place alternative depthwise_conv2d_inplace_s8 takes the same parameter block."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.inplace import allow_depthwise_inplace
from codegen.kernels.linear import DepthwiseShape, OutputStage, weights
from codegen.kernels.reference.conv2d_s8 import QUANT_HEADERS, int8_linear_fields
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS8(DepthwiseShape, OutputStage):
    input_zp: int
    multiplier: ConstArray
    shift: ConstArray


@kernel_spec
class DepthwiseConv2dS8Reference(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s8", "reference", DepthwiseConv2dS8, QUANT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        w = weights(request, ctx)
        ins = (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]))
        fields, bias = int8_linear_fields(request, ctx, w.reshape(-1, w.shape[3]).T)  # a row of taps per channel
        return Prepared(cls.Params(**request.params, **fields), ins + (bias, ctx.tensor(node.outputs[0])),
                        cls.headers)

    @classmethod
    def declare(cls, call, ctx):
        allow_depthwise_inplace(ctx, call, itemsize=1, alternative=DepthwiseConv2dInplaceS8.kernel)


@kernel_spec
class DepthwiseConv2dInplaceS8(KernelSpec):
    """templates/kernels/reference/depthwise_conv2d_inplace_s8.c.j2: chosen only in place of
    depthwise_conv2d_s8 once the memory plan took its pair (codegen/kernels/select.planned)."""

    kernel, variant, Params, headers = "depthwise_conv2d_inplace_s8", "reference", DepthwiseConv2dS8, QUANT_HEADERS

    @classmethod
    def accepts(cls, request):
        return False  # never requested: the alternative of depthwise_conv2d_s8
