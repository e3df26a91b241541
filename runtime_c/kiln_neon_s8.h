/*
 * kiln_neon_s8.h - building blocks of Kiln's int8 kernels for AArch64 Advanced SIMD (NEON,
 * Cortex-A53/A55/A72/A76): intrinsics from arm_neon.h, SDOT where the core has the dot
 * product extension (Armv8.2-A +dotprod).
 *
 * Bit-exact with the portable kernels (TFLite Micro's integer arithmetic): every sum is the
 * same integer, and kiln_neon_scale4 is TFLM's MultiplyByQuantizedMultiplier lane by lane.
 * VQRDMULH is gemmlowp's SaturatingRoundingDoublingHighMul (floor((2ab + 2^31) / 2^32) equals
 * its ties-away-from-zero rounding for both signs of ab), and VRSHL by -r after adding -1 to
 * negative lanes is RoundingDivideByPOT (ties away from zero), as CMSIS-NN does it.
 * Weights and per-channel constants arrive repacked by codegen/lower/repack.py.
 */
#ifndef KILN_NEON_S8_H
#define KILN_NEON_S8_H

#include <stdint.h>
#include <arm_neon.h>

#if !defined(__aarch64__)
#error "kiln_neon_s8.h: the NEON int8 kernels are written for AArch64"
#endif

/* Helpers are forced inline: the tile's mode argument must be a constant inside the loop. */
#define KILN_NEON_INLINE static inline __attribute__((always_inline))

/* How the GEMM kernels multiply (their `mode`): SMULL/SMLAL2 of two products into int16 then
 * SADALP (only when no weight is -128, so that the two products, each at most 128 * 127,
 * cannot overflow int16), SMULL then SADALP per product (any weights), or SDOT (weights
 * packed differently: kiln_neon_gemm_sdot). */
#define KILN_NEON_MLA_PAIRS 0
#define KILN_NEON_MLA 1
#define KILN_NEON_SDOT 2
/* A fourth, chosen by the convolution itself for windows of at most 8 bytes (a pointwise layer
 * of 8 channels): one SMULL per row and column on the first 8 bytes of the one group (the
 * weights past the window are zero), then SADDLP; exact for any weights. */
#define KILN_NEON_MUL8 3

/* 16 products of x and w added into the four int32 partial sums of acc (MLA modes). */
KILN_NEON_INLINE int32x4_t kiln_neon_mac16(int32x4_t acc, int8x16_t x, int8x16_t w, int mode)
{
    if (mode == KILN_NEON_MLA_PAIRS) {
        return vpadalq_s16(acc, vmlal_high_s8(vmull_s8(vget_low_s8(x), vget_low_s8(w)), x, w));
    }
    return vpadalq_s16(vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(w))), vmull_high_s8(x, w));
}

/* The same 16 products summed into fresh partial sums (SADDLP: no accumulator to zero). */
KILN_NEON_INLINE int32x4_t kiln_neon_mul16(int8x16_t x, int8x16_t w, int mode)
{
    if (mode == KILN_NEON_MLA_PAIRS) {
        return vpaddlq_s16(vmlal_high_s8(vmull_s8(vget_low_s8(x), vget_low_s8(w)), x, w));
    }
    return vpadalq_s16(vpaddlq_s16(vmull_s8(vget_low_s8(x), vget_low_s8(w))), vmull_high_s8(x, w));
}

/* One group of 16 k of the four-by-four MLA_PAIRS tile (kiln_neon_tile_run), written out
 * because GCC, left to schedule its 48 instructions itself, hoists the SMULLs, runs out of
 * registers and spills accumulators inside the loop. Two rows at a time (an asm statement
 * takes at most 30 operands): row r of weights (wa, then wb) against the four columns x[j],
 * SMULL + SMLAL2 into t[j] (two products per int16 lane), then `op` (SADALP to accumulate,
 * SADDLP to start) into a[j] (b[j] for wb). */
#define KILN_NEON_PAIRS_ROW(a, w, op)                                                                 \
    "smull  %[t0].8h, %[x0].8b, %[" w "].8b\n\t"                                                    \
    "smull  %[t1].8h, %[x1].8b, %[" w "].8b\n\t"                                                    \
    "smull  %[t2].8h, %[x2].8b, %[" w "].8b\n\t"                                                    \
    "smull  %[t3].8h, %[x3].8b, %[" w "].8b\n\t"                                                    \
    "smlal2 %[t0].8h, %[x0].16b, %[" w "].16b\n\t"                                                  \
    "smlal2 %[t1].8h, %[x1].16b, %[" w "].16b\n\t"                                                  \
    "smlal2 %[t2].8h, %[x2].16b, %[" w "].16b\n\t"                                                  \
    "smlal2 %[t3].8h, %[x3].16b, %[" w "].16b\n\t"                                                  \
    op " %[" a "0].4s, %[t0].8h\n\t"                                                                 \
    op " %[" a "1].4s, %[t1].8h\n\t"                                                                 \
    op " %[" a "2].4s, %[t2].8h\n\t"                                                                 \
    op " %[" a "3].4s, %[t3].8h\n\t"
/* The same for an 8-byte group (kiln_neon_tile_run's `half`): SMULL of the low halves only. */
#define KILN_NEON_HALF_ROW(a, w, op)                                                                  \
    "smull  %[t0].8h, %[x0].8b, %[" w "].8b\n\t"                                                    \
    "smull  %[t1].8h, %[x1].8b, %[" w "].8b\n\t"                                                    \
    "smull  %[t2].8h, %[x2].8b, %[" w "].8b\n\t"                                                    \
    "smull  %[t3].8h, %[x3].8b, %[" w "].8b\n\t"                                                    \
    op " %[" a "0].4s, %[t0].8h\n\t"                                                                 \
    op " %[" a "1].4s, %[t1].8h\n\t"                                                                 \
    op " %[" a "2].4s, %[t2].8h\n\t"                                                                 \
    op " %[" a "3].4s, %[t3].8h\n\t"
