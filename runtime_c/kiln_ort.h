/*
 * kiln_ort.h - onnxruntime's integer arithmetic (its CPU kernels and MLAS on x86) for Kiln's
 * generated code under `--numerics onnxruntime`, in C99.
 *
 * onnxruntime requantizes in float32: an int32 sum becomes float, is multiplied by one float
 * scale (x_scale * w_scale / y_scale, computed at compile time by codegen/quant/onnxruntime.py
 * exactly as onnxruntime computes it), clamped to the output type's range and rounded half to
 * even (MLAS's cvtps2dq under the default rounding mode), then the zero point is added. Every
 * step is one IEEE float32 operation, so any C99 compiler with an FPU or soft float that keeps
 * float arithmetic in float (FLT_EVAL_METHOD 0) and does not fuse multiply-adds (-std=c99
 * implies -ffp-contract=off in gcc; the build glue passes it) gives the same bits. QLinearAdd
 * multiplies and adds in fused steps as onnxruntime's AVX2 kernel does: fmaf (one VFMA.F32
 * on Cortex-M4F/M7/M33/M55, the C library's exact fmaf elsewhere).
 */
#ifndef KILN_ORT_H
#define KILN_ORT_H

#include <math.h>
#include <stdint.h>

/* Round half to even of |v| <= 2^22 (every use clamps first): adding and subtracting 1.5 * 2^23
 * leaves the integer that round-to-nearest-even picks, as nearbyintf does in the default mode. */
static inline int32_t kiln_ort_round(float v)
{
    const float shifted = v + 12582912.0f;
    return (int32_t)(shifted - 12582912.0f);
}

/* MlasRequantizeOutput: round(clamp(float(acc) * scale)) + zero_point, the clamp taken in
 * output units before rounding ([lo, hi]: the int8 range or a fused activation's). */
static inline int8_t kiln_ort_requant_s8(int32_t acc, float scale, int32_t zero_point, int32_t lo, int32_t hi)
{
    float v = (float)acc * scale;
    const float vmin = (float)(lo - zero_point);
    const float vmax = (float)(hi - zero_point);
    v = v < vmin ? vmin : v;
    v = v > vmax ? vmax : v;
    return (int8_t)(kiln_ort_round(v) + zero_point);
}

/* MlasQuantizeLinear: round(clamp(x / scale)) + zero_point (NaN maps to the lower bound, as
 * MAXPS returns its second operand). */
static inline int8_t kiln_ort_quantize_s8(float x, float scale, int32_t zero_point)
{
    float v = x / scale;
    const float vmin = (float)(-128 - zero_point);
    const float vmax = (float)(127 - zero_point);
    v = v > vmin ? v : vmin;
    v = v < vmax ? v : vmax;
    return (int8_t)(kiln_ort_round(v) + zero_point);
}

/* A value in the original type's units (offset 128: ONNX uint8, 0: int8) rounded half to even
 * and saturated, as Kiln's int8 (uint8 shifted by -128). */
static inline int8_t kiln_ort_saturate_s8(float v, int32_t offset)
{
    int32_t r;
    v = v > -4194304.0f ? v : -4194304.0f; /* beyond +-2^22 every value saturates anyway */
    v = v < 4194304.0f ? v : 4194304.0f;
    r = kiln_ort_round(v) - offset;
    return (int8_t)(r < -128 ? -128 : (r > 127 ? 127 : r));
}

/* QLinearAdd's constants (MlasQLinearAddKernelAvx2Helper), zero points in the original units */
typedef struct {
    float ratio_a;     /* a_scale / c_scale */
    float ratio_b;     /* b_scale / c_scale */
    float fixed;       /* c_zp - fmaf(ratio_a, a_zp, ratio_b * b_zp) */
    int32_t a_offset;  /* 128 for a uint8 input (Kiln holds it shifted), else 0 */
    int32_t b_offset;
    int32_t out_offset;
} kiln_ort_add_q;

/* QLinearAdd: fmaf(a, ratio_a, fmaf(b, ratio_b, fixed)) on the original values, rounded half
 * to even, saturated; an input broadcast along the innermost loop enters the fixed part
 * first, as onnxruntime's scalar path does (a_scalar). */
static inline int8_t kiln_ort_add_s8(int8_t a, int8_t b, const kiln_ort_add_q *q, int a_scalar)
{
    const float fa = (float)((int32_t)a + q->a_offset);
    const float fb = (float)((int32_t)b + q->b_offset);
    const float v = a_scalar ? fmaf(fb, q->ratio_b, fmaf(fa, q->ratio_a, q->fixed))
                             : fmaf(fa, q->ratio_a, fmaf(fb, q->ratio_b, q->fixed));
    return kiln_ort_saturate_s8(v, q->out_offset);
}

/* QLinearMul's constants (MlasQLinearMulKernel, SSE2) */
typedef struct {
    float ratio;       /* (a_scale * b_scale) / c_scale */
    float out_zp;      /* c_zp in the original units, as float */
    int32_t a_zp;      /* Kiln's (shifted) input zero points */
    int32_t b_zp;
    int32_t out_offset;
} kiln_ort_mul_q;

/* QLinearMul: float((a - a_zp) * (b - b_zp)) * ratio + c_zp, rounded half to even, saturated. */
static inline int8_t kiln_ort_mul_s8(int8_t a, int8_t b, const kiln_ort_mul_q *q, int a_scalar)
{
    const int32_t product = ((int32_t)a - q->a_zp) * ((int32_t)b - q->b_zp);
    (void)a_scalar;
    return kiln_ort_saturate_s8((float)product * q->ratio + q->out_zp, q->out_offset);
}

#endif /* KILN_ORT_H */
