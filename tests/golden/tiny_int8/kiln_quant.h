/*
 * kiln_quant.h - TFLite Micro's int8 kernel arithmetic for Kiln's generated code, in C99.
 *
 * Elementwise Add/Sub/Mul/Div/SquaredDifference, Quantize/Dequantize, 256-entry lookup
 * tables (Logistic, Tanh and other unary int8 ops, tabulated at compile time by
 * codegen/quant) and Softmax with gemmlowp's fixed-point exp and reciprocal. Each function
 * is the C mirror of a function in codegen/quant/, which is bit-exact with TFLM's reference
 * kernels; tests/quant keeps them in step. Integer primitives live in kiln_fixedpoint.h.
 * Only stdint.h; no libm.
 */
#ifndef KILN_QUANT_H
#define KILN_QUANT_H

#include <stdint.h>

#include "kiln_fixedpoint.h"

/* ---- gemmlowp fixed-point functions (raw int32 values, Qm.n formats as noted) ---- */

/* exp(a) for a in [-1/4, 0); a and result in Q0.31. */
static inline int32_t kiln_exp_on_interval_m025_0(int32_t a)
{
    const int32_t exp_minus_one_eighth = 1895147668L; /* exp(-1/8) */
    const int32_t one_third = 715827883L;
    const int32_t x = kiln_add_wrap_s32(a, 268435456L); /* a + 1/8 */
    const int32_t x2 = kiln_srdhm(x, x);
    const int32_t x3 = kiln_srdhm(x2, x);
    const int32_t x4 = kiln_srdhm(x2, x2);
    const int32_t x4_over_4 = kiln_rdbpot(x4, 2);
    const int32_t poly = kiln_rdbpot(
        kiln_add_wrap_s32(kiln_srdhm(kiln_add_wrap_s32(x4_over_4, x3), one_third), x2), 1);
    return kiln_add_wrap_s32(exp_minus_one_eighth,
                             kiln_srdhm(exp_minus_one_eighth, kiln_add_wrap_s32(x, poly)));
}

/* exp(a) for a <= 0 in Q(integer_bits).(31 - integer_bits), 0 <= integer_bits <= 12;
 * result in Q0.31 (exp(0) = INT32_MAX). gemmlowp exp_on_negative_values. */
static inline int32_t kiln_exp_on_negative_values(int32_t a, int integer_bits)
{
    /* exp(-2^e) in Q0.31 for e = -2 .. 4 */
    static const int32_t barrel[7] = {1672461947L, 1302514674L, 790015084L, 290630308L,
                                      39332535L, 720401L, 242L};
    const int frac_bits = 31 - integer_bits;
    const int32_t one_quarter = (int32_t)((int32_t)1 << (frac_bits - 2));
    const int32_t a_mod_quarter_minus_one_quarter =
        kiln_sub_wrap_s32((int32_t)(a & (one_quarter - 1)), one_quarter);
    const int32_t remainder = kiln_sub_wrap_s32(a_mod_quarter_minus_one_quarter, a);
    int32_t result = kiln_exp_on_interval_m025_0(
        kiln_sat_shl_s32(a_mod_quarter_minus_one_quarter, integer_bits));
    int e;
    for (e = -2; e <= 4; ++e) {
        if (integer_bits > e &&
            (remainder & (int32_t)((int32_t)1 << (frac_bits + e))) != 0) {
            result = kiln_srdhm(result, barrel[e + 2]);
        }
    }
    if (integer_bits > 5 && a < -(int32_t)((int32_t)1 << (36 - integer_bits))) {
        result = 0;
    }
    return (a == 0) ? KILN_INT32_MAX : result;
}

/* Three Newton-Raphson steps towards 1 / half_denominator (Q0.31 in), result in Q2.29. */
static inline int32_t kiln_newton_reciprocal_q2(int32_t half_denominator)
{
    const int32_t one_q2 = 536870912L;
    int32_t x = kiln_add_wrap_s32(1515870810L /* 48/17 */,
                                  kiln_srdhm(half_denominator, -1010580540L /* -32/17 */));
    int i;
    for (i = 0; i < 3; ++i) {
        const int32_t one_minus_dx = kiln_sub_wrap_s32(one_q2, kiln_srdhm(half_denominator, x));
        x = kiln_add_wrap_s32(x, kiln_sat_shl_s32(kiln_srdhm(x, one_minus_dx), 2));
    }
    return x;
}

