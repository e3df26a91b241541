/*
 * kiln_fixedpoint.h - the integer primitives of TFLite Micro's int8 arithmetic, in C99.
 *
 * Bit-exact mirrors of gemmlowp's fixedpoint.h and TFLM's kernels/internal/common.h, as the
 * default TFLM build (not TFLITE_SINGLE_ROUNDING) computes them. The numpy emulation in
 * codegen/quant/fixedpoint.py is the specification; tests/quant checks the two agree.
 *
 * Free of undefined behaviour by construction: no signed overflow (wrapping sums go
 * through uint32_t), no left shift of negative values, no right shift of negative values
 * (arithmetic shifts are built from shifts of non-negative values). Needs only stdint.h;
 * correct wherever int is 16 or 32 bits wide and int32_t/int64_t exist (Cortex-M, x86-64).
 */
#ifndef KILN_FIXEDPOINT_H
#define KILN_FIXEDPOINT_H

#include <stdint.h>

#define KILN_INT32_MAX ((int32_t)2147483647L)
#define KILN_INT32_MIN ((int32_t)(-2147483647L - 1L))

/* Two's-complement reinterpretation of u as int32_t, without relying on the
 * implementation-defined unsigned-to-signed conversion. Compiles to nothing. */
static inline int32_t kiln_s32_from_u32(uint32_t u)
{
    if (u <= 0x7FFFFFFFUL) {
        return (int32_t)u;
    }
    return (int32_t)(-(int32_t)(~u) - 1);
}

/* a + b and a - b modulo 2^32: gemmlowp's raw int32 operator+ / operator-. */
static inline int32_t kiln_add_wrap_s32(int32_t a, int32_t b)
{
    return kiln_s32_from_u32((uint32_t)a + (uint32_t)b);
}

static inline int32_t kiln_sub_wrap_s32(int32_t a, int32_t b)
{
    return kiln_s32_from_u32((uint32_t)a - (uint32_t)b);
}

/* x * 2^n modulo 2^32, 0 <= n <= 31 (TFLM's `x * (1 << n)`). */
static inline int32_t kiln_shl_wrap_s32(int32_t x, int n)
{
    return kiln_s32_from_u32((uint32_t)x << n);
}

/* Arithmetic (flooring) right shift, 0 <= n <= 31. */
static inline int32_t kiln_asr_s32(int32_t x, int n)
{
    return (x >= 0) ? (int32_t)(x >> n) : (int32_t)~(~x >> n);
}

/* Arithmetic (flooring) right shift of an int64_t, 0 <= n <= 63. */
static inline int64_t kiln_asr_s64(int64_t x, int n)
{
    return (x >= 0) ? (int64_t)(x >> n) : (int64_t)~(~x >> n);
}

/* min(max(x, lo), hi). */
static inline int32_t kiln_clamp_s32(int32_t x, int32_t lo, int32_t hi)
{
    return (x < lo) ? lo : ((x > hi) ? hi : x);
}

/* Saturate to int8 / int16. */
static inline int8_t kiln_sat_s8(int32_t x)
{
    return (int8_t)kiln_clamp_s32(x, -128, 127);
}

static inline int16_t kiln_sat_s16(int32_t x)
{
    return (int16_t)kiln_clamp_s32(x, -32768, 32767);
}

/* gemmlowp SaturatingRoundingDoublingHighMul (ARM VQRDMULH): a * b / 2^31 rounded to
 * nearest, ties toward +infinity (gemmlowp's nudge then truncating division); INT32_MIN *
 * INT32_MIN saturates to INT32_MAX. The division by 2^31 is written as shifts of a
 * non-negative value, so no 64-bit division helper is called. */
static inline int32_t kiln_srdhm(int32_t a, int32_t b)
{
    const int64_t ab = (int64_t)a * (int64_t)b;
    if (a == KILN_INT32_MIN && b == KILN_INT32_MIN) {
        return KILN_INT32_MAX;
    }
    if (ab >= 0) {
        return (int32_t)((ab + ((int64_t)1 << 30)) >> 31);
    }
    return (int32_t)-((((int64_t)1 << 30) - 1 - ab) >> 31);
}

/* gemmlowp RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero;
 * 0 <= exponent <= 31. */
static inline int32_t kiln_rdbpot(int32_t x, int exponent)
{
    const int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
    const int32_t remainder = (int32_t)(x & mask);
    const int32_t threshold = (int32_t)((mask >> 1) + ((x < 0) ? 1 : 0));
    return (int32_t)(kiln_asr_s32(x, exponent) + ((remainder > threshold) ? 1 : 0));
}

/* gemmlowp SaturatingRoundingMultiplyByPOT for 0 <= exponent <= 30: x * 2^exponent,
 * saturated to the int32 range. */
static inline int32_t kiln_sat_shl_s32(int32_t x, int exponent)
{
    int32_t threshold;
    if (exponent == 0) {
        return x;
    }
    threshold = (int32_t)(((int32_t)1 << (31 - exponent)) - 1);
    if (x > threshold) {
        return KILN_INT32_MAX;
    }
    if (x < -threshold) {
        return KILN_INT32_MIN;
    }
    return kiln_shl_wrap_s32(x, exponent);
}

