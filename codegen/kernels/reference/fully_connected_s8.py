"""templates/kernels/reference/fully_connected_s8.c.j2: TFLM's FullyConnected; no padding, so
the folded bias holds the whole input offset and the block has no input_zp."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import OutputStage, RowsShape, weights
from codegen.kernels.reference.conv2d_s8 import QUANT_HEADERS, int8_linear_fields
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class FullyConnectedS8(RowsShape, OutputStage):
    multiplier: ConstArray
    shift: ConstArray


@kernel_spec
class FullyConnectedS8Reference(KernelSpec):
    kernel, variant, Params, headers = "fully_connected_s8", "reference", FullyConnectedS8, QUANT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        ins = (ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]))
        fields, bias = int8_linear_fields(request, ctx, weights(request, ctx), fc_per_tensor=True)
        del fields["input_zp"]
        return Prepared(cls.Params(**request.params, **fields), ins + (bias, ctx.tensor(node.outputs[0])),
                        cls.headers)