/* 1 / (1 + a) for a in [0, 1); a and result in Q0.31. */
static inline int32_t kiln_one_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    return kiln_sat_shl_s32(
        kiln_newton_reciprocal_q2(kiln_rounding_half_sum(a, KILN_INT32_MAX)), 1);
}

/* TFLM GetReciprocal: for x > 0 in Q(x_integer_digits), returns s in Q0.31 with
 * 1/x = s * 2^-(*num_bits_over_unit). */
static inline int32_t kiln_get_reciprocal(int32_t x, int x_integer_digits,
                                          int *num_bits_over_unit)
{
    const int headroom_plus_one = kiln_clz_u32((uint32_t)x);
    const uint32_t shifted = (headroom_plus_one < 32) ? ((uint32_t)x << headroom_plus_one) : 0U;
    *num_bits_over_unit = x_integer_digits - headroom_plus_one;
    return kiln_one_over_one_plus_x_for_x_in_0_1(
        kiln_s32_from_u32(shifted - ((uint32_t)1 << 31)));
}

/* ---- Softmax (TFLM reference_ops::Softmax, int8 input) ---- */

/* The row maximum (*max_in) and the sum of exp(x - max) over the row in Q12.19, the terms
 * below diff_min left out: TFLM's int8 Softmax and LogSoftmax loops (exp of the difference
 * scaled to Q5.26). */
static inline int32_t kiln_softmax_sum_of_exps(const int8_t *in, int32_t depth, int32_t input_multiplier,
                                               int input_left_shift, int32_t diff_min, int32_t *max_in)
{
    int32_t max_v = -128;
    int32_t sum = 0;
    int32_t c;
    for (c = 0; c < depth; ++c) {
        max_v = (in[c] > max_v) ? in[c] : max_v;
    }
    for (c = 0; c < depth; ++c) {
        const int32_t diff = (int32_t)in[c] - max_v;
        if (diff >= diff_min) {
            const int32_t e = kiln_exp_on_negative_values(
                kiln_mbqm(diff, input_multiplier, input_left_shift), 5);
            sum = kiln_add_wrap_s32(sum, kiln_rdbpot(e, 12));
        }
    }
    *max_in = max_v;
    return sum;
}

/* One row of int8 softmax: exp of (x - max) scaled to Q5.26, summed in Q12.19, times the
 * reciprocal of the sum. input_multiplier / input_left_shift / diff_min come from
 * codegen.quant.softmax_params. out_bits is 8 (int8 out, zero point -128) or 16 (int16
 * out, zero point -32768); out8 or out16 receives the row. */
static inline void kiln_softmax_row_s8_impl(const int8_t *in, int32_t depth,
                                            int32_t input_multiplier, int input_left_shift,
                                            int32_t diff_min, int out_bits, int8_t *out8,
                                            int16_t *out16)
{
    const int32_t out_min = (out_bits == 8) ? -128 : -32768;
    const int32_t out_max = -out_min - 1;
    int32_t max_in = -128;
    const int32_t sum_of_exps = kiln_softmax_sum_of_exps(in, depth, input_multiplier, input_left_shift,
                                                         diff_min, &max_in);
    int32_t recip;
    int num_bits_over_unit = 0;
    int exponent;
    int32_t c;
    recip = kiln_get_reciprocal(sum_of_exps, 12, &num_bits_over_unit);
    exponent = num_bits_over_unit + 31 - out_bits;
    /* TFLM aborts outside [0, 31] (rows of >= ~512 near-equal maxima); stay defined. */
    exponent = (exponent < 0) ? 0 : ((exponent > 31) ? 31 : exponent);
    for (c = 0; c < depth; ++c) {
        const int32_t diff = (int32_t)in[c] - max_in;
        int32_t v = out_min;
        if (diff >= diff_min) {
            const int32_t e = kiln_exp_on_negative_values(
                kiln_mbqm(diff, input_multiplier, input_left_shift), 5);
            v = kiln_clamp_s32(kiln_rdbpot(kiln_srdhm(recip, e), exponent) + out_min, out_min,
                               out_max);
        }
        if (out_bits == 8) {
            out8[c] = (int8_t)v;
        } else {
            out16[c] = (int16_t)v;
        }
    }
}

static inline void kiln_softmax_row_s8(const int8_t *in, int8_t *out, int32_t depth,
                                       int32_t input_multiplier, int input_left_shift,
                                       int32_t diff_min)
{
    kiln_softmax_row_s8_impl(in, depth, input_multiplier, input_left_shift, diff_min, 8, out,
                             (int16_t *)0);
}

