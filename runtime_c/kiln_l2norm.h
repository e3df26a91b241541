/*
 * kiln_l2norm.h - TFLite Micro's int8 L2Normalization for Kiln's generated code, in C99.
 *
 * The C mirror of codegen/quant/l2_normalization.py (bit-exact with TFLM's
 * reference_integer_ops::L2Normalization): the row's sum of squares, its inverse square root
 * by TFLM's GetInvSqrtQuantizedMultiplierExp, each element rescaled into Q0.7. tests/quant
 * keeps the two in step. Only stdint.h.
 */
#ifndef KILN_L2NORM_H
#define KILN_L2NORM_H

#include <stdint.h>

#include "kiln_fixedpoint.h"

/* TFLM GetInvSqrtQuantizedMultiplierExp(input, kReverseShift): 1 / sqrt(input) as a Q0.31
 * multiplier and a left shift (*shift, <= 0 unless the multiplier was shifted up). input <= 1
 * gives (INT32_MAX, 0), as TFLM treats 0 like 1. Five Newton-Raphson steps in Q3.28. */
static inline int32_t kiln_inv_sqrt_multiplier(int32_t input, int *shift)
{
    const int32_t half_three = (int32_t)((1L << 28) + (1L << 27));
    int32_t x = (int32_t)(1L << 28);
    int32_t half_input;
    int right = 11;
    int pairs, i;
    if (input <= 1) {
        *shift = 0;
        return KILN_INT32_MAX;
    }
    while (input >= (int32_t)(1L << 29)) {
        input /= 4;
        ++right;
    }
    pairs = (kiln_clz_u32((uint32_t)input) - 1) / 2 - 1;
    right -= pairs;
    input = kiln_shl_wrap_s32(input, 2 * pairs);
    half_input = kiln_rdbpot(input >> 1, 1);
    for (i = 0; i < 5; ++i) {
        const int32_t x3 = kiln_sat_shl_s32(kiln_srdhm(kiln_srdhm(x, x), x), 6);
        x = kiln_sat_shl_s32(kiln_sub_wrap_s32(kiln_srdhm(half_three, x), kiln_srdhm(half_input, x3)), 3);
    }
    x = kiln_srdhm(x, 1518500250L); /* sqrt(2) / 2 */
    if (right < 0) {
        x = kiln_shl_wrap_s32(x, -right);
        right = 0;
    }
    *shift = -right;
    return x;
}

/* One row of int8 L2Normalization: (x - input_zp) / ||x - input_zp|| in Q0.7, saturated. */
static inline void kiln_l2norm_row_s8(const int8_t *in, int8_t *out, int32_t depth, int32_t input_zp)
{
    int32_t acc = 0;
    int32_t multiplier, c;
    int shift = 0;
    for (c = 0; c < depth; ++c) {
        const int32_t v = (int32_t)in[c] - input_zp;
        acc = kiln_add_wrap_s32(acc, v * v);
    }
    multiplier = kiln_inv_sqrt_multiplier(acc, &shift);
    for (c = 0; c < depth; ++c) {
        const int32_t v = (int32_t)in[c] - input_zp;
        out[c] = kiln_sat_s8(kiln_mbqm(v, multiplier, shift + 7));
    }
}

#endif /* KILN_L2NORM_H */