#define KILN_NEON_TILE_ASM(row, op, c)                                                                \
    __asm__(row("a", "wa", op) row("b", "wb", op)                                                     \
            : [a0] c(a[0]), [a1] c(a[1]), [a2] c(a[2]), [a3] c(a[3]),                               \
              [b0] c(b[0]), [b1] c(b[1]), [b2] c(b[2]), [b3] c(b[3]),                               \
              [t0] "=&w"(t0), [t1] "=&w"(t1), [t2] "=&w"(t2), [t3] "=&w"(t3)                         \
            : [x0] "w"(x[0]), [x1] "w"(x[1]), [x2] "w"(x[2]), [x3] "w"(x[3]), [wa] "w"(wa), [wb] "w"(wb))

KILN_NEON_INLINE void kiln_neon_pairs_mac2x4(int32x4_t a[4], int32x4_t b[4], const int8x16_t x[4], int8x16_t wa,
                                             int8x16_t wb)
{
    int16x8_t t0, t1, t2, t3;
    KILN_NEON_TILE_ASM(KILN_NEON_PAIRS_ROW, "sadalp", "+&w");
}

KILN_NEON_INLINE void kiln_neon_pairs_mul2x4(int32x4_t a[4], int32x4_t b[4], const int8x16_t x[4], int8x16_t wa,
                                             int8x16_t wb)
{
    int16x8_t t0, t1, t2, t3;
    KILN_NEON_TILE_ASM(KILN_NEON_PAIRS_ROW, "saddlp", "=&w");
}

/* The products of the low 8 bytes of x[j] and wa (wb), one per int16 lane (any weights). */
KILN_NEON_INLINE void kiln_neon_half_mac2x4(int32x4_t a[4], int32x4_t b[4], const int8x16_t x[4], int8x16_t wa,
                                            int8x16_t wb)
{
    int16x8_t t0, t1, t2, t3;
    KILN_NEON_TILE_ASM(KILN_NEON_HALF_ROW, "sadalp", "+&w");
}
#undef KILN_NEON_PAIRS_ROW
#undef KILN_NEON_HALF_ROW
#undef KILN_NEON_TILE_ASM

/* The whole four-by-four MLA_PAIRS tile (no `half`) as one assembly statement: the first
 * group starts the sums, then each of `rows` segments' groups in a loop of one LD1 of the
 * four weight rows, one post-incremented load per column and the count (7 instructions
 * besides the 48 products, where the compiler's addressing took 10), the columns stepping
 * to the next segment by adv[j] (pitch[j] less the segment's bytes), then the row sums
 * (kiln_neon_sum4). Its 16 accumulators, loads and products live in named registers
 * (v0-v27): an asm statement takes at most 30 operands, and the loop needs them all. */
#define KILN_NEON_LOOP_ROW(op, a0, a1, a2, a3, w)                                                     \
    "smull  v16.8h, v20.8b, " w ".8b\n\t"                                                            \
    "smull  v17.8h, v21.8b, " w ".8b\n\t"                                                            \
    "smull  v18.8h, v22.8b, " w ".8b\n\t"                                                            \
    "smull  v19.8h, v23.8b, " w ".8b\n\t"                                                            \
    "smlal2 v16.8h, v20.16b, " w ".16b\n\t"                                                          \
    "smlal2 v17.8h, v21.16b, " w ".16b\n\t"                                                          \
    "smlal2 v18.8h, v22.16b, " w ".16b\n\t"                                                          \
    "smlal2 v19.8h, v23.16b, " w ".16b\n\t"                                                          \
    op " " a0 ".4s, v16.8h\n\t"                                                                      \
    op " " a1 ".4s, v17.8h\n\t"                                                                      \
    op " " a2 ".4s, v18.8h\n\t"                                                                      \
    op " " a3 ".4s, v19.8h\n\t"
#define KILN_NEON_LOOP_GROUP(op)                                                                      \
    "ld1    {v24.16b, v25.16b, v26.16b, v27.16b}, [%[wp]], #64\n\t"                                   \
    "ldr    q20, [%[s0]], #16\n\t"                                                                    \
    "ldr    q21, [%[s1]], #16\n\t"                                                                    \
    "ldr    q22, [%[s2]], #16\n\t"                                                                    \
    "ldr    q23, [%[s3]], #16\n\t"                                                                    \
    KILN_NEON_LOOP_ROW(op, "v0", "v1", "v2", "v3", "v24") KILN_NEON_LOOP_ROW(op, "v4", "v5", "v6", "v7", "v25") \
    KILN_NEON_LOOP_ROW(op, "v8", "v9", "v10", "v11", "v26")                                          \
    KILN_NEON_LOOP_ROW(op, "v12", "v13", "v14", "v15", "v27")

/* The tile's statement: `start` (the first pass, starting the sums), then `body` passes
 * (`passes` per segment, the first segment's less one). */