static inline void kiln_softmax_row_s8_s16(const int8_t *in, int16_t *out, int32_t depth,
                                           int32_t input_multiplier, int input_left_shift,
                                           int32_t diff_min)
{
    kiln_softmax_row_s8_impl(in, depth, input_multiplier, input_left_shift, diff_min, 16,
                             (int8_t *)0, out);
}

/* ---- Elementwise int8 ops ---- */

/* Constants of int8 Add/Sub, from codegen.quant.add_sub_params (TFLM ArithmeticParams). */
typedef struct {
    int32_t left_shift;
    int32_t input1_offset, input1_multiplier, input1_shift;
    int32_t input2_offset, input2_multiplier, input2_shift;
    int32_t output_offset, output_multiplier, output_shift;
    int32_t act_min, act_max;
} kiln_add_params;

/* Shared body of Add and Sub (int8 and int16 values): both inputs to a common
 * Q(left_shift) scale, combine, rescale to the output, clamp to the fused activation. */
static inline int32_t kiln_add_sub_q(int32_t x1, int32_t x2, const kiln_add_params *p, int sub)
{
    const int ls = (int)p->left_shift;
    const int32_t a = kiln_mbqm(kiln_shl_wrap_s32(x1 + p->input1_offset, ls),
                                p->input1_multiplier, (int)p->input1_shift);
    const int32_t b = kiln_mbqm(kiln_shl_wrap_s32(x2 + p->input2_offset, ls),
                                p->input2_multiplier, (int)p->input2_shift);
    const int32_t raw = sub ? kiln_sub_wrap_s32(a, b) : kiln_add_wrap_s32(a, b);
    const int32_t out = kiln_add_wrap_s32(
        kiln_mbqm(raw, p->output_multiplier, (int)p->output_shift), p->output_offset);
    return kiln_clamp_s32(out, p->act_min, p->act_max);
}

static inline int8_t kiln_add_s8(int8_t x1, int8_t x2, const kiln_add_params *p)
{
    return (int8_t)kiln_add_sub_q(x1, x2, p, 0);
}

static inline int8_t kiln_sub_s8(int8_t x1, int8_t x2, const kiln_add_params *p)
{
    return (int8_t)kiln_add_sub_q(x1, x2, p, 1);
}

/* int16 Add / Sub: TFLM's int16 kernels are the int8 arithmetic with left_shift 15. */
static inline int16_t kiln_add_s16(int16_t x1, int16_t x2, const kiln_add_params *p)
{
    return (int16_t)kiln_add_sub_q(x1, x2, p, 0);
}

static inline int16_t kiln_sub_s16(int16_t x1, int16_t x2, const kiln_add_params *p)
{
    return (int16_t)kiln_add_sub_q(x1, x2, p, 1);
}

/* TFLM's int8 and int16 SquaredDifference (constants from
 * codegen.quant.params.squared_difference_params): Add's common scale (left shift 7 for int8,
 * 0 for int16), the difference squared in int32 (at most 2 * 255 << 7 for int8, 2^15 for
 * int16 before the square, so it fits), one rescale to the output. */
static inline int32_t kiln_squared_difference_q(int32_t x1, int32_t x2, const kiln_add_params *p)
{
    const int ls = (int)p->left_shift;
    const int32_t a = kiln_mbqm(kiln_shl_wrap_s32(x1 + p->input1_offset, ls),
                                p->input1_multiplier, (int)p->input1_shift);
    const int32_t b = kiln_mbqm(kiln_shl_wrap_s32(x2 + p->input2_offset, ls),
                                p->input2_multiplier, (int)p->input2_shift);
    const int32_t diff = kiln_sub_wrap_s32(a, b);
    const int32_t out = kiln_add_wrap_s32(
        kiln_mbqm(diff * diff, p->output_multiplier, (int)p->output_shift), p->output_offset);
    return kiln_clamp_s32(out, p->act_min, p->act_max);
}

static inline int8_t kiln_squared_difference_s8(int8_t x1, int8_t x2, const kiln_add_params *p)
{
    return (int8_t)kiln_squared_difference_q(x1, x2, p);
}

static inline int16_t kiln_squared_difference_s16(int16_t x1, int16_t x2, const kiln_add_params *p)
{
    return (int16_t)kiln_squared_difference_q(x1, x2, p);
}

