"""templates/kernels/reference/depthwise_conv2d_f32.c.j2, and its in-place alternative
depthwise_conv2d_inplace_f32 with the same parameter block."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.inplace import allow_depthwise_inplace
from codegen.kernels.linear import DepthwiseShape, FloatClamp
from codegen.ops.conv2d import float_bias_arg
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec


@dataclass(frozen=True)
class DepthwiseConv2dF32(DepthwiseShape, FloatClamp):
    pass


def depthwise_f32_args(request, ctx) -> tuple:
    """Input, weights as stored ([1,KH,KW,C*M]), bias (zeros when absent), output."""
    node = request.node
    channels = ctx.g.values[node.inputs[1]].shape[3]
    return (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), float_bias_arg(node, ctx, channels),
            ctx.tensor(node.outputs[0]))


@kernel_spec
class DepthwiseConv2dF32Reference(KernelSpec):
    kernel, variant, Params = "depthwise_conv2d_f32", "reference", DepthwiseConv2dF32

    @classmethod
    def prepare(cls, request, ctx):
        return Prepared(cls.Params(**request.params), depthwise_f32_args(request, ctx), tuple(request.headers))

    @classmethod
    def declare(cls, call, ctx):
        allow_depthwise_inplace(ctx, call, itemsize=4, alternative=DepthwiseConv2dInplaceF32.kernel)


@kernel_spec
class DepthwiseConv2dInplaceF32(KernelSpec):
    """Chosen only in place of depthwise_conv2d_f32 once the memory plan took its pair."""

    kernel, variant, Params = "depthwise_conv2d_inplace_f32", "reference", DepthwiseConv2dF32

    @classmethod
    def accepts(cls, request):
        return False
