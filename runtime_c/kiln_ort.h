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
 * implies -ffp-contract=off in gcc; the build glue passes it) gives the same bits. Only
 * stdint.h; no libm.
 */
#ifndef KILN_ORT_H
#define KILN_ORT_H

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

#endif /* KILN_ORT_H */
