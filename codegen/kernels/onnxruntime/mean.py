"""templates/kernels/onnxruntime/mean_s8.c.j2: the int8 Mean as onnxruntime's pooling kernels
compute it. One mean per (batch, channel) is QLinearGlobalAveragePool (and
QLinearAveragePool over the whole image, which onnxruntime hands to it): the integer sum
requantized by MlasRequantizeOutput with x_scale / (y_scale * count). Smaller windows are
QLinearAveragePool's float path: dequantized inputs summed in float32, divided by the count,
round(y / y_scale + y_zp)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.mean import ReduceLoops
from codegen.kernels.spec import KernelSpec, Prepared, kernel_spec
from codegen.quant.onnxruntime import global_average_scale, original_zero_point


@dataclass(frozen=True)
class MeanS8Ort(ReduceLoops):
    global_pool: bool  # QLinearGlobalAveragePool's integer path, else QLinearAveragePool's float one
    bias: int  # global: -input_zp * count
    scale: float  # global: x_scale / (y_scale * count)
    output_zp: int  # global: Kiln's output zero point
    x_scale: float  # window: the input's quantization (Kiln's zero point)
    x_zp: int
    y_scale: float  # window: the output's, its zero point in the original type
    y_zp: float
    out_offset: int  # 128 for a uint8 output, else 0
    count: float  # elements per window


@kernel_spec
class MeanS8Onnxruntime(KernelSpec):
    kernel, variant, Params, headers = "mean_s8", VARIANT, MeanS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        node = request.node
        x, y = ctx.g.values[node.inputs[0]], ctx.g.values[node.outputs[0]]
        qx, qy = x.quant, y.quant
        loops = {k: request.params[k] for k in ("kept_dims", "kept_strides", "red_dims", "red_strides")}
        count = int(np.prod(request.params["red_dims"]))
        is_global = len(x.shape) >= 2 and y.size == x.shape[0] * x.shape[1]
        fields = dict(global_pool=is_global, bias=-qx.zp * count, scale=global_average_scale(qx.s, qy.s, count),
                      output_zp=qy.zp, x_scale=qx.s, x_zp=qx.zp, y_scale=qy.s, y_zp=float(original_zero_point(qy)),
                      out_offset=128 * qy.unsigned, count=float(count))
        return Prepared(cls.Params(**loops, **fields), tuple(request.args), cls.headers)
