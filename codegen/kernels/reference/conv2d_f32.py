"""templates/kernels/reference/conv2d_f32.c.j2: the float convolution, constant weights with the
output channel last (codegen/kernels/repack_f32.reference_weights)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.inplace import allow_conv_overlap
from codegen.kernels.linear import ConvShape, FloatClamp
from codegen.kernels.repack_f32 import reference_weights
from codegen.ops.conv2d import float_bias_arg
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec


@dataclass(frozen=True)
class Conv2dF32(ConvShape, FloatClamp):
    w_oc_stride: int  # between output channels in the weights: 1 (HWIO constants) or K (computed OHWI)


@kernel_spec
class Conv2dF32Reference(KernelSpec):
    kernel, variant, Params = "conv2d_f32", "reference", Conv2dF32

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        w_arg, stride = reference_weights(node, ctx)
        args = (ctx.tensor(node.inputs[0]), w_arg, float_bias_arg(node, ctx, request.params["out_c"]),
                ctx.tensor(node.outputs[0]))
        return Prepared(cls.Params(**request.params, w_oc_stride=stride), args, tuple(request.headers))

    @classmethod
    def declare(cls, call, ctx):
        allow_conv_overlap(ctx, call, itemsize=4)
