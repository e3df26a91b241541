"""templates/kernels/onnxruntime/conv2d_s8.c.j2: onnxruntime's QLinearConv (TFLite's integer
sum, its float requantization), the input offset folded into the bias."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.inplace import allow_conv_overlap
from codegen.kernels.linear import ConvShape, OutputStage, weights
from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT, ort_linear_prepared
from codegen.kernels.spec import KernelSpec, kernel_spec
from codegen.ops.request import ConstArray


@dataclass(frozen=True)
class Conv2dS8Ort(ConvShape, OutputStage):
    input_zp: int  # what a padding tap reads
    scale: ConstArray  # float32 per output channel: x_scale * w_scale[c] / y_scale


@kernel_spec
class Conv2dS8Onnxruntime(KernelSpec):
    kernel, variant, Params, headers = "conv2d_s8", VARIANT, Conv2dS8Ort, ORT_HEADERS

    @classmethod
    def prepare(cls, request, ctx):
        w = weights(request, ctx)
        return ort_linear_prepared(cls, request, ctx, w.reshape(w.shape[0], -1))

    @classmethod
    def declare(cls, call, ctx):
        allow_conv_overlap(ctx, call, itemsize=1)
