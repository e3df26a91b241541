"""int8 elementwise builtins as a 256-entry table lookup, computed at import.

An int8 -> int8 elementwise operator is a function of 256 stored values. Where TFLite Micro
computes it with fixed-point steps or a table of its own Kiln has no kernel for (LEAKY_RELU,
ABS, ELU, HARD_SWISH, RSQRT), the frontend
evaluates TFLite Micro's own formula for every stored value once (codegen.quant's
MultiplyByQuantizedMultiplier, QuantizeMultiplier; float32 steps in float32) and emits a
TableLookup of those 256 values (the unary_lut_s8 kernel, in place), so the result is TFLite
Micro's bit for bit, at one load per element.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from codegen.frontends.tflite.compose import only_types
from codegen.frontends.tflite.importer import OpContext
from codegen.quant.fixedpoint import multiply_by_quantized_multiplier, rounding_divide_by_pot
from codegen.quant.gemmlowp_math import inv_sqrt_quantized_multiplier_exp
from codegen.quant.params import quantize_multiplier

STORED = np.concatenate([np.arange(0, 128), np.arange(-128, 0)]).astype(np.int64)  # table order


def emit_table(ctx: OpContext, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    """Output = fn(stored input) by lookup; fn maps int64 stored values to int32 results."""
    table = np.clip(fn(STORED), -128, 127).astype(np.int8)
    ctx.emit("TableLookup", [ctx.input(0)], table=tuple(int(v) for v in table))


def _scales(ctx: OpContext, types: tuple[str, ...] = ("INT8",)) -> tuple[float, int, float, int]:
    only_types(ctx, types)
    qi, qo = ctx.tensor(0).quant, ctx.out_tensor().quant
    if qi is None or qo is None or qi.per_channel or qo.per_channel:
        raise ctx.error(f"{ctx.tensor(0).type_name.lower()} needs one scale and zero point on the input and the output")
    return qi.s, qi.zp, qo.s, qo.zp


def _f32(x: float) -> np.float32:
    return np.float32(x)


def _leaky_relu_multipliers(ctx: OpContext, alpha: float, types: tuple[str, ...]):
    """TFLite Micro's QuantizeLeakyRelu constants: two multipliers computed in float32."""
    s_in, zp_in, s_out, zp_out = _scales(ctx, types)
    if alpha < 0:
        raise ctx.error(f"{ctx.tensor(0).type_name.lower()} with a negative alpha ({alpha}) is not supported")
    alpha_m = quantize_multiplier(float(_f32(_f32(s_in) * _f32(alpha)) / _f32(s_out)))
    ident_m = quantize_multiplier(float(_f32(s_in) / _f32(s_out)))
    return zp_in, zp_out, ident_m, alpha_m


def leaky_relu_int8(ctx: OpContext, alpha: float) -> None:
    """TFLite Micro's QuantizeLeakyRelu, tabulated."""
    zp_in, zp_out, ident_m, alpha_m = _leaky_relu_multipliers(ctx, alpha, ("INT8",))

    def fn(q: np.ndarray) -> np.ndarray:
        v = q - zp_in
        pos = multiply_by_quantized_multiplier(v, *ident_m)
        neg = multiply_by_quantized_multiplier(v, *alpha_m)
        return zp_out + np.where(v >= 0, pos, neg)

    emit_table(ctx, fn)


def _abs_multiplier(ctx: OpContext, types: tuple[str, ...]):
    """TFLite Micro's AbsEvalQuantized constants: a multiplier unless the scales are equal."""
    s_in, zp_in, s_out, zp_out = _scales(ctx, types)
    rescale = _f32(s_in) != _f32(s_out)
    return zp_in, zp_out, rescale, quantize_multiplier(float(_f32(s_in) / _f32(s_out))) if rescale else None


def abs_int8(ctx: OpContext) -> None:
    """TFLite Micro's AbsEvalQuantized: |q - zp_in|, rescaled unless the scales are equal."""
    zp_in, zp_out, rescale, m = _abs_multiplier(ctx, ("INT8",))

    def fn(q: np.ndarray) -> np.ndarray:
        v = np.abs(q - zp_in)
        return zp_out + (multiply_by_quantized_multiplier(v, *m) if rescale else v)

    emit_table(ctx, fn)


def elu_int8(ctx: OpContext) -> None:
    """TFLite Micro's ELU table (elu.cc PopulateLookupTable), step by step in float32: x =
    scale * (q - zp); x < 0 ? expf(x) - 1 : x; round half away of x * (1 / out_scale)."""
    s_in, zp_in, s_out, zp_out = _scales(ctx)
    inverse = _f32(1) / _f32(s_out)

    def fn(q: np.ndarray) -> np.ndarray:
        x = _f32(s_in) * (q - zp_in).astype(np.float32)
        # expf: float32 of the double exp, which is what a correctly rounded expf gives
        e = np.array([np.float32(math.exp(float(v))) for v in x], np.float32) - _f32(1)
        y = np.where(x < 0, e, x).astype(np.float32) * inverse
        return (np.sign(y) * np.floor(np.abs(y) + _f32(0.5))).astype(np.int64) + zp_out

    emit_table(ctx, fn)