#define KILN_NEON_TILE4X4_ASM(start, body, passes)                                                    \
    __asm__(start                                                                                     \
            "subs   %[n], %[first], #1\n\t"                                                          \
            "b.eq   3f\n\t"                                                                           \
            "2:\n\t"                                                                                  \
            body                                                                                      \
            "subs   %[n], %[n], #1\n\t"                                                              \
            "b.ne   2b\n\t"                                                                           \
            "3:\n\t"                                                                                  \
            "subs   %[segments], %[segments], #1\n\t"                                                \
            "b.eq   4f\n\t"                                                                           \
            "add    %[s0], %[s0], %[adv0]\n\t"                                                       \
            "add    %[s1], %[s1], %[adv1]\n\t"                                                       \
            "add    %[s2], %[s2], %[adv2]\n\t"                                                       \
            "add    %[s3], %[s3], %[adv3]\n\t"                                                       \
            "mov    %[n], %[first]\n\t"                                                              \
            "b      2b\n\t"                                                                           \
            "4:\n\t"                                                                                  \
            "addp   v16.4s, v0.4s, v4.4s\n\t"                                                        \
            "addp   v17.4s, v8.4s, v12.4s\n\t"                                                       \
            "addp   %[q0].4s, v16.4s, v17.4s\n\t"                                                    \
            "addp   v16.4s, v1.4s, v5.4s\n\t"                                                        \
            "addp   v17.4s, v9.4s, v13.4s\n\t"                                                       \
            "addp   %[q1].4s, v16.4s, v17.4s\n\t"                                                    \
            "addp   v16.4s, v2.4s, v6.4s\n\t"                                                        \
            "addp   v17.4s, v10.4s, v14.4s\n\t"                                                      \
            "addp   %[q2].4s, v16.4s, v17.4s\n\t"                                                    \
            "addp   v16.4s, v3.4s, v7.4s\n\t"                                                        \
            "addp   v17.4s, v11.4s, v15.4s\n\t"                                                      \
            "addp   %[q3].4s, v16.4s, v17.4s\n\t"                                                    \
            : [q0] "=&w"(q0), [q1] "=&w"(q1), [q2] "=&w"(q2), [q3] "=&w"(q3), [wp] "+&r"(wp), [s0] "+&r"(s0), \
              [s1] "+&r"(s1), [s2] "+&r"(s2), [s3] "+&r"(s3), [segments] "+&r"(segments), [n] "=&r"(n)   \
            : [first] "r"((int64_t)(passes)), [adv0] "r"(adv0), [adv1] "r"(adv1), [adv2] "r"(adv2),       \
              [adv3] "r"(adv3)                                                                        \
            : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", \
              "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", \
              "v27")

KILN_NEON_INLINE void kiln_neon_pairs_tile4x4(const int8_t *w, const int8_t *const col[4], const int32_t pitch[4],
                                              int32_t rows, int32_t groups, int32x4_t sums[4])
{
    const int8_t *wp = w, *s0 = col[0], *s1 = col[1], *s2 = col[2], *s3 = col[3];
    const int64_t seg = 16 * (int64_t)groups;
    const int64_t adv0 = rows > 1 ? pitch[0] - seg : 0, adv1 = rows > 1 ? pitch[1] - seg : 0;
    const int64_t adv2 = rows > 1 ? pitch[2] - seg : 0, adv3 = rows > 1 ? pitch[3] - seg : 0;
    int64_t segments = rows, n;
    int32x4_t q0, q1, q2, q3;
    if (groups % 3 == 0) {  /* three groups per pass (3x3 windows of 16k channels): a third of the counts */
        KILN_NEON_TILE4X4_ASM(KILN_NEON_LOOP_GROUP("saddlp") KILN_NEON_LOOP_GROUP("sadalp")
                                  KILN_NEON_LOOP_GROUP("sadalp"),
                              KILN_NEON_LOOP_GROUP("sadalp") KILN_NEON_LOOP_GROUP("sadalp")
                                  KILN_NEON_LOOP_GROUP("sadalp"),
                              groups / 3);
    } else {
        KILN_NEON_TILE4X4_ASM(KILN_NEON_LOOP_GROUP("saddlp"), KILN_NEON_LOOP_GROUP("sadalp"), groups);
    }
    sums[0] = q0;
    sums[1] = q1;
    sums[2] = q2;
    sums[3] = q3;
}
#undef KILN_NEON_LOOP_ROW
#undef KILN_NEON_LOOP_GROUP
#undef KILN_NEON_TILE4X4_ASM

/* The four lanes of each of a, b, c, d summed: (sum a, sum b, sum c, sum d). */
KILN_NEON_INLINE int32x4_t kiln_neon_sum4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d)
{
    return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

/* The micro-kernel: a block of four rows of packed weights (repack.mve_gemm_rows: 16 bytes
 * of each row in turn) times `cols` int8 columns (1 or 4; the rows of the block and the
 * columns are zero-padded to 16k bytes), over `rows` segments of `groups` groups of 16: the
 * segment s of column j starts at col[j] + s * pitch[j] (a window read in place, one kernel
 * row per segment; pitch is not read when rows is 1). sums[j] holds the four row sums of
 * column j. 16 accumulators, four columns and a row vector stay in registers. With `half`
 * (one segment of at least two groups, whose last holds at most 8 bytes of the window: a
 * pointwise layer of 40 channels) the last group is 8 bytes long: one SMULL per row and column
 * instead of SMULL + SMLAL2, the weights' zero padding past it left out (exact for any weights:
 * one product per int16 lane). */
KILN_NEON_INLINE void kiln_neon_tile_run(const int8_t *w, const int8_t *const col[4], const int32_t pitch[4],
                                         int32_t rows, int32_t groups, int half, int cols, int mode,
                                         int32x4_t sums[4])
{
    int32x4_t acc[4][4];
    int8x16_t x[4];
    const int8_t *src[4];
    int32_t g, s;
    int r, j;
    if (mode == KILN_NEON_MUL8) {  /* one group, of which the first 8 bytes count */
        int8x8_t h[4];
        for (j = 0; j < cols; ++j) {
            h[j] = vld1_s8(col[j]);
        }
        for (r = 0; r < 4; ++r) {
            const int8x8_t wr = vld1_s8(w + 16 * r);
            for (j = 0; j < cols; ++j) {
                acc[r][j] = vpaddlq_s16(vmull_s8(h[j], wr));
            }
        }
        for (j = 0; j < cols; ++j) {
            sums[j] = kiln_neon_sum4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]);
        }
        return;
    }
    if (cols == 4 && mode == KILN_NEON_MLA_PAIRS && !half && rows * groups > 2) {  /* shorter: the C loop
                                                                                   * keeps its registers */
        kiln_neon_pairs_tile4x4(w, col, pitch, rows, groups, sums);
        return;
    }
    groups -= half;
    for (j = 0; j < cols; ++j) {  /* the first group starts the sums (groups >= 1) */
        src[j] = col[j];
        x[j] = vld1q_s8(src[j]);
    }
    if (cols == 4 && mode == KILN_NEON_MLA_PAIRS) {
        kiln_neon_pairs_mul2x4(acc[0], acc[1], x, vld1q_s8(w), vld1q_s8(w + 16));
        kiln_neon_pairs_mul2x4(acc[2], acc[3], x, vld1q_s8(w + 32), vld1q_s8(w + 48));
    } else {
        for (r = 0; r < 4; ++r) {
            const int8x16_t wr = vld1q_s8(w + 16 * r);
            for (j = 0; j < cols; ++j) {
                acc[r][j] = kiln_neon_mul16(x[j], wr, mode);
            }
        }
    }
    for (g = 1, s = 0, w += 64; s < rows; ++s, g = 0) {
        if (s > 0) {
            for (j = 0; j < cols; ++j) {
                src[j] += pitch[j];
            }
        }
#pragma GCC unroll 1
        for (; g < groups; ++g, w += 64) {  /* not unrolled: the tile keeps its registers */
            for (j = 0; j < cols; ++j) {
                x[j] = vld1q_s8(src[j] + 16 * g);
            }
            if (cols == 4 && mode == KILN_NEON_MLA_PAIRS) {
                kiln_neon_pairs_mac2x4(acc[0], acc[1], x, vld1q_s8(w), vld1q_s8(w + 16));
                kiln_neon_pairs_mac2x4(acc[2], acc[3], x, vld1q_s8(w + 32), vld1q_s8(w + 48));
                continue;
            }
            for (r = 0; r < 4; ++r) {
                const int8x16_t wr = vld1q_s8(w + 16 * r);
                for (j = 0; j < cols; ++j) {
                    acc[r][j] = kiln_neon_mac16(acc[r][j], x[j], wr, mode);
                }
            }
        }
    }
    if (half && cols == 4) {  /* rows is 1: src[j] is col[j]; all 16 bytes of a group are readable */
        for (j = 0; j < 4; ++j) {
            x[j] = vld1q_s8(src[j] + 16 * groups);
        }
        kiln_neon_half_mac2x4(acc[0], acc[1], x, vld1q_s8(w), vld1q_s8(w + 16));
        kiln_neon_half_mac2x4(acc[2], acc[3], x, vld1q_s8(w + 32), vld1q_s8(w + 48));
    } else if (half) {
        const int8x8_t h = vld1_s8(src[0] + 16 * groups);
        for (r = 0; r < 4; ++r) {
            acc[r][0] = vpadalq_s16(acc[r][0], vmull_s8(h, vld1_s8(w + 16 * r)));
        }
    }
    for (j = 0; j < cols; ++j) {
        sums[j] = kiln_neon_sum4(acc[0][j], acc[1][j], acc[2][j], acc[3][j]);
    }
}

