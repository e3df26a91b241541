"""templates/kernels/reference/fully_connected_f32.c.j2: rows times weights with the output
channel last when constant (codegen/kernels/repack_f32.reference_weights)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import FloatClamp, RowsShape
from codegen.kernels.repack_f32 import reference_weights
from codegen.ops.conv2d import float_bias_arg
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec


@dataclass(frozen=True)
class FullyConnectedF32(RowsShape, FloatClamp):
    w_oc_stride: int


@kernel_spec
class FullyConnectedF32Reference(KernelSpec):
    kernel, variant, Params = "fully_connected_f32", "reference", FullyConnectedF32

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        w_arg, stride = reference_weights(node, ctx)
        args = (ctx.tensor(node.inputs[0]), w_arg, float_bias_arg(node, ctx, request.params["out_c"]),
                ctx.tensor(node.outputs[0]))
        return Prepared(cls.Params(**request.params, w_oc_stride=stride), args, tuple(request.headers))