def _int16_multiplier(real: np.float32) -> tuple[int, int]:
    """QuantizeMultiplier, then TFLM's DownScaleInt32ToInt16Multiplier: (Q0.15, exponent)."""
    m32, exponent = quantize_multiplier(float(real))
    return (32767 if m32 >= (1 << 31) - 1 - (1 << 15) else (m32 + (1 << 15)) >> 16), exponent


def _high_mul16(a: np.ndarray, b, rounding: bool) -> np.ndarray:
    """gemmlowp's int16 SaturatingRoundingDoublingHighMul (rounding) and TFLM's
    SaturatingDoublingHighMul (truncating): a * b / 2**15 toward zero after the nudge."""
    ab = a * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14)) if rounding else 0
    q = np.abs(ab + nudge) >> 15
    return np.where((a == -32768) & (b == -32768), 32767, np.where(ab + nudge < 0, -q, q))


def _saturating_shift16(v: np.ndarray, amount: int) -> np.ndarray:
    return np.clip(v << amount, -32768, 32767)


def hard_swish_int8(ctx: OpContext) -> None:
    """TFLite Micro's int8 HardSwish (reference_ops::HardSwish with HardSwishPrepare's
    multipliers): the input on a 7-bit-finer scale, a "relu-ish" factor in [0, 1] on 16 bits
    and the output rescale, each step in int16 as TFLM rounds it."""
    s_in, zp_in, s_out, zp_out = _scales(ctx)
    hires_scale = _f32(_f32(1.0 / 128.0) * _f32(s_in))
    out_m, out_exp = _int16_multiplier(hires_scale / _f32(s_out))
    relu_m, relu_exp = _int16_multiplier(hires_scale / _f32(3.0 / 32768.0))
    if out_exp > 0:
        raise ctx.error(f"int8 with an output scale below input scale / 128 ({s_out} against {s_in}) is "
                        "refused by TFLite Micro too")

    def fn(q: np.ndarray) -> np.ndarray:
        hires = (q - zp_in) * 128
        preshift_out = _high_mul16(hires, out_m, rounding=True)
        reluish = _saturating_shift16(hires, relu_exp - 1) if relu_exp > 0 else hires
        reluish = _high_mul16(reluish, relu_m, rounding=True)
        if relu_exp > 0:
            reluish = _saturating_shift16(reluish, 1)
        elif relu_exp < 0:
            reluish = rounding_divide_by_pot(reluish, -relu_exp).astype(np.int64)
        reluish = (reluish + (1 << 15)) >> 1
        out = _high_mul16(reluish, preshift_out, rounding=False)
        return rounding_divide_by_pot(out, -out_exp).astype(np.int64) + zp_out

    emit_table(ctx, fn)


def rsqrt_int8(ctx: OpContext) -> None:
    """TFLite Micro's int8 RSQRT (elementwise.cc RsqrtEvalQuantized): 1/sqrt(q - zp) from
    GetInvSqrtQuantizedMultiplierExp, applied to 1 << 20 and rescaled by 1 / (sqrt(in_scale) *
    out_scale); 127 at the zero point. (TFLite Micro stops with an error on a value below the
    zero point; the table gives those what its arithmetic gives 1.)"""
    s_in, zp_in, s_out, zp_out = _scales(ctx)
    multiplier, shift = quantize_multiplier(1.0 / (math.sqrt(float(_f32(s_in))) * float(_f32(s_out))))
    k_shift = 20

    def fn(q: np.ndarray) -> np.ndarray:
        v = q - zp_in
        inv_m, inv_shift = inv_sqrt_quantized_multiplier_exp(v)
        data = multiply_by_quantized_multiplier(1, inv_m, inv_shift.astype(np.int64) + k_shift)
        out = multiply_by_quantized_multiplier(data, multiplier, shift - k_shift).astype(np.int64) + zp_out
        return np.where(v == 0, 127, out)

    emit_table(ctx, fn)


# -- int16: the same constants, computed by a SignedRescale node (a table would take 128 KB) -----

def _int16_zero_points(ctx: OpContext, zp_in: int, zp_out: int) -> None:
    if zp_in or zp_out:  # TFLite Micro's Prepare requires them
        raise ctx.error(f"int16 needs zero points of 0, not {zp_in} and {zp_out}")


def leaky_relu_int16(ctx: OpContext, alpha: float) -> None:
    """TFLite Micro's int16 QuantizeLeakyRelu: identity multiplier for v >= 0, alpha's below."""
    zp_in, zp_out, ident_m, alpha_m = _leaky_relu_multipliers(ctx, alpha, ("INT16",))
    _int16_zero_points(ctx, zp_in, zp_out)
    ctx.emit("SignedRescale", [ctx.input(0)], input_zp=zp_in, output_zp=zp_out, positive=tuple(map(int, ident_m)),
             negative=tuple(map(int, alpha_m)), negate=False)


def abs_int16(ctx: OpContext) -> None:
    """TFLite Micro's int16 AbsEvalQuantized: |v|, rescaled unless the scales are equal."""
    zp_in, zp_out, rescale, m = _abs_multiplier(ctx, ("INT16",))
    _int16_zero_points(ctx, zp_in, zp_out)
    m = tuple(map(int, m)) if rescale else (0, 0)
    ctx.emit("SignedRescale", [ctx.input(0)], input_zp=zp_in, output_zp=zp_out, positive=m, negative=m, negate=True)
