/*
 * kiln_mve.h - building blocks of Kiln's int8 kernels for Helium (Armv8.1-M MVE, Cortex-M55):
 * intrinsics from arm_mve.h. Bit-exact with the portable kernels (TFLite Micro's integer
 * arithmetic): the sums are the same integers (VMLADAVA.S8 adds 16 products into an int32),
 * and the requantization is TFLM's MultiplyByQuantizedMultiplier lane by lane — VQRDMULH is
 * gemmlowp's rounding doubling high multiply, and VRSHL after adding -1 to negative lanes
 * (saturating) is its rounding right shift, ties away from zero, as CMSIS-NN does it.
 * Weights and per-channel constants arrive repacked by codegen/lower/repack.py.
 */
#ifndef KILN_MVE_H
#define KILN_MVE_H

#include <stdint.h>
#include <arm_mve.h>

#if !defined(__ARM_FEATURE_MVE)
#error "kiln_mve.h: this target has no Helium (MVE); build for another kernel variant"
#endif

/* n bytes from src to dst / of v at dst, 16 at a time, a last partial vector predicated
 * (outside the loop: GCC 12 spends three instructions a step on a VCTP made inside it). */
static inline void kiln_mve_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 16; n -= 16, dst += 16, src += 16) {
        vstrbq_s8(dst, vldrbq_s8(src));
    }
    if (n > 0) {
        const mve_pred16_t p = vctp8q((uint32_t)n);
        vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
    }
}

static inline void kiln_mve_fill_s8(int8_t *dst, int32_t v, int32_t n)
{
    const int8x16_t x = vdupq_n_s8((int8_t)v);
    for (; n >= 16; n -= 16, dst += 16) {
        vstrbq_s8(dst, x);
    }
    if (n > 0) {
        vstrbq_p_s8(dst, x, vctp8q((uint32_t)n));
    }
}

/* Four rows of packed weights (repack.mve_gemm_rows: 16 bytes of each row in turn) times
 * one int8 column, over `groups` groups of 16: acc[r] += row r . col. Returns w past the
 * block of rows. */
static inline const int8_t *kiln_mve_dot_4x1(const int8_t *w, const int8_t *col, int32_t groups,
                                             int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (; groups > 0; --groups) {
        const int8x16_t x = vldrbq_s8(col);
        a0 = vmladavaq_s8(a0, x, vldrbq_s8(w));
        a1 = vmladavaq_s8(a1, x, vldrbq_s8(w + 16));
        a2 = vmladavaq_s8(a2, x, vldrbq_s8(w + 32));
        a3 = vmladavaq_s8(a3, x, vldrbq_s8(w + 48));
        col += 16;
        w += 64;
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return w;
}

/* TFLM's MultiplyByQuantizedMultiplier on four lanes: the wrapping left shift, VQRDMULH,
 * and VRSHL by right (minus the right shift) after the fix-up of negative lanes. */
static inline int32x4_t kiln_mve_mbqm(int32x4_t x, int32x4_t multiplier, int32x4_t left, int32x4_t right)
{
    x = vqrdmulhq_s32(vshlq_s32(x, left), multiplier);
    return vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31)), right);
}

/* TFLM's output stage for four channels: acc (bias included) times the quantized
 * multipliers of t (repack.mve_requant: bias, multiplier, left shift, minus right shift,
 * four lanes each), plus the output zero point, clamped to [lo, hi]. */
static inline int32x4_t kiln_mve_requant(int32x4_t acc, const int32_t *t, int32_t zp, int32_t lo, int32_t hi)
{
    const int32x4_t x = kiln_mve_mbqm(acc, vldrwq_s32(t + 4), vldrwq_s32(t + 8), vldrwq_s32(t + 12));
    return vminq_s32(vmaxq_s32(vaddq_n_s32(x, zp), vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/* Four scalars as a vector. */
static inline int32x4_t kiln_mve_vec4(const int32_t a[4])
{
    return vldrwq_s32(a);
}

#endif /* KILN_MVE_H */
