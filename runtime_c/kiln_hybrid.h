/*
 * kiln_hybrid.h - on-the-fly input quantization of TFLite's hybrid (dynamic-range) kernels.
 *
 * A hybrid op has float32 activations and int8 weights: it quantizes its float input to
 * int8 once per batch, accumulates in int32 and scales back to float. These functions are
 * the C mirror of codegen/ops/hybrid_quant.py, which is bit-exact with LiteRT's
 * SymmetricQuantizeFloats / AsymmetricQuantizeFloats as built for x86-64 (NEON_2_SSE):
 * elements in whole blocks of 8 round with trunc(t +- 0.5f), the tail half away from zero.
 * The asymmetric parameters are computed in double, as LiteRT does (soft-float on cores
 * without a double FPU: once per batch). Only stdint.h; no libm. Every conversion of a float
 * to an integer is of a value clamped first, so NaN or infinite inputs are not undefined
 * behaviour (their codes are meaningless, as in LiteRT).
 */
#ifndef KILN_HYBRID_H
#define KILN_HYBRID_H

#include <stdint.h>

#define KILN_HYBRID_BLOCK 8

/* std::round of a float in [-2^22, 2^22]: half away from zero, without a rounding addition. */
static inline int32_t kiln_round_half_away_f32(float t)
{
    const int32_t whole = (int32_t)t;
    const float frac = t - (float)whole; /* exact */
    return whole + (frac >= 0.5f ? 1 : 0) - (frac <= -0.5f ? 1 : 0);
}

/* The same for a double in [-2^30, 2^30] (C round()). */
static inline int32_t kiln_round_half_away_f64(double t)
{
    const int32_t whole = (int32_t)t;
    const double frac = t - (double)whole;
    return whole + (frac >= 0.5 ? 1 : 0) - (frac <= -0.5 ? 1 : 0);
}

/* Element i of n of t = x * inv, clamped to [lo, hi] (integral bounds, so clamping first
 * equals clamping the rounded code), rounded as LiteRT's loop rounds position i. */
static inline int32_t kiln_hybrid_round(float t, int32_t i, int32_t n, float lo, float hi)
{
    t = (t >= lo) ? t : lo; /* also maps NaN to lo */
    t = (t <= hi) ? t : hi;
    if (i < n - n % KILN_HYBRID_BLOCK) {
        return (int32_t)(t + (t < 0.0f ? -0.5f : 0.5f));
    }
    return kiln_round_half_away_f32(t);
}

/* SymmetricQuantizeFloats: q[i] in [-127, 127], zero point 0; returns the scale. */
static inline float kiln_hybrid_quantize_symmetric(const float *x, int32_t n, int8_t *q)
{
    float range = 0.0f;
    float inv;
    int32_t i;
    for (i = 0; i < n; ++i) {
        const float a = x[i] < 0.0f ? -x[i] : x[i];
        range = a > range ? a : range;
    }
    if (range == 0.0f) {
        for (i = 0; i < n; ++i) {
            q[i] = 0;
        }
        return 1.0f;
    }
    inv = 127.0f / range;
    for (i = 0; i < n; ++i) {
        q[i] = (int8_t)kiln_hybrid_round(x[i] * inv, i, n, -127.0f, 127.0f);
    }
    return range / 127.0f;
}

/* The parameters of AsymmetricQuantizeFloats for the float range lo = min(0, min x) <
 * hi = max(0, max x), in double as LiteRT computes them: returns the scale, writes the
 * nudged zero point and the float reciprocal of the scale the codes are computed with. */
static inline float kiln_hybrid_asymmetric_params(float lo, float hi, int32_t *zero_point, float *inv)
{
    const double scale = (double)(hi - lo) / 255.0; /* float subtraction, double division */
    const double lo_q = (double)lo / scale;
    const double hi_q = (double)hi / scale;
    const double err_min = 128.0 + (lo_q < 0.0 ? -lo_q : lo_q);
    const double err_max = 127.0 + (hi_q < 0.0 ? -hi_q : hi_q);
    const double zp = err_min < err_max ? -128.0 - lo_q : 127.0 - hi_q;
    const float scale_f = (float)scale;
    if (zp <= -128.0) {
        *zero_point = -128;
    } else if (zp >= 127.0) {
        *zero_point = 127;
    } else {
        *zero_point = kiln_round_half_away_f64(zp);
    }
    *inv = (float)(1.0 / (double)scale_f);
    return scale_f;
}

/* AsymmetricQuantizeFloats: q[i] in [-128, 127] with *zero_point; returns the scale. */
static inline float kiln_hybrid_quantize_asymmetric(const float *x, int32_t n, int8_t *q,
                                                    int32_t *zero_point)
{
    float lo = 0.0f;
    float hi = 0.0f;
    float scale;
    float inv;
    int32_t nudged;
    int32_t i;
    for (i = 0; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    if (lo == hi) {
        for (i = 0; i < n; ++i) {
            q[i] = 0;
        }
        *zero_point = 0;
        return 1.0f;
    }
    scale = kiln_hybrid_asymmetric_params(lo, hi, &nudged, &inv);
    for (i = 0; i < n; ++i) {
        q[i] = (int8_t)(nudged + kiln_hybrid_round(x[i] * inv, i, n, (float)(-128 - nudged),
                                                   (float)(127 - nudged)));
    }
    *zero_point = nudged;
    return scale;
}

#endif /* KILN_HYBRID_H */