/* kiln_neon_tile_run over segments, with `cols` and `mode` as constants, one specialised
 * loop each. */
KILN_NEON_INLINE void kiln_neon_tile_rows(const int8_t *w, const int8_t *const col[4], const int32_t pitch[4],
                                          int32_t rows, int32_t groups, int half, int cols, int mode,
                                          int32x4_t sums[4])
{
    if (mode == KILN_NEON_MUL8) {
        kiln_neon_tile_run(w, col, pitch, rows, groups, 0, cols, KILN_NEON_MUL8, sums);
    } else if (cols == 4) {
        if (mode == KILN_NEON_MLA_PAIRS) {
            kiln_neon_tile_run(w, col, pitch, rows, groups, half, 4, KILN_NEON_MLA_PAIRS, sums);
        } else {
            kiln_neon_tile_run(w, col, pitch, rows, groups, half, 4, KILN_NEON_MLA, sums);
        }
    } else if (mode == KILN_NEON_MLA_PAIRS) {
        kiln_neon_tile_run(w, col, pitch, rows, groups, half, 1, KILN_NEON_MLA_PAIRS, sums);
    } else {
        kiln_neon_tile_run(w, col, pitch, rows, groups, half, 1, KILN_NEON_MLA, sums);
    }
}

/* kiln_neon_tile_rows for whole columns of `groups` groups (one segment each). */
KILN_NEON_INLINE void kiln_neon_tile(const int8_t *w, const int8_t *const col[4], int32_t groups, int cols,
                                     int mode, int32x4_t sums[4])
{
    kiln_neon_tile_rows(w, col, (const int32_t *)0, 1, groups, 0, cols, mode, sums);
}

/* TFLM's MultiplyByQuantizedMultiplier of four channels whose bias is already in acc (the
 * GEMM tiles start their sums from it): the left shift, VQRDMULH, then RoundingDivideByPOT.
 * With `right` (every channel of the layer shifts right by at least 1, so none shifts left)
 * the left shift is left out and the ties-away correction of negative lanes is one SSRA
 * (x - 1 for x < 0): VQRDMULH by a positive multiplier below 2^31 never returns INT32_MIN,
 * so the subtraction cannot wrap; otherwise a masked correction (AND, SSHR, SQADD) that
 * leaves lanes which do not shift alone. */
