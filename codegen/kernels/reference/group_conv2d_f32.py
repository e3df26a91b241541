"""templates/kernels/reference/group_conv2d_f32.c.j2 and conv_transpose2d_f32.c.j2: float32
convolutions over channel groups (codegen/ops/group_conv2d.py, conv_transpose2d.py); their
arguments input, weights, bias (zeros without one), output."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import FloatClamp, Window
from codegen.kernels.spec import REFERENCE, Prepared, TypedSpec, kernel_spec, make_block, typed_kernels
from codegen.ops.conv2d import float_bias_arg


@dataclass(frozen=True)
class GroupConvF32(Window, FloatClamp):
    in_c: int  # channels of the input and of the output
    out_c: int
    group_in_c: int  # per group
    group_out_c: int


typed_kernels(REFERENCE, GroupConvF32, "group_conv2d_f32")


@kernel_spec
class ConvTranspose2dF32Spec(TypedSpec):
    """The request's arguments, or for constant weights and bias (a request without arguments,
    which the faster kernels lay out themselves) input, weights, bias (zeros without one), output."""

    kernel, variant, Params = "conv_transpose2d_f32", REFERENCE, GroupConvF32

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        args = tuple(request.args) or (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]),
                                       float_bias_arg(node, ctx, request.params["out_c"]), ctx.tensor(node.outputs[0]))
        return Prepared(make_block(cls.Params, request.params), args, tuple(request.headers))
