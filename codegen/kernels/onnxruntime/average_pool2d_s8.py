"""templates/kernels/onnxruntime/average_pool2d_s8.c.j2: onnxruntime's QLinearAveragePool
(count_include_pad=0) over NHWC, the op's geometry and clamp with onnxruntime's quantization
constants."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.pool2d import Pool2d
from codegen.kernels.spec import Prepared, TypedSpec, kernel_spec
from codegen.quant.onnxruntime import original_zero_point


@dataclass(frozen=True)
class AveragePool2dS8Ort(Pool2d):
    x_scale: float
    x_zp: int
    y_scale: float
    y_zp: float  # in the original type
    out_offset: int  # 128 for a uint8 output


@kernel_spec
class AveragePool2dS8Onnxruntime(TypedSpec):
    kernel, variant, Params, headers = "average_pool2d_s8", VARIANT, AveragePool2dS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        qx, qy = ctx.g.values[node.inputs[0]].quant, ctx.g.values[node.outputs[0]].quant
        params = cls.Params(**request.params, x_scale=qx.s, x_zp=qx.zp, y_scale=qy.s,
                            y_zp=float(original_zero_point(qy)), out_offset=128 * qy.unsigned)
        return Prepared(params, (ctx.tensor(node.inputs[0]), ctx.tensor(node.outputs[0])), cls.headers)
