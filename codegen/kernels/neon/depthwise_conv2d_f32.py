"""templates/kernels/neon/depthwise_conv2d_f32.c.j2: the reference parameter block plus
`fused`, whether its 3x3 rows may sum by FMA from the bias (XNNPACK's order, within the float
tolerance) or must multiply then add in the reference kernel's order, bit for bit: when a
hybrid (dynamic-range) layer consumes the output, its run-time quantization of the
activations turns one ULP into an int8 step (KWS float: 1e-4 at the softmax)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import DepthwiseShape, FloatClamp
from codegen.kernels.reference.depthwise_conv2d_f32 import depthwise_f32_args
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec


@dataclass(frozen=True)
class DepthwiseConv2dF32Neon(DepthwiseShape, FloatClamp):
    fused: int  # 3x3 rows by FMA from the bias; 0: the reference's multiply, add and order


def quantized_at_run_time(node, ctx) -> bool:
    """Whether a hybrid layer (one quantizing its float input at run time) reads the output."""
    return any(c.op.startswith("Hybrid") for c in ctx.g.consumers().get(node.outputs[0], ()))


@kernel_spec
class DepthwiseConv2dF32NeonSpec(KernelSpec):
    kernel, variant, Params = "depthwise_conv2d_f32", "neon", DepthwiseConv2dF32Neon

    @classmethod
    def prepare(cls, request, ctx):
        fused = int(not quantized_at_run_time(request.node, ctx))
        return Prepared(cls.Params(**request.params, fused=fused), depthwise_f32_args(request, ctx),
                        tuple(request.headers))