typedef struct {
    int32x4_t bias, mult, left, rshift; /* rshift: minus the right shift */
} kiln_neon_rq4;

KILN_NEON_INLINE kiln_neon_rq4 kiln_neon_rq4_load(const int32_t *t)
{
    kiln_neon_rq4 q;
    q.bias = vld1q_s32(t);
    q.mult = vld1q_s32(t + 4);
    q.left = vld1q_s32(t + 8);
    q.rshift = vld1q_s32(t + 12);
    return q;
}

KILN_NEON_INLINE int32x4_t kiln_neon_scale4q(int32x4_t acc, const kiln_neon_rq4 *q, int right)
{
    int32x4_t x;
    if (right) {  /* no channel shifts left either: three instructions */
        x = vqrdmulhq_s32(acc, q->mult);
        return vrshlq_s32(vsraq_n_s32(x, x, 31), q->rshift);
    }
    x = vqrdmulhq_s32(vshlq_s32(acc, q->left), q->mult);
    return vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, q->rshift), 31)), q->rshift);
}

/* kiln_neon_scale4q with the table's bias added first, the table read from t. */
KILN_NEON_INLINE int32x4_t kiln_neon_scale4(int32x4_t acc, const int32_t *t, int right)
{
    const kiln_neon_rq4 q = kiln_neon_rq4_load(t);
    return kiln_neon_scale4q(vaddq_s32(acc, q.bias), &q, right);
}

/* Sixteen scaled lanes (a, b, c, d) plus the output zero point, clamped to [lo, hi], as int8:
 * narrowed with saturation to int16 before adding zp (saturating) and to int8 before the
 * clamp. Every saturation is monotone and [lo, hi] lies inside int8, so the result is
 * TFLM's clamp(x + zp) lane by lane, in 7 instructions for 16 lanes instead of 4 per 4. */
KILN_NEON_INLINE int8x16_t kiln_neon_narrow16_zp(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d, int16x8_t zp)
{
    const int16x8_t ab = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(a), b), zp);
    const int16x8_t cd = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(c), d), zp);
    return vqmovn_high_s16(vqmovn_s16(ab), cd);
}

KILN_NEON_INLINE int8x16_t kiln_neon_pack16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d, int16x8_t zp,
                                            int8x16_t lo, int8x16_t hi)
{
    return vminq_s8(vmaxq_s8(kiln_neon_narrow16_zp(a, b, c, d, zp), lo), hi);
}

/* kiln_neon_pack16 for eight lanes. */
KILN_NEON_INLINE int8x8_t kiln_neon_pack8(int32x4_t a, int32x4_t b, int16x8_t zp, int8x16_t lo, int8x16_t hi)
{
    const int16x8_t ab = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(a), b), zp);
    return vmin_s8(vmax_s8(vqmovn_s16(ab), vget_low_s8(lo)), vget_low_s8(hi));
}

/* The output stage's constants as vectors: zero point (int16 lanes) and clamp (int8 lanes). */
typedef struct {
    int16x8_t zp;
    int8x16_t lo, hi;
    int right;
    int clamp_lo, clamp_hi;  /* the clamp bites (is not int8's own range, which narrowing saturates to) */
} kiln_neon_stage;

KILN_NEON_INLINE kiln_neon_stage kiln_neon_stage_of(int32_t zp, int32_t lo, int32_t hi, int32_t right)
{
    kiln_neon_stage s;
    s.zp = vdupq_n_s16((int16_t)zp);
    s.lo = vdupq_n_s8((int8_t)lo);
    s.hi = vdupq_n_s8((int8_t)hi);
    s.right = right != 0;
    s.clamp_lo = lo > INT8_MIN;
    s.clamp_hi = hi < INT8_MAX;
    return s;
}

/* kiln_neon_pack16 through the stage s, leaving out the halves of the clamp that do nothing
 * (a ReLU whose output zero point is -128 clamps at -128: every such layer of ResNet). */
KILN_NEON_INLINE int8x16_t kiln_neon_stage16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d,
                                             const kiln_neon_stage *s)
{
    int8x16_t x = kiln_neon_narrow16_zp(a, b, c, d, s->zp);
    if (s->clamp_lo) {
        x = vmaxq_s8(x, s->lo);
    }
    if (s->clamp_hi) {
        x = vminq_s8(x, s->hi);
    }
    return x;
}

/* Sixteen channels' sums (bias not yet added) through the whole output stage, their tables
 * t, t + 16, t + 32, t + 48 (repack.mve_requant). */
KILN_NEON_INLINE int8x16_t kiln_neon_requant16(const int32x4_t acc[4], const int32_t *t, const kiln_neon_stage *s)
{
    return kiln_neon_pack16(kiln_neon_scale4(acc[0], t, s->right), kiln_neon_scale4(acc[1], t + 16, s->right),
                            kiln_neon_scale4(acc[2], t + 32, s->right), kiln_neon_scale4(acc[3], t + 48, s->right),
                            s->zp, s->lo, s->hi);
}

/* Eight lanes (a then b), already within int8, as int8x8. */
KILN_NEON_INLINE int8x8_t kiln_neon_narrow8(int32x4_t a, int32x4_t b)
{
    return vmovn_s16(vcombine_s16(vmovn_s32(a), vmovn_s32(b)));
}

/* The products lo (lanes 0-7) and hi (8-15) widened into the four int32 sums of 16 lanes. */
KILN_NEON_INLINE void kiln_neon_addw16(int32x4_t a[4], int16x8_t lo, int16x8_t hi)
{
    a[0] = vaddw_s16(a[0], vget_low_s16(lo));
    a[1] = vaddw_high_s16(a[1], lo);
    a[2] = vaddw_s16(a[2], vget_low_s16(hi));
    a[3] = vaddw_high_s16(a[3], hi);
}

