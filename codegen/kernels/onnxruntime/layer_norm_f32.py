"""templates/kernels/onnxruntime/layer_norm_f32.c.j2: onnxruntime's float LayerNormalization as
its x86-64 CPU kernel computes it (onnxruntime 1.32), so that a LayerNormalization between a
DequantizeLinear and a QuantizeLinear (QDQ) rounds to onnxruntime's codes.

Read from onnxruntime's outputs (Y, Mean and InvStdDev on random rows of 8 to 100 elements, every
row length, 0 differences; tests/quant/test_onnxruntime_layer_norm.py): the mean is the row's sum
in double divided by the length, rounded to float; the variance sums (x - mean)^2 in float with
eight fused multiply-add lanes over whole blocks of 8, the lanes added in halves (4, 2, 1), then
a block of 4 squared and added one by one, then the rest with fused multiply-adds; divided by the
length; InvStdDev = 1 / sqrtf(variance + epsilon); y = fmaf((x - mean) * inv, scale, bias).
Rows shorter than 8 take another path in onnxruntime (not reproduced): they keep the reference
kernel, as RMSNormalization does."""

from __future__ import annotations

from codegen.kernels.onnxruntime import ORT_HEADERS, VARIANT
from codegen.kernels.reference.layer_norm_f32 import LayerNormF32
from codegen.kernels.spec import TypedSpec, kernel_spec

# onnxruntime's vector path: rows of at least this many elements
VECTOR_LANES = 8


@kernel_spec
class LayerNormF32Onnxruntime(TypedSpec):
    kernel, variant, Params, headers = "layer_norm_f32", VARIANT, LayerNormF32, ORT_HEADERS

    @classmethod
    def accepts(cls, request) -> bool:
        return not request.params["rms"] and request.params["cols"] >= VECTOR_LANES
