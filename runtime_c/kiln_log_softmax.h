/*
 * kiln_log_softmax.h - TFLite Micro's int8 LogSoftmax for Kiln's generated code, in C99.
 *
 * The C mirror of codegen/quant/log_softmax.py (bit-exact with TFLM's
 * reference_ops::LogSoftmaxQuantized): Softmax's sum of exps in Q12.19, its log by TFLM's
 * log_x_for_x_greater_than_or_equal_to_1, each output (diff - log(sum)) in the fixed output
 * format (scale 16/256, zero point 127). tests/quant keeps the two in step. Only stdint.h.
 */
#ifndef KILN_LOG_SOFTMAX_H
#define KILN_LOG_SOFTMAX_H

#include <stdint.h>

#include "kiln_quant.h"

/* TFLM SaturatingRoundingMultiplyByPOTParam for 0 <= exponent <= 30. */
static inline int32_t kiln_sat_shl_param_s32(int32_t x, int exponent)
{
    return (exponent == 0) ? x : kiln_sat_shl_s32(x, exponent);
}

/* min(max(a + b, INT32_MIN), INT32_MAX). */
static inline int32_t kiln_add_sat_s32(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a + (int64_t)b;
    return (s > KILN_INT32_MAX) ? KILN_INT32_MAX : ((s < KILN_INT32_MIN) ? KILN_INT32_MIN : (int32_t)s);
}

/* TFLM log_x_for_x_greater_than_or_equal_to_1<5>(z in Q12.19): log(z), raw Q5.26. The steps
 * and their rounding follow TFLM's order (accumulator Q6.25). */
static inline int32_t kiln_log_q12_to_q5(int32_t z)
{
    const int32_t log_2 = 1488522236L, sqrt_sqrt_half = 1805811301L, sqrt_half = 1518500250L;
    const int32_t alpha_n = 117049297L, alpha_d = 127690142L, alpha_i = 1057819769L, alpha_f = 638450708L;
    const int32_t shifted_quarter = kiln_rdbpot(536870912L, 6);
    const int hp1 = kiln_clz_u32((uint32_t)z);
    const int32_t r_a = kiln_sat_shl_param_s32(
        kiln_srdhm(kiln_sat_shl_param_s32(z, hp1 - 1), sqrt_half), 1);
    const int32_t z_a_adj = kiln_add_sat_s32(kiln_sat_shl_param_s32((int32_t)(12 - hp1), 25), shifted_quarter);
    const int z_b_headroom = kiln_clz_u32((uint32_t)kiln_srdhm(z, sqrt_half)) - 1;
    const int32_t r_b = kiln_sat_shl_param_s32(z, z_b_headroom);
    const int32_t z_b_adj = kiln_add_sat_s32(kiln_sat_shl_param_s32((int32_t)(12 - z_b_headroom), 25),
                                             -shifted_quarter);
    const int32_t r = (r_a < r_b) ? r_a : r_b;
    const int32_t z_pow_2_adj = (z_a_adj > z_b_adj) ? z_a_adj : z_b_adj;
    const int32_t p = kiln_rounding_half_sum(r, sqrt_sqrt_half);
    const int32_t q1 = kiln_sub_wrap_s32(r, sqrt_sqrt_half);
    const int32_t q = kiln_add_wrap_s32(q1, q1);
    const int32_t common_sq = kiln_srdhm(q, q);
    const int32_t num = kiln_add_wrap_s32(kiln_srdhm(q, r), kiln_srdhm(kiln_srdhm(q, common_sq), alpha_n));
    const int32_t denom_minus_one = kiln_add_wrap_s32(
        kiln_srdhm(p, kiln_add_wrap_s32(kiln_add_wrap_s32(alpha_i, q), kiln_srdhm(alpha_d, common_sq))),
        kiln_srdhm(alpha_f, q));
    const int32_t recip_denom = kiln_one_over_one_plus_x_for_x_in_0_1(denom_minus_one);
    const int32_t total = kiln_add_wrap_s32(kiln_srdhm(z_pow_2_adj, log_2),
                                            kiln_srdhm(kiln_rdbpot(num, 6), recip_denom));
    return kiln_sat_shl_s32(total, 1);
}

/* One row of int8 LogSoftmax; the constants come from codegen.quant.log_softmax_params. */
static inline void kiln_log_softmax_row_s8(const int8_t *in, int8_t *out, int32_t depth,
                                           int32_t input_multiplier, int input_left_shift,
                                           int32_t reverse_divisor, int reverse_right_shift,
                                           int32_t diff_min)
{
    int32_t max_in = -128;
    const int32_t sum_of_exps = kiln_softmax_sum_of_exps(in, depth, input_multiplier, input_left_shift,
                                                         diff_min, &max_in);
    int32_t log_sum, reverse, adjusted_diff_min;
    int32_t c;
    log_sum = kiln_log_q12_to_q5(sum_of_exps);
    reverse = kiln_mbqm(kiln_add_wrap_s32(log_sum, KILN_INT32_MIN), reverse_divisor, -reverse_right_shift);
    adjusted_diff_min = (diff_min - 1 > reverse) ? diff_min - 1 : reverse;
    for (c = 0; c < depth; ++c) {
        const int32_t diff = (int32_t)in[c] - max_in;
        int32_t v = -128;
        if (diff > adjusted_diff_min) {
            const int32_t q5 = kiln_mbqm(diff, input_multiplier, input_left_shift);
            v = kiln_clamp_s32(kiln_add_wrap_s32(kiln_rdbpot(kiln_sub_wrap_s32(q5, log_sum), 22), 127), -128, 127);
        }
        out[c] = (int8_t)v;
    }
}

#endif /* KILN_LOG_SOFTMAX_H */