/* The depthwise sums of channels c..c+15 over `taps` taps: tap[t] points at the input pixel
 * of tap t (or a row of the input zero point), w at the weights of tap 0 (taps `stride` bytes
 * apart). With `pairs` (no weight is -128) the products of two taps add in int16 first
 * (SMULL + SMLAL, each at most 128 * 127) before SADDW widens them into the four sums. */
KILN_NEON_INLINE void kiln_neon_dw16(const int8_t *const *tap, int32_t c, const int8_t *w, int32_t stride,
                                     int32_t taps, int pairs, int32x4_t acc[4])
{
    int32_t t = 0;
    int r;
    for (r = 0; r < 4; ++r) {
        acc[r] = vdupq_n_s32(0);
    }
    if (pairs) {
        for (; t + 2 <= taps; t += 2, w += 2 * stride) {
            const int8x16_t x0 = vld1q_s8(tap[t] + c), x1 = vld1q_s8(tap[t + 1] + c);
            const int8x16_t w0 = vld1q_s8(w), w1 = vld1q_s8(w + stride);
            const int16x8_t lo = vmlal_s8(vmull_s8(vget_low_s8(x0), vget_low_s8(w0)), vget_low_s8(x1), vget_low_s8(w1));
            const int16x8_t hi = vmlal_high_s8(vmull_high_s8(x0, w0), x1, w1);
            kiln_neon_addw16(acc, lo, hi);
        }
    }
    for (; t < taps; ++t, w += stride) {
        const int8x16_t x = vld1q_s8(tap[t] + c), wt = vld1q_s8(w);
        const int16x8_t lo = vmull_s8(vget_low_s8(x), vget_low_s8(wt)), hi = vmull_high_s8(x, wt);
        kiln_neon_addw16(acc, lo, hi);
    }
}

/* SMULL and SMLAL of the low eight lanes of two whole vectors. The same instructions as
 * vmull_s8(vget_low_s8(a), vget_low_s8(b)), but GCC, given the halves as values of their own,
 * keeps a vector held in a register across a loop (the depthwise weights) as its high half
 * there and its low half spilled to the stack, reloaded every iteration. */
KILN_NEON_INLINE int16x8_t kiln_neon_mull_low(int8x16_t a, int8x16_t b)
{
    int16x8_t r;
    __asm__("smull %0.8h, %1.8b, %2.8b" : "=w"(r) : "w"(a), "w"(b));
    return r;
}

KILN_NEON_INLINE int16x8_t kiln_neon_mlal_low(int16x8_t acc, int8x16_t a, int8x16_t b)
{
    __asm__("smlal %0.8h, %1.8b, %2.8b" : "+w"(acc) : "w"(a), "w"(b));
    return acc;
}

/* The depthwise products of 16 lanes over `taps` taps whose inputs x[t] and weights w[t] are
 * already in registers (the 3x3 kernels: weights loaded once per channel block) added to acc
 * (the bias, so that no sum starts from zero), summed as kiln_neon_dw16 sums them. */
KILN_NEON_INLINE void kiln_neon_dw_mac16(const int8x16_t *x, const int8x16_t *w, int taps, int pairs,
                                         int32x4_t acc[4])
{
    int t = 0;
    if (pairs) {
        for (; t + 2 <= taps; t += 2) {
            const int16x8_t lo = kiln_neon_mlal_low(kiln_neon_mull_low(x[t], w[t]), x[t + 1], w[t + 1]);
            const int16x8_t hi = vmlal_high_s8(vmull_high_s8(x[t], w[t]), x[t + 1], w[t + 1]);
            kiln_neon_addw16(acc, lo, hi);
        }
    }
    for (; t < taps; ++t) {
        const int16x8_t lo = kiln_neon_mull_low(x[t], w[t]), hi = vmull_high_s8(x[t], w[t]);
        kiln_neon_addw16(acc, lo, hi);
    }
}

/* kiln_neon_dw_mac16 for 8 lanes. */
KILN_NEON_INLINE void kiln_neon_dw_mac8(const int8x8_t *x, const int8x8_t *w, int taps, int pairs, int32x4_t acc[2])
{
    int32x4_t a0 = acc[0], a1 = acc[1];
    int t = 0;
    if (pairs) {
        for (; t + 2 <= taps; t += 2) {
            const int16x8_t prod = vmlal_s8(vmull_s8(x[t], w[t]), x[t + 1], w[t + 1]);
            a0 = vaddw_s16(a0, vget_low_s16(prod));
            a1 = vaddw_high_s16(a1, prod);
        }
    }
    for (; t < taps; ++t) {
        const int16x8_t prod = vmull_s8(x[t], w[t]);
        a0 = vaddw_s16(a0, vget_low_s16(prod));
        a1 = vaddw_high_s16(a1, prod);
    }
    acc[0] = a0;
    acc[1] = a1;
}

/* Two and four bytes at any address, through types that may alias int8 data (AArch64 loads
 * and stores unaligned). */
typedef int16_t kiln_neon_w16 __attribute__((may_alias, aligned(1)));
typedef int32_t kiln_neon_w32 __attribute__((may_alias, aligned(1)));

