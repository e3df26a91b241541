/*
 * kiln_neon_hybrid.h - TFLite's hybrid (dynamic-range) kernels on AArch64 NEON: the float
 * input quantized to int8 on the fly with NEON, the int8 GEMM of kiln_neon_s8.h (SMULL/SMLAL
 * or SDOT), and a float epilogue four channels at a time.
 *
 * Bit-exact with the portable hybrid kernel (templates/kernels/reference/hybrid_conv2d_f32):
 * - the quantization does kiln_hybrid.h's float operations lane by lane (x * inv, the clamp
 *   to the code range, trunc(t +- 0.5f) in whole blocks of 8, the scalar rounding of the tail);
 * - the GEMM sums q * w with padding taps reading the zero point, and the epilogue subtracts
 *   zp * sum(w) of the channel: the same int32 as sum((q - zp) * w) over the taps inside;
 * - (float)acc * (in_scale * w_scale) + bias, then the clamp, as two roundings (no FMA: the
 *   kernels are compiled as ISO C, where GCC does not contract).
 */
#ifndef KILN_NEON_HYBRID_H
#define KILN_NEON_HYBRID_H

#include "kiln_hybrid.h"
#include "kiln_neon_s8.h"

/* x * inv clamped to [lo, hi] (NaN to lo: FMAXNM returns the number) and rounded as LiteRT's
 * vector loop: trunc(t +- 0.5f). */
KILN_NEON_INLINE int32x4_t kiln_neon_hybrid_round4(float32x4_t x, float inv, float32x4_t lo, float32x4_t hi)
{
    const float32x4_t t = vminq_f32(vmaxnmq_f32(vmulq_n_f32(x, inv), lo), hi);
    return vcvtq_s32_f32(vaddq_f32(t, vbslq_f32(vcltq_f32(t, vdupq_n_f32(0.0f)), vdupq_n_f32(-0.5f),
                                                  vdupq_n_f32(0.5f))));
}

/* Eight codes zp + round(x[i] * inv) of x[0..8) to q[0..8). */
KILN_NEON_INLINE void kiln_neon_hybrid_codes8(const float *x, float inv, int32x4_t vzp, float32x4_t vlo,
                                              float32x4_t vhi, int8_t *q)
{
    const int32x4_t a = vaddq_s32(kiln_neon_hybrid_round4(vld1q_f32(x), inv, vlo, vhi), vzp);
    const int32x4_t b = vaddq_s32(kiln_neon_hybrid_round4(vld1q_f32(x + 4), inv, vlo, vhi), vzp);
    vst1_s8(q, kiln_neon_narrow8(a, b));
}

/* q[i] = zp + round(x[i] * inv) for the n elements, the code range [lo, hi] relative to zp:
 * two blocks of 8 per iteration, then one. */
KILN_NEON_INLINE void kiln_neon_hybrid_codes(const float *x, int32_t n, float inv, int32_t zp, int32_t lo,
                                             int32_t hi, int8_t *q)
{
    const int32_t blocks = n - n % KILN_HYBRID_BLOCK;
    const float32x4_t vlo = vdupq_n_f32((float)lo), vhi = vdupq_n_f32((float)hi);
    const int32x4_t vzp = vdupq_n_s32(zp);
    int32_t i;
    for (i = 0; i + 16 <= blocks; i += 16) {
        kiln_neon_hybrid_codes8(x + i, inv, vzp, vlo, vhi, q + i);
        kiln_neon_hybrid_codes8(x + i + 8, inv, vzp, vlo, vhi, q + i + 8);
    }
    if (i < blocks) {
        kiln_neon_hybrid_codes8(x + i, inv, vzp, vlo, vhi, q + i);
        i += 8;
    }
    for (; i < n; ++i) {
        q[i] = (int8_t)(zp + kiln_hybrid_round(x[i] * inv, i, n, (float)lo, (float)hi));
    }
}

/* kiln_hybrid_quantize_symmetric with NEON: the same codes and scale. */
static inline float kiln_neon_hybrid_quantize_symmetric(const float *x, int32_t n, int8_t *q)
{
    /* maxnm: a NaN is skipped, as a > range skips it; four running maxima, 16 floats a step */
    float32x4_t m0 = vdupq_n_f32(0.0f), m1 = m0, m2 = m0, m3 = m0;
    float range;
    int32_t i;
    for (i = 0; i + 16 <= n; i += 16) {
        m0 = vmaxnmq_f32(m0, vabsq_f32(vld1q_f32(x + i)));
        m1 = vmaxnmq_f32(m1, vabsq_f32(vld1q_f32(x + i + 4)));
        m2 = vmaxnmq_f32(m2, vabsq_f32(vld1q_f32(x + i + 8)));
        m3 = vmaxnmq_f32(m3, vabsq_f32(vld1q_f32(x + i + 12)));
    }
    for (; i + 4 <= n; i += 4) {
        m0 = vmaxnmq_f32(m0, vabsq_f32(vld1q_f32(x + i)));
    }
    range = vmaxnmvq_f32(vmaxnmq_f32(vmaxnmq_f32(m0, m1), vmaxnmq_f32(m2, m3)));
    for (; i < n; ++i) {
        const float a = x[i] < 0.0f ? -x[i] : x[i];
        range = a > range ? a : range;
    }
    if (range == 0.0f) {
        kiln_neon_fill_s8(q, 0, n);
        return 1.0f;
    }
    kiln_neon_hybrid_codes(x, n, 127.0f / range, 0, -127, 127, q);
    return range / 127.0f;
}

