"""onnxruntime's integer arithmetic (CPU execution provider, MLAS on x86), the numerics of
`--numerics onnxruntime`: the constants its kernels compute when a session is created, and
numpy mirrors of what they compute per element (the C is runtime_c/kiln_ort.h and
templates/kernels/onnxruntime/).

Every value is float32 as onnxruntime holds it, every operation one IEEE float32 operation
in onnxruntime's order, so that the generated C, which repeats them, gives the same bits on
any target with IEEE float32:
- requantization (QLinearConv, QLinearMatMul, QGemm, QLinearGlobalAveragePool): the int32
  sum (bias and zero-point terms included) as float, times one scale, clamped to the output
  range in output units, rounded half to even, plus the output zero point (MlasRequantizeOutput);
- QuantizeLinear: x / scale, clamped, rounded half to even, plus the zero point;
- the 256-entry tables of QLinearConcat's requantization (and QLinearSigmoid,
  QLinearLeakyRelu): each input dequantized as x_scale * (x - x_zp), the function applied,
  then quantized as above (QlinearBuildLookupTable);
- QLinearSoftmax: a table of float32 exp values computed in double, a float32 sum, and
  round((e * floor(1 / y_scale)) / sum) + zero point, capped at the type's maximum.
Kiln keeps uint8 tensors as int8 (shifted by -128, zero points too); each formula gives the
same integers in that form, since it only adds the zero point after rounding and clamps in
output units.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

F32 = np.float32


def output_scales(x_scale: float, w_scales, y_scale: float) -> np.ndarray:
    """QLinearConv / QGemm / QLinearMatMul: (x_scale * w_scale[c]) / y_scale in float32."""
    w = np.asarray(w_scales, np.float64).astype(F32).reshape(-1)
    return ((F32(x_scale) * w) / F32(y_scale)).astype(F32)


def round_half_even(v: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(v, F32)).astype(np.int64)


def requantize(acc: np.ndarray, scale, zero_point: int, lo: int = -128, hi: int = 127) -> np.ndarray:
    """MlasRequantizeOutput on int32 sums (channels on the last axis when `scale` is a vector)."""
    v = np.asarray(acc, np.int64).astype(F32) * np.asarray(scale, F32)
    v = np.clip(v, F32(lo - zero_point), F32(hi - zero_point))
    return (round_half_even(v) + zero_point).astype(np.int8)


def quantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """MlasQuantizeLinear to int8 (Kiln's form of uint8 too: the zero point shifted)."""
    v = np.asarray(x, F32) / F32(scale)
    v = np.clip(np.nan_to_num(v, nan=-np.inf), F32(-128 - zero_point), F32(127 - zero_point))
    return (round_half_even(v) + zero_point).astype(np.int8)


def fma32(a: float, b: float, c: float) -> np.float32:
    """fmaf: a * b + c rounded once to float32 (exact rational arithmetic, then the nearest
    float32, ties to even)."""
    exact = Fraction(float(F32(a))) * Fraction(float(F32(b))) + Fraction(float(F32(c)))
    near = F32(float(exact))  # within one float32 step of the answer (double rounding)
    steps = (np.nextafter(near, F32(-np.inf)), near, np.nextafter(near, F32(np.inf)))
    return min(steps, key=lambda v: (abs(Fraction(float(v)) - exact), int(F32(v).view(np.uint32)) & 1))


def original_zero_point(q) -> int:
    """A zero point in the model's own type (Kiln holds ONNX uint8 shifted by -128)."""
    return q.zp + (128 if q.unsigned else 0)


def add_constants(qa, qb, qc) -> dict:
    """QLinearAdd (MlasQLinearAddKernelAvx2Helper): the scale ratios and the fixed part
    c_zp - (ratio_a * a_zp + ratio_b * b_zp), whose first product onnxruntime's compiler fuses
    into the sum (found by comparing every input pair with onnxruntime:
    tests/quant/test_onnxruntime_numerics.py)."""
    ratio_a, ratio_b = F32(F32(qa.s) / F32(qc.s)), F32(F32(qb.s) / F32(qc.s))
    za, zb, zc = (F32(original_zero_point(q)) for q in (qa, qb, qc))
    fixed = F32(zc - fma32(ratio_a, za, F32(ratio_b * zb)))
    return {"ratio_a": float(ratio_a), "ratio_b": float(ratio_b), "fixed": float(fixed),
            "a_offset": 128 * qa.unsigned, "b_offset": 128 * qb.unsigned, "out_offset": 128 * qc.unsigned}


def mul_constants(qa, qb, qc) -> dict:
    """QLinearMul (MlasQLinearMulKernel): (a_scale * b_scale) / c_scale and c's zero point."""
    ratio = F32(F32(F32(qa.s) * F32(qb.s)) / F32(qc.s))
    return {"ratio": float(ratio), "out_zp": float(original_zero_point(qc)), "a_zp": qa.zp, "b_zp": qb.zp,
            "out_offset": 128 * qc.unsigned}


def global_average_scale(x_scale: float, y_scale: float, count: int) -> float:
    """QLinearGlobalAveragePool's one scale, x_scale / (y_scale * (float)count) in float32."""
    return float(F32(F32(x_scale) / F32(F32(y_scale) * F32(count))))


def average_pool(windows: np.ndarray, x_scale: float, x_zp: int, y_scale: float, y_zp_original: int,
                 out_offset: int) -> np.ndarray:
    """QLinearAveragePool (not global): each input dequantized x_scale * (x - x_zp), summed
    in float32 in window order (last axis), divided by the count, then
    round(y / y_scale + y_zp) in the original type, saturated (Kiln's int8 out)."""
    values = F32(x_scale) * (np.asarray(windows, np.int64) - x_zp).astype(F32)
    total = np.zeros(values.shape[:-1], F32)
    for k in range(values.shape[-1]):
        total = (total + values[..., k]).astype(F32)
    v = ((total / F32(values.shape[-1])) / F32(y_scale) + F32(y_zp_original)).astype(F32)
    return np.clip(round_half_even(v) - out_offset, -128, 127).astype(np.int8)


# MlasLogisticConstants: Eigen's rational approximation of the logistic function
_LOGISTIC_RANGE = (F32(-18.0), F32(18.0))
_LOGISTIC_P = tuple(F32(c) for c in (4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05,
                                     8.51377133304701e-03, 2.48287947061529e-01))
_LOGISTIC_Q = tuple(F32(c) for c in (6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06,
                                     1.70198817374094e-03, 1.16817656904453e-01, 9.93151921023180e-01))


def _horner(x2: np.float32, coefficients) -> np.float32:
    acc = fma32(x2, coefficients[0], coefficients[1])
    for c in coefficients[2:]:
        acc = fma32(acc, x2, c)
    return acc


def logistic(x: np.ndarray) -> np.ndarray:
    """MlasComputeLogistic as its FMA3 kernel computes it on x86 (fused multiply-adds;
    onnxruntime's tables from it agree with the unfused form on every input tried):
    clamp to [-18, 18], p(x) / q(x) + 0.5, clamped to [0, 1]."""
    out = []
    for v in np.asarray(x, F32).reshape(-1):
        v = F32(min(max(v, _LOGISTIC_RANGE[0]), _LOGISTIC_RANGE[1]))
        v2 = F32(v * v)
        r = F32(F32(F32(_horner(v2, _LOGISTIC_P) * v) / _horner(v2, _LOGISTIC_Q)) + F32(0.5))
        out.append(min(max(r, F32(0.0)), F32(1.0)))
    return np.array(out, F32).reshape(np.shape(x))


def leaky_relu(alpha: float):
    """QLinearLeakyRelu's function: v >= 0 ? v : alpha * v in float32."""
    return lambda v: np.where(v >= 0, v, F32(alpha) * v).astype(F32)


def int8_codes() -> np.ndarray:
    """The 256 int8 values in table order (indexed by their bit pattern, as kiln_lut_s8)."""
    return np.arange(256, dtype=np.uint8).view(np.int8)


def lookup_table(x_scale: float, x_zp: int, y_scale: float, y_zp: int, fn=None) -> np.ndarray:
    """QlinearBuildLookupTable: quantize(fn(x_scale * (x - x_zp))) over the 256 inputs
    (`fn` None: the identity, QLinearConcat's requantization)."""
    x = int8_codes().astype(np.int64)
    dequantized = F32(x_scale) * (x - x_zp).astype(F32)
    return quantize(dequantized if fn is None else fn(dequantized), y_scale, y_zp)


def softmax_exp_table(x_scale: float, reduce_len: int) -> np.ndarray:
    """QlinearBuildLookupTableUint32 (float table): entry 255 + d holds
    float(exp((d + bit_shift) * x_scale)) for d = x - max(x) in [-255, 0], in double with
    the C library's exp and log as onnxruntime calls them (Python's math module is the same
    libm on the host onnxruntime runs on)."""
    bit_shift = math.log(float(np.finfo(F32).max) / reduce_len)
    bit_shift = max(0.0, bit_shift - 5.0) / float(F32(x_scale))
    return np.array([math.exp((float(i) - 255.0 + bit_shift) * float(F32(x_scale))) for i in range(256)],
                    dtype=np.float64).astype(F32)


def softmax_y_scale(y_scale: float) -> float:
    """floor(1.0f / y_scale) in float32, the numerator QLinearSoftmax multiplies by."""
    return float(F32(math.floor(F32(1.0) / F32(y_scale))))


def softmax(x: np.ndarray, table: np.ndarray, y_scale: float, zero_point: int) -> np.ndarray:
    """QlinearSoftmaxCPU over the last axis of int8 `x` (Kiln's form): the sum of the
    max-shifted table entries in float32, left to right, then each
    round((e * y_scale) / sum) + zero point, capped at the type's maximum (onnxruntime 1.32
    saturates a probability of one with zero point -128 to 127, uint8's to 255)."""
    x = np.asarray(x, np.int64)
    e = np.asarray(table, F32)[x - x.max(axis=-1, keepdims=True) + 255]
    total = np.zeros(x.shape[:-1], F32)
    for k in range(x.shape[-1]):
        total = (total + e[..., k]).astype(F32)
    q = round_half_even((e * F32(y_scale)) / total[..., None]) + zero_point
    return np.minimum(q, 127).astype(np.int8)