/* Bytes 4j..4j+n of b (n of 1..4) to out: one 32-bit store when n is 4. */
KILN_NEON_INLINE void kiln_neon_store_lanes4(int8_t *out, int8x16_t b, int j, int32_t n)
{
    const int32x4_t words = vreinterpretq_s32_s8(b);
    int32_t word, i;
    switch (j) {  /* the lane must be a constant */
    case 0: word = vgetq_lane_s32(words, 0); break;
    case 1: word = vgetq_lane_s32(words, 1); break;
    case 2: word = vgetq_lane_s32(words, 2); break;
    default: word = vgetq_lane_s32(words, 3); break;
    }
    if (n >= 4) {
        *(kiln_neon_w32 *)(void *)out = word;
        return;
    }
    for (i = 0; i < n; ++i) {  /* little-endian: byte i of the word */
        out[i] = (int8_t)(word >> (8 * i));
    }
}

/* The first n bytes of b (all eight when n >= 8) to out. */
KILN_NEON_INLINE void kiln_neon_store8(int8_t *out, int8x8_t b, int32_t n)
{
    if (n >= 8) {
        vst1_s8(out, b);
    } else {
        kiln_neon_store_lanes4(out, vcombine_s8(b, b), 0, n);
        if (n > 4) {
            kiln_neon_store_lanes4(out + 4, vcombine_s8(b, b), 1, n - 4);
        }
    }
}

/* n bytes from src to dst / of value v at dst: 16 at a time, then one access per set bit of
 * the rest (im2col copies window rows as short as one pixel of a few channels). */
KILN_NEON_INLINE void kiln_neon_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 64; n -= 64, dst += 64, src += 64) {  /* LD1/ST1 of four registers */
        vst1q_s8_x4(dst, vld1q_s8_x4(src));
    }
    for (; n >= 16; n -= 16, dst += 16, src += 16) {
        vst1q_s8(dst, vld1q_s8(src));
    }
    if (n & 8) {
        vst1_s8(dst, vld1_s8(src));
        dst += 8;
        src += 8;
    }
    if (n & 4) {
        *(kiln_neon_w32 *)(void *)dst = *(const kiln_neon_w32 *)(const void *)src;
        dst += 4;
        src += 4;
    }
    if (n & 2) {
        *(kiln_neon_w16 *)(void *)dst = *(const kiln_neon_w16 *)(const void *)src;
        dst += 2;
        src += 2;
    }
    if (n & 1) {
        *dst = *src;
    }
}

KILN_NEON_INLINE void kiln_neon_fill_s8(int8_t *dst, int32_t v, int32_t n)
{
    const int8x16_t x = vdupq_n_s8((int8_t)v);
    for (; n >= 16; n -= 16, dst += 16) {
        vst1q_s8(dst, x);
    }
    if (n & 8) {
        vst1_s8(dst, vget_low_s8(x));
        dst += 8;
    }
    for (n &= 7; n > 0; --n) {
        *dst++ = (int8_t)v;
    }
}

#if defined(__ARM_FEATURE_DOTPROD)
/* One group of four k of the SDOT tile: the four bytes of eight rows (wa: rows 0-3, wb: rows
 * 4-7) times lane `lane` (those four k) of each column's vector. */
#define KILN_NEON_SDOT_LANE(lane)                                                  \
    do {                                                                           \
        const int8x16_t wa = vld1q_s8(w + 32 * (lane)), wb = vld1q_s8(w + 32 * (lane) + 16); \
        for (j = 0; j < cols; ++j) {                                               \
            acc[0][j] = vdotq_laneq_s32(acc[0][j], wa, x[j], lane);                \
            acc[1][j] = vdotq_laneq_s32(acc[1][j], wb, x[j], lane);                \
        }                                                                          \
    } while (0)

/* The SDOT micro-kernel: a block of eight rows (repack.sdot_gemm_blocks: per group of four k,
 * the four bytes of each row in turn) times `cols` int8 columns (1 or 4, zero-padded to 16k
 * bytes), over `groups` groups of 16: sums[h][j] holds rows 4h..4h+3 of column j, one row
 * per lane, so no reduction across lanes is needed. */
KILN_NEON_INLINE void kiln_neon_sdot_tile(const int8_t *w, const int8_t *const col[4], int32_t groups, int cols,
                                          int32x4_t sums[2][4])
{
    int32x4_t acc[2][4];
    int32_t g;
    int j;
    for (j = 0; j < cols; ++j) {
        acc[0][j] = vdupq_n_s32(0);
        acc[1][j] = vdupq_n_s32(0);
    }
    for (g = 0; g < groups; ++g, w += 128) {
        int8x16_t x[4];
        for (j = 0; j < cols; ++j) {
            x[j] = vld1q_s8(col[j] + 16 * g);
        }
        KILN_NEON_SDOT_LANE(0);
        KILN_NEON_SDOT_LANE(1);
        KILN_NEON_SDOT_LANE(2);
        KILN_NEON_SDOT_LANE(3);
    }
    for (j = 0; j < cols; ++j) {
        sums[0][j] = acc[0][j];
        sums[1][j] = acc[1][j];
    }
}
#undef KILN_NEON_SDOT_LANE

/* kiln_neon_gemm_cols for SDOT-packed weights: blocks of eight rows, eight output bytes per
 * column at a time, two columns per kiln_neon_pack16. */