/* TFLM MultiplyByQuantizedMultiplier (double rounding): x * multiplier * 2^(shift - 31).
 * shift > 0 shifts x left first (wrapping, as TFLM); shift < 0 is a rounding right shift
 * after the high multiply. Also TFLM's ...SmallerThanOneExp and ...GreaterThanOne. */
static inline int32_t kiln_mbqm(int32_t x, int32_t multiplier, int shift)
{
    const int left = (shift > 0) ? shift : 0;
    const int right = (shift > 0) ? 0 : -shift;
    return kiln_rdbpot(kiln_srdhm(kiln_shl_wrap_s32(x, left), multiplier), right);
}

/* Requantize an int32 accumulator to int8: mbqm, add the output zero point, clamp to the
 * fused activation range [act_min, act_max] (the tail of every TFLM int8 conv/FC kernel). */
static inline int8_t kiln_requant_s8(int32_t acc, int32_t multiplier, int shift,
                                     int32_t output_zero_point, int32_t act_min,
                                     int32_t act_max)
{
    const int32_t scaled = kiln_mbqm(acc, multiplier, shift);
    return (int8_t)kiln_clamp_s32(kiln_add_wrap_s32(scaled, output_zero_point), act_min,
                                  act_max);
}

/* gemmlowp RoundingHalfSum: (a + b) / 2, ties away from zero. */
static inline int32_t kiln_rounding_half_sum(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + (int64_t)b;
    if (sum >= 0) {
        return (int32_t)((sum + 1) >> 1);
    }
    return (int32_t)-((1 - sum) >> 1);
}

/* Leading zero bits of x (32 for 0), TFLM CountLeadingZeros. */
static inline int kiln_clz_u32(uint32_t x)
{
    int n = 0;
    if (x == 0U) {
        return 32;
    }
#if defined(__GNUC__)
    n = __builtin_clz((unsigned int)x) - (int)(8U * sizeof(unsigned int) - 32U);
#else
    while ((x & 0x80000000UL) == 0U) {
        x <<= 1;
        ++n;
    }
#endif
    return n;
}

/* TFLM CountLeadingSignBits for int32: the redundant sign bits of x (31 for 0 and -1). */
static inline int kiln_clrsb_s32(int32_t x)
{
    return kiln_clz_u32((x >= 0) ? (uint32_t)x : (uint32_t)~x) - 1;
}

/* kiln_rdbpot for exponents that may exceed 31 (TFLM's int8 DIV on tiny quotients). There
 * gemmlowp's C++ is undefined; the TFLite Micro reference build computes the x86-64 reading
 * (mask -1, shift count modulo 32), which Kiln reproduces to stay bit-exact with it. */
static inline int32_t kiln_rdbpot_wide(int32_t x, int exponent)
{
    if (exponent <= 31) {
        return kiln_rdbpot(x, exponent);
    }
    return kiln_add_wrap_s32(kiln_asr_s32(x, exponent & 31), (x >= 0) ? 1 : 0);
}

/* TFLM int8 AveragePool: a window sum divided by its element count, rounded half away
 * from zero (count > 0). */
static inline int32_t kiln_rounding_avg_s32(int32_t acc, int32_t count)
{
    return (acc > 0) ? (acc + count / 2) / count : (acc - count / 2) / count;
}

/* TFLM MultiplyByQuantizedMultiplier(int64_t x, ...), the int16 (16x8) kernels' output
 * stage: the multiplier rounded to 15 bits (0x7FFF at most), one product and one rounding
 * right shift by 15 - shift (-31 <= shift <= 7). |x| < 2^47 (checked by the compiler), so
 * the product fits int64_t; the int32 result is taken modulo 2^32 as TFLM's cast. */
static inline int32_t kiln_mbqm_s64(int64_t x, int32_t multiplier, int shift)
{
    const int64_t reduced = (multiplier < 0x7FFF0000L) ? (((int64_t)multiplier + 32768) >> 16) : 0x7FFF;
    const int total = 15 - shift;
    const int64_t r = kiln_asr_s64(x * reduced + ((int64_t)1 << (total - 1)), total);
    return kiln_s32_from_u32((uint32_t)(uint64_t)r);
}

/* Requantize an int64 accumulator to int16 (the tail of TFLM's 16x8 conv / depthwise / FC
 * kernels): kiln_mbqm_s64, plus the output zero point, clamped to the fused activation. */
static inline int16_t kiln_requant_s16(int64_t acc, int32_t multiplier, int shift,
                                       int32_t output_zero_point, int32_t act_min,
                                       int32_t act_max)
{
    const int32_t scaled = kiln_mbqm_s64(acc, multiplier, shift);
    return (int16_t)kiln_clamp_s32(kiln_add_wrap_s32(scaled, output_zero_point), act_min,
                                   act_max);
}

#endif /* KILN_FIXEDPOINT_H */
