"""templates/kernels/onnxruntime/depthwise_conv2d_s8.c.j2: onnxruntime's depthwise QLinearConv
(MlasConvDepthwise's integer sum, its float requantization)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.linear import DepthwiseShape, OutputStage, weights
from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT, ort_linear_prepared
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class DepthwiseConv2dS8Ort(DepthwiseShape, OutputStage):
    input_zp: int
    scale: ConstArray  # float32 per output channel


@kernel_spec
class DepthwiseConv2dS8Onnxruntime(KernelSpec):
    kernel, variant, Params, headers = "depthwise_conv2d_s8", VARIANT, DepthwiseConv2dS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        w = weights(request, ctx)
        return ort_linear_prepared(cls, request, ctx, w.reshape(-1, w.shape[3]).T)  # a row of taps per channel
