"""Clip: clamp to [min, max] real values (ONNX Clip/Relu, TFLite RELU/RELU6/RELU_N1_TO_1).

float32: min(max(x, min), max).
int8: TFLM's quantized RELU generalised to any bounds (ReluQuantized): rescale to the output
quantization with QuantizeMultiplier(float32(s_in / s_out)), add the output zero point, clamp
to [zp_out + roundf(min / s_out), zp_out + roundf(max / s_out)] within int8 (an infinite
bound does not clamp). With equal input and output quantization the rescale is the identity,
so this is also TFLM's RELU6 (clamp to [zp, zp + round(6 / s)]). Run as a 256-entry table.
"""

from __future__ import annotations

import math

import numpy as np

from codegen.errors import KilnError
from codegen.ops.registry import register
from codegen.ops.unary import UnaryOp, per_tensor_quants
from codegen.quant import multiply_by_quantized_multiplier, quantize_multiplier
from codegen.quant.params import round_half_away


def quantized_bound(value: float, scale: float, zero_point: int, default: int) -> int:
    """zero_point + roundf(value / scale) in float32, saturated to int8; `default` if infinite."""
    if math.isinf(value):
        return default
    with np.errstate(over="ignore"):
        ratio = float(np.float32(value) / np.float32(scale))
    ratio = max(-1e6, min(1e6, ratio))
    return int(min(127, max(-128, int(zero_point) + int(round_half_away(ratio)))))


def clip_int8(x, in_scale: float, in_zp: int, out_scale: float, out_zp: int, lo: float,
              hi: float) -> np.ndarray:
    """TFLM ReluQuantized with the bounds of Clip(lo, hi)."""
    multiplier, shift = quantize_multiplier(float(np.float32(in_scale) / np.float32(out_scale)))
    q_lo = quantized_bound(lo, out_scale, out_zp, -128)
    q_hi = quantized_bound(hi, out_scale, out_zp, 127)
    scaled = multiply_by_quantized_multiplier(np.asarray(x, np.int64) - in_zp, multiplier, shift)
    return np.minimum(np.maximum(scaled.astype(np.int64) + out_zp, q_lo), q_hi).astype(np.int8)


@register
class Clip(UnaryOp):
    name = "Clip"
    attributes = {"min": -math.inf, "max": math.inf}
    kernels = ("clip_f32", "unary_lut_s8")
    float_kernel = "clip_f32"

    @classmethod
    def bounds(cls, node) -> tuple[float, float]:
        lo, hi = float(node.attrs["min"]), float(node.attrs["max"])
        if math.isnan(lo) or math.isnan(hi):
            raise KilnError(f"Clip bounds must be numbers, got min={lo}, max={hi}", node=node.name)
        return lo, hi

    @classmethod
    def int8_fn(cls, node, g):
        qi, qo = per_tensor_quants(node, g)
        lo, hi = cls.bounds(node)
        return lambda x: clip_int8(x, qi.s, qi.zp, qo.s, qo.zp, lo, hi)

    @classmethod
    def reference_float(cls, node, x):
        lo, hi = cls.bounds(node)
        return np.minimum(np.maximum(x, np.float32(lo)), np.float32(hi))

    @classmethod
    def float_params(cls, node):
        lo, hi = cls.bounds(node)
        return {"min": lo, "max": hi}