/* kiln_hybrid_quantize_asymmetric with NEON: the range reduced four lanes at a time, the
 * parameters in double by the portable code (kiln_hybrid_asymmetric_params), the codes here. */
static inline float kiln_neon_hybrid_quantize_asymmetric(const float *x, int32_t n, int8_t *q, int32_t *zero_point)
{
    float32x4_t vlo = vdupq_n_f32(0.0f), vhi = vdupq_n_f32(0.0f);
    float lo, hi, scale, inv;
    int32_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        vlo = vminnmq_f32(vlo, v);
        vhi = vmaxnmq_f32(vhi, v);
    }
    lo = vminnmvq_f32(vlo);
    hi = vmaxnmvq_f32(vhi);
    for (; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    if (lo == hi) {
        kiln_neon_fill_s8(q, 0, n);
        *zero_point = 0;
        return 1.0f;
    }
    scale = kiln_hybrid_asymmetric_params(lo, hi, zero_point, &inv);
    kiln_neon_hybrid_codes(x, n, inv, *zero_point, -128 - *zero_point, 127 - *zero_point, q);
    return scale;
}

/* Four channels' outputs from their sums of q * w: acc = sums - zp * w_sum, then
 * (float)acc * (in_scale * w_scale) + bias clamped to [lo, hi]; ep holds w_scale then bias. */
KILN_NEON_INLINE float32x4_t kiln_neon_hybrid_out4(int32x4_t sums, const int32_t *w_sum, const float *ep, int32_t zp,
                                                   float in_scale, float32x4_t lo, float32x4_t hi)
{
    const int32x4_t acc = vmlsq_s32(sums, vld1q_s32(w_sum), vdupq_n_s32(zp));
    const float32x4_t y = vaddq_f32(vmulq_f32(vcvtq_f32_s32(acc), vmulq_n_f32(vld1q_f32(ep), in_scale)),
                                    vld1q_f32(ep + 4));
    /* y < lo ? lo : y, then y > hi ? hi : y, a NaN kept: FMAX and FMIN (which differ only by
     * giving +0.0 for max(-0.0, +0.0), and y is -0.0 only for a zero sum, a zero weight scale
     * and a bias of -0.0) */
    return vminq_f32(vmaxq_f32(y, lo), hi);
}

/* The first n (1..4) lanes of v to out[0..n). */
KILN_NEON_INLINE void kiln_neon_store4_f32(float *out, float32x4_t v, int32_t n)
{
    if (n >= 4) {
        vst1q_f32(out, v);
        return;
    }
    out[0] = vgetq_lane_f32(v, 0);
    if (n > 1) {
        out[1] = vgetq_lane_f32(v, 1);
    }
    if (n > 2) {
        out[2] = vgetq_lane_f32(v, 2);
    }
}

/* `cols` columns (1 or 4) of codes times the packed weights of all out_c rows (blocks of four
 * rows, or eight by SDOT), each column's out_c floats written to out + j * out_stride. */
KILN_NEON_INLINE void kiln_neon_hybrid_gemm(const int8_t *w, const int8_t *const col[4], int cols, int32_t groups,
                                            int32_t out_c, int mode, const int32_t *w_sum, const float *ep,
                                            int32_t zp, float in_scale, float act_min, float act_max, float *out,
                                            int32_t out_stride, int32_t out_cols)
{
    const float32x4_t lo = vdupq_n_f32(act_min), hi = vdupq_n_f32(act_max);
    int32_t oc;
    int j;
#if defined(__ARM_FEATURE_DOTPROD)
    if (mode == KILN_NEON_SDOT) {
        for (oc = 0; oc < out_c; oc += 8, w += 128 * groups, w_sum += 8, ep += 16) {
            int32x4_t sums[2][4];
            if (cols == 4) {
                kiln_neon_sdot_tile(w, col, groups, 4, sums);
            } else {
                kiln_neon_sdot_tile(w, col, groups, 1, sums);
            }
            for (j = 0; j < out_cols; ++j) {
                float *o = out + j * out_stride + oc;
                kiln_neon_store4_f32(o, kiln_neon_hybrid_out4(sums[0][j], w_sum, ep, zp, in_scale, lo, hi),
                                     out_c - oc);
                if (out_c - oc > 4) {
                    kiln_neon_store4_f32(o + 4, kiln_neon_hybrid_out4(sums[1][j], w_sum + 4, ep + 8, zp, in_scale,
                                                                      lo, hi), out_c - oc - 4);
                }
            }
        }
        return;
    }
#endif
    for (oc = 0; oc < out_c; oc += 4, w += 64 * groups, w_sum += 4, ep += 8) {
        int32x4_t sums[4];
        kiln_neon_tile(w, col, groups, cols, mode, sums);
        for (j = 0; j < out_cols; ++j) {
            kiln_neon_store4_f32(out + j * out_stride + oc,
                                 kiln_neon_hybrid_out4(sums[j], w_sum, ep, zp, in_scale, lo, hi), out_c - oc);
        }
    }
}

#endif /* KILN_NEON_HYBRID_H */
