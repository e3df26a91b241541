/* kiln_float.h: float32 <-> the narrow float formats ONNX stores tensors in (float16,
 * bfloat16, the four float8 formats, float4e2m1), as their bit patterns.
 *
 * Kiln computes these tensors in float32 and converts at the model's inputs and outputs and at
 * Cast, the way onnx's reference does (ml_dtypes): round to nearest, ties to even; an overflow
 * becomes infinity where the format has one, else NaN, or the largest finite value when
 * saturating (ONNX Cast's `saturate`, the default for float8; float4e2m1 always saturates).
 * Only integer arithmetic on the bits: no libm, no FPU rounding modes involved. Tested bit for
 * bit against ml_dtypes on every code and on random float32 bit patterns (tests/ops/test_cast.py). */
#ifndef KILN_FLOAT_H
#define KILN_FLOAT_H

#include <stdint.h>

typedef struct {
    uint32_t man_bits; /* stored mantissa bits */
    int32_t bias;      /* exponent bias */
    uint32_t sign_bit; /* the sign bit of a code */
    uint32_t max_code; /* magnitude code of the largest finite value */
    uint32_t inf_code; /* magnitude code of infinity (IEEE layout: larger codes are NaN); 0: none */
    uint32_t nan_code; /* code written for NaN (0x80 for the "fnuz" formats); 0: no NaN code */
    uint32_t neg_zero; /* 1 if the format has -0 (the "fnuz" formats do not) */
    uint32_t no_nan;   /* 1 if the format has no NaN (always saturates) */
} kiln_float_format;

static const kiln_float_format kiln_float16 = {10u, 15, 0x8000u, 0x7BFFu, 0x7C00u, 0x7E00u, 1u, 0u};
static const kiln_float_format kiln_bfloat16 = {7u, 127, 0x8000u, 0x7F7Fu, 0x7F80u, 0x7FC0u, 1u, 0u};
static const kiln_float_format kiln_float8e4m3fn = {3u, 7, 0x80u, 0x7Eu, 0u, 0x7Fu, 1u, 0u};
static const kiln_float_format kiln_float8e4m3fnuz = {3u, 8, 0x80u, 0x7Fu, 0u, 0x80u, 0u, 0u};
static const kiln_float_format kiln_float8e5m2 = {2u, 15, 0x80u, 0x7Bu, 0x7Cu, 0x7Eu, 1u, 0u};
static const kiln_float_format kiln_float8e5m2fnuz = {2u, 16, 0x80u, 0x7Fu, 0u, 0x80u, 0u, 0u};
/* float4e2m1 has no NaN: ml_dtypes (onnx's reference) writes the code of -0 for it */
static const kiln_float_format kiln_float4e2m1 = {1u, 1, 0x8u, 0x7u, 0u, 0x8u, 1u, 1u};

static inline uint32_t kiln_float_bits(float x)
{
    union { float f; uint32_t u; } v;
    v.f = x;
    return v.u;
}

static inline float kiln_float_from_bits(uint32_t u)
{
    union { float f; uint32_t u; } v;
    v.u = u;
    return v.f;
}