/* Constants of int8 Mul, from codegen.quant.mul_params (TFLM OpDataMul). */
typedef struct {
    int32_t input1_offset, input2_offset, output_offset;
    int32_t output_multiplier, output_shift;
    int32_t act_min, act_max;
} kiln_mul_params;

/* Mul of int8 or int16 values: (x1 - zp1) * (x2 - zp2) fits int32 for both. */
static inline int32_t kiln_mul_q(int32_t x1, int32_t x2, const kiln_mul_params *p)
{
    const int32_t prod = (x1 + p->input1_offset) * (x2 + p->input2_offset);
    const int32_t out = kiln_add_wrap_s32(
        kiln_mbqm(prod, p->output_multiplier, (int)p->output_shift), p->output_offset);
    return kiln_clamp_s32(out, p->act_min, p->act_max);
}

static inline int8_t kiln_mul_s8(int8_t x1, int8_t x2, const kiln_mul_params *p)
{
    return (int8_t)kiln_mul_q(x1, x2, p);
}

static inline int16_t kiln_mul_s16(int16_t x1, int16_t x2, const kiln_mul_params *p)
{
    return (int16_t)kiln_mul_q(x1, x2, p);
}

/* TFLM's int8 Div (reference_ops DivElementwise; constants from codegen.quant.params.div_params,
 * whose output_shift <= 22 keeps the final shift a right shift): the divisor made positive,
 * its reciprocal, the dividend shifted by its headroom times it, one rescale. A zero divisor
 * gives what TFLM's reference build gives (kiln_get_reciprocal of 0 is defined). */
static inline int8_t kiln_div_s8(int8_t x1, int8_t x2, const kiln_mul_params *p)
{
    int32_t n = (int32_t)x1 + p->input1_offset;
    int32_t d = (int32_t)x2 + p->input2_offset;
    int recip_shift = 0;
    int headroom;
    int32_t inv, quotient, out;
    if (d < 0) {
        n = -n;
        d = -d;
    }
    inv = kiln_get_reciprocal(d, 31, &recip_shift);
    headroom = kiln_clrsb_s32(n);
    quotient = kiln_srdhm(kiln_shl_wrap_s32(n, headroom), inv);
    out = kiln_rdbpot_wide(kiln_srdhm(quotient, p->output_multiplier),
                           headroom + recip_shift - (int)p->output_shift);
    return (int8_t)kiln_clamp_s32(kiln_add_wrap_s32(out, p->output_offset), p->act_min, p->act_max);
}

/* ---- Quantize / Dequantize / lookup tables ---- */

/* TFLM AffineQuantize to int8: roundf(x / scale) + zero_point, saturated. The division
 * is in float like TFLM's (do not replace it by a multiply by 1/scale). Rounding is half
 * away from zero without libm; |v| <= 1e6 keeps v - trunc(v) exact. NaN gives -128. */
static inline int8_t kiln_quantize_f32_s8(float x, float scale, int32_t zero_point)
{
    const float v = x / scale;
    int32_t r;
    if (!(v > -1000000.0f)) {
        r = -1000000L;
    } else if (v > 1000000.0f) {
        r = 1000000L;
    } else {
        float frac;
        r = (int32_t)v;
        frac = v - (float)r;
        if (frac >= 0.5f) {
            r += 1;
        } else if (frac <= -0.5f) {
            r -= 1;
        }
    }
    return kiln_sat_s8(r + zero_point);
}

/* TFLM Requantize int8 -> int8 (QUANTIZE between int8 tensors). */
static inline int8_t kiln_requantize_s8(int8_t x, int32_t multiplier, int shift,
                                        int32_t input_zero_point, int32_t output_zero_point)
{
    return kiln_requant_s8((int32_t)x - input_zero_point, multiplier, shift, output_zero_point,
                           -128, 127);
}

/* TFLM Dequantize: float(double(scale) * (x - zero_point)). The exact product of a float
 * and an integer below 2^9 rounds the same in float as in double, so float suffices. */
static inline float kiln_dequantize_s8(int8_t x, float scale, int32_t zero_point)
{
    return scale * (float)((int32_t)x - zero_point);
}

/* Look x up in a 256-entry table built by codegen.quant.unary_lut_int8 (indexed by the
 * input's bit pattern, as TFLM's LUTLookup). */
static inline int8_t kiln_lut_s8(const int8_t lut[256], int8_t x)
{
    return lut[(uint8_t)x];
}

#endif /* KILN_QUANT_H */