KILN_NEON_INLINE void kiln_neon_gemm_sdot(const int8_t *w, const int8_t *const col[4], int cols, int32_t groups,
                                          int32_t out_c, const int32_t *rq, const kiln_neon_stage *s,
                                          int8_t *out, int32_t out_stride, int32_t out_cols)
{
    int32_t oc;
    int j;
    for (oc = 0; oc < out_c; oc += 8, w += 128 * groups, rq += 32) {
        const int32_t n = out_c - oc;
        const kiln_neon_rq4 qa = kiln_neon_rq4_load(rq), qb = kiln_neon_rq4_load(rq + 16);
        int32x4_t sums[2][4];
        int32x4_t v[4][2];
        if (cols == 4) {
            kiln_neon_sdot_tile(w, col, groups, 4, sums);
        } else {
            kiln_neon_sdot_tile(w, col, groups, 1, sums);
        }
        for (j = 0; j < cols; ++j) {
            v[j][0] = kiln_neon_scale4q(vaddq_s32(sums[0][j], qa.bias), &qa, s->right);
            v[j][1] = kiln_neon_scale4q(vaddq_s32(sums[1][j], qb.bias), &qb, s->right);
        }
        for (j = 0; j < out_cols; j += 2) {
            const int k = j + 1 < cols ? j + 1 : j;
            const int8x16_t b = kiln_neon_pack16(v[j][0], v[j][1], v[k][0], v[k][1], s->zp, s->lo, s->hi);
            kiln_neon_store8(out + j * out_stride + oc, vget_low_s8(b), n);
            if (j + 1 < out_cols) {
                kiln_neon_store8(out + (j + 1) * out_stride + oc, vget_high_s8(b), n);
            }
        }
    }
}
#endif

/* `cols` columns (1 or 4) of `rows` segments (kiln_neon_tile_run, with `half`) times the packed weights of
 * all out_c rows: each block of four rows by kiln_neon_tile_rows, through the output stage s
 * (`right` in place of s->right, to be a constant) with its table rq (16 words per block) and
 * written to out + j * out_stride, the first out_c bytes of each column. */
KILN_NEON_INLINE void kiln_neon_gemm_run(const int8_t *w, const int8_t *const col[4], const int32_t pitch[4],
                                         int cols, int32_t rows, int32_t groups, int half, int32_t out_c, int mode,
                                         int right, const int32_t *rq, const kiln_neon_stage *s, int8_t *out,
                                         int32_t out_stride, int32_t out_cols)
{
    const int32_t block = 64 * rows * groups;
    int32_t oc;
    int j;
    for (oc = 0; oc < out_c; oc += 4, w += block, rq += 16) {
        const int32_t n = out_c - oc < 4 ? out_c - oc : 4;
        int32x4_t sums[4];
        kiln_neon_rq4 q;
        int8x16_t b;
        kiln_neon_tile_rows(w, col, pitch, rows, groups, half, cols, mode, sums);
        q = kiln_neon_rq4_load(rq);
        for (j = 0; j < cols; ++j) {
            sums[j] = kiln_neon_scale4q(vaddq_s32(sums[j], q.bias), &q, right);
        }
        b = cols == 4 ? kiln_neon_stage16(sums[0], sums[1], sums[2], sums[3], s)
                      : kiln_neon_stage16(sums[0], sums[0], sums[0], sums[0], s);
        if (out_cols == 4 && oc + 4 <= out_c) {  /* the whole tile: four 32-bit stores, no tests */
            for (j = 0; j < 4; ++j) {
                kiln_neon_store_lanes4(out + j * out_stride + oc, b, j, 4);
            }
        } else {
            for (j = 0; j < out_cols; ++j) {
                kiln_neon_store_lanes4(out + j * out_stride + oc, b, j, n);
            }
        }
    }
}

/* kiln_neon_gemm_run, four columns with their mode and `right` as constants (one copy each:
 * no tests per block inside the tile loops). */
KILN_NEON_INLINE void kiln_neon_gemm_rows(const int8_t *w, const int8_t *const col[4], const int32_t pitch[4],
                                          int cols, int32_t rows, int32_t groups, int half, int32_t out_c, int mode,
                                          const int32_t *rq, const kiln_neon_stage *s, int8_t *out,
                                          int32_t out_stride, int32_t out_cols)
{
    if (cols != 4 || mode == KILN_NEON_MUL8) {
        kiln_neon_gemm_run(w, col, pitch, cols, rows, groups, half, out_c, mode, s->right, rq, s, out, out_stride,
                           out_cols);
    } else if (mode == KILN_NEON_MLA_PAIRS && s->right) {
        kiln_neon_gemm_run(w, col, pitch, 4, rows, groups, half, out_c, KILN_NEON_MLA_PAIRS, 1, rq, s, out, out_stride,
                           out_cols);
    } else if (mode == KILN_NEON_MLA_PAIRS) {
        kiln_neon_gemm_run(w, col, pitch, 4, rows, groups, half, out_c, KILN_NEON_MLA_PAIRS, 0, rq, s, out, out_stride,
                           out_cols);
    } else if (s->right) {
        kiln_neon_gemm_run(w, col, pitch, 4, rows, groups, half, out_c, KILN_NEON_MLA, 1, rq, s, out, out_stride,
                           out_cols);
    } else {
        kiln_neon_gemm_run(w, col, pitch, 4, rows, groups, half, out_c, KILN_NEON_MLA, 0, rq, s, out, out_stride,
                           out_cols);
    }
}

/* kiln_neon_gemm_rows for whole columns of `groups` groups (or the SDOT tiles, whose stores
 * write the whole of out_c). */
KILN_NEON_INLINE void kiln_neon_gemm_cols(const int8_t *w, const int8_t *const col[4], int cols, int32_t groups,
                                          int32_t out_c, int mode, const int32_t *rq, const kiln_neon_stage *s,
                                          int8_t *out, int32_t out_stride, int32_t out_cols)
{
#if defined(__ARM_FEATURE_DOTPROD)
    if (mode == KILN_NEON_SDOT) {
        kiln_neon_gemm_sdot(w, col, cols, groups, out_c, rq, s, out, out_stride, out_cols);
        return;
    }
#endif
    kiln_neon_gemm_rows(w, col, (const int32_t *)0, cols, 1, groups, 0, out_c, mode, rq, s, out, out_stride, out_cols);
}

#endif /* KILN_NEON_S8_H */