/* The code of `x` in format `f`, rounded to nearest even. */
static inline uint32_t kiln_float_encode(float x, const kiln_float_format *f, int saturate)
{
    const uint32_t u = kiln_float_bits(x);
    const uint32_t a = u & 0x7FFFFFFFu;
    uint32_t sign = (u >> 31) != 0u ? f->sign_bit : 0u;
    uint32_t exp32 = a >> 23;
    uint32_t full = a & 0x7FFFFFu;
    uint32_t r;
    int32_t e;
    int32_t shift = 23 - (int32_t)f->man_bits;
    if (a > 0x7F800000u) {
        return f->no_nan ? f->nan_code ^ sign : f->nan_code | sign; /* as ml_dtypes does */
    }
    if (exp32 != 0u) {
        full |= 0x800000u;
    } else {
        exp32 = 1u; /* float32 subnormal */
    }
    /* |x| = full * 2^(exp32 - 150); e is the format's biased exponent of that value */
    e = (int32_t)exp32 - 127 + f->bias;
    {
        uint32_t mant;
        uint32_t rem;
        uint32_t half;
        if (e <= 0) {
            shift += 1 - e; /* a subnormal of the format */
            e = 0;
        }
        if (shift > 25) {
            mant = 0u;
            rem = 0u;
            half = 1u;
        } else {
            mant = full >> shift;
            rem = full & ((1u << shift) - 1u);
            half = 1u << (shift - 1);
        }
        /* a normal `mant` carries the implicit bit, which adds the 1 to e - 1 */
        r = (e == 0 ? 0u : (uint32_t)(e - 1) << f->man_bits) + mant;
        if (rem > half || (rem == half && (r & 1u) != 0u)) {
            r += 1u; /* a carry into the exponent is the right next code */
        }
    }
    if (r > f->max_code) { /* infinity included */
        if (saturate || f->no_nan) {
            r = f->max_code;
        } else if (f->inf_code != 0u) {
            r = f->inf_code;
        } else {
            return f->nan_code | sign;
        }
    }
    if (r == 0u && !f->neg_zero) {
        sign = 0u;
    }
    return r | sign;
}

/* The float32 value of code `c` of format `f` (exact: every such value is a float32). */
static inline float kiln_float_decode(uint32_t c, const kiln_float_format *f)
{
    const uint32_t sign = (c & f->sign_bit) != 0u ? 0x80000000u : 0u;
    const uint32_t mag = c & (f->sign_bit - 1u);
    const uint32_t mask = (1u << f->man_bits) - 1u;
    int32_t e = (int32_t)(mag >> f->man_bits);
    uint32_t m = mag & mask;
    if (f->inf_code != 0u && mag >= f->inf_code) {
        return kiln_float_from_bits(sign | (mag == f->inf_code ? 0x7F800000u : 0x7FC00000u));
    }
    if (f->inf_code == 0u && !f->no_nan && (f->neg_zero ? mag == f->nan_code : c == f->nan_code)) {
        return kiln_float_from_bits(sign | 0x7FC00000u); /* NaN keeps the code's sign, as in ml_dtypes */
    }
    if (f->bias == 127) {
        return kiln_float_from_bits(sign | (mag << (23u - f->man_bits))); /* bfloat16: float32's top half */
    }
    if (e == 0) {
        if (m == 0u) {
            return kiln_float_from_bits(sign);
        }
        e = 1;
        while ((m & (1u << f->man_bits)) == 0u) { /* normalise the subnormal */
            m <<= 1;
            e -= 1;
        }
        m &= mask;
    }
    return kiln_float_from_bits(sign | ((uint32_t)(e - f->bias + 127) << 23) | (m << (23u - f->man_bits)));
}

/* float8e8m0 (a biased power of two, 0xFF is NaN) as onnx's reference converts to it: the
 * float32 exponent, the sign ignored, rounded by `round_mode` (0 up, 1 down, 2 nearest even);
 * saturating keeps the largest power from rounding to NaN. */
static inline uint32_t kiln_float8e8m0_encode(float x, int saturate, int round_mode)
{
    const uint32_t u = kiln_float_bits(x);
    uint32_t e = (u >> 23) & 0xFFu;
    uint32_t up;
    if (e == 0xFFu) {
        return 0xFFu;
    }
    if (round_mode == 0) {
        up = (u & 0x7FFFFFu) != 0u;
    } else if (round_mode == 2) {
        up = (u & 0x400000u) != 0u && ((u & 0x200000u) != 0u || (u & 0x1FFFFFu) != 0u || e > 0u);
    } else {
        up = 0u;
    }
    if (saturate && e == 0xFEu) {
        up = 0u;
    }
    return e + up;
}

static inline float kiln_float8e8m0_decode(uint32_t c)
{
    return kiln_float_from_bits(c == 0xFFu ? 0x7FC00000u : (c == 0u ? 0x00400000u : c << 23));
}

#endif /* KILN_FLOAT_H */
