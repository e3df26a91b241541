/*
 * Drives runtime_c/kiln_quant.h (and kiln_log_softmax.h, kiln_l2norm.h) from stdin for tests/quant/test_kiln_quant_c.py.
 *
 * Each input line is an operation name and its integer arguments; each produces one output
 * line of integers. Floats travel as their IEEE-754 bit patterns so no value is rounded in
 * transit. Arrays are given as a length followed by the elements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln_l2norm.h"
#include "kiln_log_softmax.h"
#include "kiln_quant.h"

#define MAX_DEPTH 4096

static long next_long(void)
{
    long v;
    if (scanf("%ld", &v) != 1) {
        fprintf(stderr, "test_kiln_quant: malformed input\n");
        exit(2);
    }
    return v;
}

static int32_t next_s32(void) { return (int32_t)next_long(); }
static int next_int(void) { return (int)next_long(); }

static float next_f32(void)
{
    const uint32_t bits = (uint32_t)next_long();
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t f32_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

static int32_t next_array_s8(int8_t *buf)
{
    const int32_t n = next_s32();
    int32_t i;
    if (n < 0 || n > MAX_DEPTH) {
        fprintf(stderr, "test_kiln_quant: bad array length %ld\n", (long)n);
        exit(2);
    }
    for (i = 0; i < n; ++i) {
        buf[i] = (int8_t)next_long();
    }
    return n;
}

static void run_log_softmax(void)
{
    static int8_t in[MAX_DEPTH], out[MAX_DEPTH];
    const int32_t multiplier = next_s32();
    const int left_shift = next_int();
    const int32_t reverse_divisor = next_s32();
    const int reverse_right_shift = next_int();
    const int32_t diff_min = next_s32();
    const int32_t n = next_array_s8(in);
    int32_t i;
    kiln_log_softmax_row_s8(in, out, n, multiplier, left_shift, reverse_divisor, reverse_right_shift, diff_min);
    for (i = 0; i < n; ++i) {
        printf(i ? " %ld" : "%ld", (long)out[i]);
    }
    printf("\n");
}

static void run_l2norm(void)
{
    static int8_t in[MAX_DEPTH], out[MAX_DEPTH];
    const int32_t zp = next_s32();
    const int32_t n = next_array_s8(in);
    int32_t i;
    kiln_l2norm_row_s8(in, out, n, zp);
    for (i = 0; i < n; ++i) {
        printf(i ? " %ld" : "%ld", (long)out[i]);
    }
    printf("\n");
}

static void run_softmax(int out_bits)
{
    static int8_t in[MAX_DEPTH], out8[MAX_DEPTH];
    static int16_t out16[MAX_DEPTH];
    const int32_t multiplier = next_s32();
    const int left_shift = next_int();
    const int32_t diff_min = next_s32();
    const int32_t n = next_array_s8(in);
    int32_t i;
    if (out_bits == 8) {
        kiln_softmax_row_s8(in, out8, n, multiplier, left_shift, diff_min);
    } else {
        kiln_softmax_row_s8_s16(in, out16, n, multiplier, left_shift, diff_min);
    }
    for (i = 0; i < n; ++i) {
        printf(i ? " %ld" : "%ld", (long)(out_bits == 8 ? out8[i] : out16[i]));
    }
    printf("\n");
}

int main(void)
{
    char op[32];
    while (scanf("%31s", op) == 1) {
        if (strcmp(op, "srdhm") == 0) {
            const int32_t a = next_s32();
            printf("%ld\n", (long)kiln_srdhm(a, next_s32()));
        } else if (strcmp(op, "rdbpot") == 0) {
            const int32_t x = next_s32();
            printf("%ld\n", (long)kiln_rdbpot(x, next_int()));
        } else if (strcmp(op, "mbqm") == 0) {
            const int32_t x = next_s32();
            const int32_t m = next_s32();
            printf("%ld\n", (long)kiln_mbqm(x, m, next_int()));
        } else if (strcmp(op, "mbqm64") == 0) {
            const int64_t x = (int64_t)next_long();
            const int32_t m = next_s32();
            printf("%ld\n", (long)kiln_mbqm_s64(x, m, next_int()));
        } else if (strcmp(op, "satshl") == 0) {
            const int32_t x = next_s32();
            printf("%ld\n", (long)kiln_sat_shl_s32(x, next_int()));
        } else if (strcmp(op, "halfsum") == 0) {
            const int32_t a = next_s32();
            printf("%ld\n", (long)kiln_rounding_half_sum(a, next_s32()));
        } else if (strcmp(op, "clz") == 0) {
            printf("%d\n", kiln_clz_u32((uint32_t)next_long()));
        } else if (strcmp(op, "exp") == 0) {
            const int32_t a = next_s32();
            printf("%ld\n", (long)kiln_exp_on_negative_values(a, next_int()));
        } else if (strcmp(op, "oneover") == 0) {
            printf("%ld\n", (long)kiln_one_over_one_plus_x_for_x_in_0_1(next_s32()));
        } else if (strcmp(op, "recip") == 0) {
            int nbou = 0;
            const int32_t x = next_s32();
            const int32_t r = kiln_get_reciprocal(x, next_int(), &nbou);
            printf("%ld %d\n", (long)r, nbou);
        } else if (strcmp(op, "avg") == 0) {
            const int32_t acc = next_s32();
            printf("%ld\n", (long)kiln_rounding_avg_s32(acc, next_s32()));
        } else if (strcmp(op, "softmax8") == 0) {
            run_softmax(8);
        } else if (strcmp(op, "softmax16") == 0) {
            run_softmax(16);
        } else if (strcmp(op, "l2norm") == 0) {
            run_l2norm();
        } else if (strcmp(op, "invsqrt") == 0) {
            int shift = 0;
            const int32_t m = kiln_inv_sqrt_multiplier(next_s32(), &shift);
            printf("%ld %d\n", (long)m, shift);
        } else if (strcmp(op, "logsoftmax") == 0) {
            run_log_softmax();
        } else if (strcmp(op, "log") == 0) {
            printf("%ld\n", (long)kiln_log_q12_to_q5(next_s32()));
        } else if (strcmp(op, "add") == 0 || strcmp(op, "sub") == 0 || strcmp(op, "sqdiff8") == 0
                   || strcmp(op, "sqdiff16") == 0) {
            kiln_add_params p;
            long x1, x2;
            p.left_shift = next_s32();
            p.input1_offset = next_s32(); p.input1_multiplier = next_s32();
            p.input1_shift = next_s32();
            p.input2_offset = next_s32(); p.input2_multiplier = next_s32();
            p.input2_shift = next_s32();
            p.output_offset = next_s32(); p.output_multiplier = next_s32();
            p.output_shift = next_s32();
            p.act_min = next_s32(); p.act_max = next_s32();
            x1 = next_long();
            x2 = next_long();
            if (strcmp(op, "sqdiff16") == 0) {
                printf("%d\n", kiln_squared_difference_s16((int16_t)x1, (int16_t)x2, &p));
            } else if (strcmp(op, "sqdiff8") == 0) {
                printf("%d\n", kiln_squared_difference_s8((int8_t)x1, (int8_t)x2, &p));
            } else {
                printf("%d\n", op[0] == 'a' ? kiln_add_s8((int8_t)x1, (int8_t)x2, &p)
                                             : kiln_sub_s8((int8_t)x1, (int8_t)x2, &p));
            }
        } else if (strcmp(op, "mul") == 0 || strcmp(op, "div") == 0) {
            kiln_mul_params p;
            int8_t x1, x2;
            p.input1_offset = next_s32(); p.input2_offset = next_s32();
            p.output_offset = next_s32(); p.output_multiplier = next_s32();
            p.output_shift = next_s32(); p.act_min = next_s32(); p.act_max = next_s32();
            x1 = (int8_t)next_long();
            x2 = (int8_t)next_long();
            printf("%d\n", op[0] == 'm' ? kiln_mul_s8(x1, x2, &p) : kiln_div_s8(x1, x2, &p));
        } else if (strcmp(op, "quant") == 0) {
            const float x = next_f32();
            const float scale = next_f32();
            printf("%d\n", kiln_quantize_f32_s8(x, scale, next_s32()));
        } else if (strcmp(op, "requant") == 0) {
            const int8_t x = (int8_t)next_long();
            const int32_t m = next_s32();
            const int s = next_int();
            const int32_t izp = next_s32();
            printf("%d\n", kiln_requantize_s8(x, m, s, izp, next_s32()));
        } else if (strcmp(op, "deq") == 0) {
            const int8_t x = (int8_t)next_long();
            const float scale = next_f32();
            printf("%lu\n", (unsigned long)f32_bits(kiln_dequantize_s8(x, scale, next_s32())));
        } else {
            fprintf(stderr, "test_kiln_quant: unknown op '%s'\n", op);
            return 2;
        }
    }
    return 0;
}
