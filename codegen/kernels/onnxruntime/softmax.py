"""templates/kernels/onnxruntime/softmax_s8.c.j2: onnxruntime's QLinearSoftmax along the last
axis: a table of float32 exponentials built at compile time as onnxruntime builds it, a float32
sum per row, round((e * floor(1 / y_scale)) / sum) + zero point, capped at the maximum
(codegen/quant/onnxruntime.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.ops.request import ConstArray
from codegen.quant.onnxruntime import softmax_exp_table, softmax_y_scale


@dataclass(frozen=True)
class SoftmaxS8Ort:
    outer: int  # rows
    depth: int  # row length (the last axis)
    exp_table: ConstArray  # float32 [256]: entry 255 + (x - row max)
    y_scale: float  # floor(1 / y_scale)
    output_zp: int  # Kiln's output zero point


@kernel_spec
class SoftmaxS8Onnxruntime(KernelSpec):
    kernel, variant, Params, headers = "softmax_s8", VARIANT, SoftmaxS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        qx, qy = ctx.g.values[node.inputs[0]].quant, ctx.g.values[node.outputs[0]].quant
        depth = request.params["depth"]
        table = ctx.constant(node, "exp_table", softmax_exp_table(qx.s, depth), "float32")
        params = cls.Params(outer=request.params["outer"], depth=depth, exp_table=table,
                            y_scale=softmax_y_scale(qy.s), output_zp=qy.zp)
        return Prepared(params, (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0])), cls.headers)
