/*
 * kiln_neon_sdot.h - the int8 convolution GEMM of Kiln's neon_dotprod kernels (Armv8.2-A
 * +dotprod: Cortex-A55/A76): a register tile of eight output channels by eight pixels, 16
 * int32 accumulators started from the bias, over the window in quads of four k (so a
 * pointwise layer whose channels are a multiple of 4 reads its input pixels in place, and a
 * window whose rows are whole quads reads its rows in place: no im2col copy inside the
 * image), then the output stage of kiln_neon_s8.h fused per pair of pixels. Tiles of eight
 * pixels run in assembly (kiln_neon_sdot8_tile8, which also stores the output when no
 * channel shifts left), the last few pixels of a layer in intrinsics.
 * Pointwise layers' groups of eight pixels run in assembly loops over a whole run of pixels
 * per block of eight channels, output stage included (kiln_neon_sdot8_pointwise8 for eight
 * input channels, kiln_neon_sdot8_pointwise for 16k, left shifts too).
 *
 * Weights: repack.sdot_gemm_blocks(rows, 4) (per block of eight rows and quad of k, the four
 * bytes of each row in turn; K zero-padded to a multiple of 4, rows to a multiple of 8).
 * Requantization table: repack.mve_requant (bias folded with the input offset, multiplier,
 * shifts). Sums are the same integers as TFLite Micro's, so the result is bit-exact.
 */
#ifndef KILN_NEON_SDOT_H
#define KILN_NEON_SDOT_H

#include "kiln_neon_s8.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "kiln_neon_sdot.h needs a core with the dot product extension (-mcpu=cortex-a55, -march=armv8.2-a+dotprod)"
#endif

/* Columns per tile: 8 pixels (16 accumulators, 8 column vectors and 8 weight vectors: the 32
 * NEON registers), then 4 and 1 for the last pixels of a layer. */
#define KILN_SDOT_COLS 8

/* Quad `lane` of the column vectors x (int8x16 or int8x8: `dot` is vdotq_laneq_s32 or
 * vdotq_lane_s32) against the eight rows' quads at w: rows 0-3 into acc[j][0], 4-7 into acc[j][1]. */
#define KILN_SDOT_QUAD(dot, lane)                                                  \
    do {                                                                           \
        const int8x16_t wa = vld1q_s8(w), wb = vld1q_s8(w + 16);                   \
        for (j = 0; j < cols; ++j) {                                               \
            acc[j][0] = dot(acc[j][0], wa, x[j], lane);                            \
            acc[j][1] = dot(acc[j][1], wb, x[j], lane);                            \
        }                                                                          \
        w += 32;                                                                   \
    } while (0)

/* Lane `lane` of the eight column registers v24..v31 against the eight rows' quads in wa
 * (rows 0-3) and wb (rows 4-7); column j sums into v(2j) and v(2j+1). */
#define KILN_SDOT_ASM_COL(acc_a, acc_b, x, wa, wb, lane)                                       \
    "sdot " acc_a ".4s, " wa ".16b, " x ".4b[" lane "]\n\t"                                  \
    "sdot " acc_b ".4s, " wb ".16b, " x ".4b[" lane "]\n\t"
#define KILN_SDOT_ASM_LANE(wa, wb, lane)                                                      \
    KILN_SDOT_ASM_COL("v0", "v1", "v24", wa, wb, lane) KILN_SDOT_ASM_COL("v2", "v3", "v25", wa, wb, lane)     \
    KILN_SDOT_ASM_COL("v4", "v5", "v26", wa, wb, lane) KILN_SDOT_ASM_COL("v6", "v7", "v27", wa, wb, lane)     \
    KILN_SDOT_ASM_COL("v8", "v9", "v28", wa, wb, lane) KILN_SDOT_ASM_COL("v10", "v11", "v29", wa, wb, lane)   \
    KILN_SDOT_ASM_COL("v12", "v13", "v30", wa, wb, lane) KILN_SDOT_ASM_COL("v14", "v15", "v31", wa, wb, lane)
/* The output stage of kiln_neon_scale4q with `right` on one column's two accumulators (rows
 * 0-3 with the multiplier v17 and minus shift v19, rows 4-7 with v21, v23: the table's
 * layout), then two columns through kiln_neon_pack16 (zero point v24, clamp v25, v26), each
 * stored as 8 bytes, the address stepped by the output stride. */
#define KILN_SDOT_ASM_SCALE(a, b)                                                             \
    "sqrdmulh " a ".4s, " a ".4s, v17.4s\n\t"                                               \
    "sqrdmulh " b ".4s, " b ".4s, v21.4s\n\t"                                               \
    "ssra " a ".4s, " a ".4s, #31\n\t"                                                       \
    "ssra " b ".4s, " b ".4s, #31\n\t"                                                       \
    "srshl " a ".4s, " a ".4s, v19.4s\n\t"                                                  \
    "srshl " b ".4s, " b ".4s, v23.4s\n\t"
/* Two columns' eight sums of a..d narrowed to int8 with the zero point (saturating: int8's
 * own range), in a. */
#define KILN_SDOT_ASM_NARROW(a, b, c, d)                                                      \
    "sqxtn " a ".4h, " a ".4s\n\t"                                                          \
    "sqxtn " c ".4h, " c ".4s\n\t"                                                          \
    "sqxtn2 " a ".8h, " b ".4s\n\t"                                                         \
    "sqxtn2 " c ".8h, " d ".4s\n\t"                                                         \
    "sqadd " a ".8h, " a ".8h, v24.8h\n\t"                                                  \
    "sqadd " c ".8h, " c ".8h, v24.8h\n\t"                                                  \
    "sqxtn " a ".8b, " a ".8h\n\t"                                                          \
    "sqxtn2 " a ".16b, " c ".8h\n\t"
#define KILN_SDOT_ASM_STORE_PAIR(a)                                                           \
    "st1 {" a ".d}[0], [%[t0]], %[stride]\n\t"                                              \
    "st1 {" a ".d}[1], [%[t0]], %[stride]\n\t"
#define KILN_SDOT_ASM_PAIR(a, b, c, d)                                                        \
    KILN_SDOT_ASM_NARROW(a, b, c, d)                                                          \
    "smax " a ".16b, " a ".16b, v25.16b\n\t"                                                \
    "smin " a ".16b, " a ".16b, v26.16b\n\t"                                                \
    KILN_SDOT_ASM_STORE_PAIR(a)
/* KILN_SDOT_ASM_PAIR without the clamp, for layers whose clamp is int8's own range (which the
 * narrowing saturates to: a ReLU whose output zero point is -128, or no activation). */
#define KILN_SDOT_ASM_PAIR_UNCLAMPED(a, b, c, d) KILN_SDOT_ASM_NARROW(a, b, c, d) KILN_SDOT_ASM_STORE_PAIR(a)
/* The sixteen accumulators v0..v15 started from the bias in v0 (rows 0-3) and v1 (rows 4-7). */
#define KILN_SDOT_ASM_SPREAD_BIAS                                                             \
    "mov v2.16b, v0.16b\n\t" "mov v3.16b, v1.16b\n\t" "mov v4.16b, v0.16b\n\t" "mov v5.16b, v1.16b\n\t"  \
    "mov v6.16b, v0.16b\n\t" "mov v7.16b, v1.16b\n\t" "mov v8.16b, v0.16b\n\t" "mov v9.16b, v1.16b\n\t"  \
    "mov v10.16b, v0.16b\n\t" "mov v11.16b, v1.16b\n\t" "mov v12.16b, v0.16b\n\t" "mov v13.16b, v1.16b\n\t" \
    "mov v14.16b, v0.16b\n\t" "mov v15.16b, v1.16b\n\t"
/* The output stage's table (rq: v16-v23, `tmp` its second half's address) and stage (zero
 * point, clamp: v24-v26). */
#define KILN_SDOT_ASM_TABLES(tmp)                                                             \
    "add %[" tmp "], %[rq], #64\n\t"                                                        \
    "ld1 {v16.4s - v19.4s}, [%[rq]]\n\t"                                                   \
    "ld1 {v20.4s - v23.4s}, [%[" tmp "]]\n\t"                                               \
    "ld1 {v24.16b - v26.16b}, [%[stage]]\n\t"
/* `scale` on the eight columns' accumulator pairs; the eight columns narrowed and stored. */
#define KILN_SDOT_ASM_ALL8(scale)                                                             \
    scale("v0", "v1") scale("v2", "v3") scale("v4", "v5") scale("v6", "v7")                   \
    scale("v8", "v9") scale("v10", "v11") scale("v12", "v13") scale("v14", "v15")
#define KILN_SDOT_ASM_STORE8                                                                  \
    KILN_SDOT_ASM_PAIR("v0", "v1", "v2", "v3") KILN_SDOT_ASM_PAIR("v4", "v5", "v6", "v7")    \
    KILN_SDOT_ASM_PAIR("v8", "v9", "v10", "v11") KILN_SDOT_ASM_PAIR("v12", "v13", "v14", "v15")
#define KILN_SDOT_ASM_STORE8_UNCLAMPED                                                        \
    KILN_SDOT_ASM_PAIR_UNCLAMPED("v0", "v1", "v2", "v3") KILN_SDOT_ASM_PAIR_UNCLAMPED("v4", "v5", "v6", "v7") \
    KILN_SDOT_ASM_PAIR_UNCLAMPED("v8", "v9", "v10", "v11") KILN_SDOT_ASM_PAIR_UNCLAMPED("v12", "v13", "v14", "v15")
/* The rest of a 16-k group once its first weight quads (v16-v19) and the eight columns
 * (v24-v31) are loaded: its four lanes' SDOTs, the second weight quads loaded from `wptr`
 * between, the group count `g` stepped and the loop back to label 2. */
#define KILN_SDOT_ASM_GROUP(wptr)                                                             \
    KILN_SDOT_ASM_LANE("v16", "v17", "0")                                                     \
    "ld1 {v20.16b - v23.16b}, [%[" wptr "]], #64\n\t"                                         \
    KILN_SDOT_ASM_LANE("v18", "v19", "1")                                                     \
    KILN_SDOT_ASM_LANE("v20", "v21", "2")                                                     \
    "subs %[g], %[g], #1\n\t"                                                                \
    KILN_SDOT_ASM_LANE("v22", "v23", "3")                                                     \
    "b.ne 2b\n\t"
#define KILN_SDOT_ASM_STEP(a, b, off)                                                         \
    "ldp %[t0], %[t1], [%[adv], #" off "]\n\t"                                               \
    "add %[" a "], %[" a "], %[t0]\n\t"                                                      \
    "add %[" b "], %[" b "], %[t1]\n\t"

/* kiln_neon_sdot8_tile for eight columns (runs of `quads` >= 1 quads), in assembly: GCC,
 * given this loop in intrinsics, keeps the 16 accumulators, 8 columns and 8 weight vectors in
 * the 32 registers only with moves in the loop and spills around it. Per group of sixteen k:
 * two 64-byte weight loads (LD1 of four registers), eight column loads, 64 SDOTs and the
 * count; then per quad left in the run, one 32-byte weight load, eight 4-byte column loads
 * (LD1R: no byte past the run is read) and 16 SDOTs; per further run, each column pointer
 * moves on by adv[j] (its step less the run's length). With `fused` (every channel shifts
 * right, eight channels to store) the sums go through the output stage here (table rq, stage
 * *s read as its three vectors zp, lo, hi in order) into out + j * out_stride, column j's
 * eight bytes; else they are left in acc (16 vectors). The accumulators start from the bias
 * rq[0..3], rq[16..19] (repack.mve_requant's layout). *w moves past the block. */
KILN_NEON_INLINE void kiln_neon_sdot8_tile8(const int8_t **w, const int8_t *const col[KILN_SDOT_COLS],
                                            const int64_t adv[KILN_SDOT_COLS], int64_t rows, int64_t quads,
                                            const int32_t *rq, int64_t fused, const kiln_neon_stage *s,
                                            int8_t *out, int64_t out_stride, int32x4_t acc[KILN_SDOT_COLS][2])
{
    const int8_t *wp = *w, *p0, *p1, *p2, *p3, *p4, *p5, *p6, *p7;
    int64_t g, t0, t1;
    __asm__ volatile(
        "ldr q0, [%[rq]]\n\t"
        "ldr q1, [%[rq], #64]\n\t"
        KILN_SDOT_ASM_SPREAD_BIAS
        "ldp %[p0], %[p1], [%[col]]\n\t"
        "ldp %[p2], %[p3], [%[col], #16]\n\t"
        "ldp %[p4], %[p5], [%[col], #32]\n\t"
        "ldp %[p6], %[p7], [%[col], #48]\n\t"
        "1:\n\t"
        "cbz %[groups], 4f\n\t"
        "mov %[g], %[groups]\n\t"
        "2:\n\t"
        "ld1 {v16.16b - v19.16b}, [%[w]], #64\n\t"
        "ldr q24, [%[p0]], #16\n\t"
        "ldr q25, [%[p1]], #16\n\t"
        "ldr q26, [%[p2]], #16\n\t"
        "ldr q27, [%[p3]], #16\n\t"
        "ldr q28, [%[p4]], #16\n\t"
        "ldr q29, [%[p5]], #16\n\t"
        "ldr q30, [%[p6]], #16\n\t"
        "ldr q31, [%[p7]], #16\n\t"
        KILN_SDOT_ASM_GROUP("w")
        "4:\n\t"
        "cbz %[tail], 6f\n\t"
        "mov %[g], %[tail]\n\t"
        "5:\n\t"
        "ld1 {v16.16b, v17.16b}, [%[w]], #32\n\t"
        "ld1r {v24.4s}, [%[p0]], #4\n\t"
        "ld1r {v25.4s}, [%[p1]], #4\n\t"
        "ld1r {v26.4s}, [%[p2]], #4\n\t"
        "ld1r {v27.4s}, [%[p3]], #4\n\t"
        "ld1r {v28.4s}, [%[p4]], #4\n\t"
        "ld1r {v29.4s}, [%[p5]], #4\n\t"
        "ld1r {v30.4s}, [%[p6]], #4\n\t"
        "ld1r {v31.4s}, [%[p7]], #4\n\t"
        "subs %[g], %[g], #1\n\t"
        KILN_SDOT_ASM_LANE("v16", "v17", "0")
        "b.ne 5b\n\t"
        "6:\n\t"
        "subs %[rows], %[rows], #1\n\t"
        "b.eq 3f\n\t"
        KILN_SDOT_ASM_STEP("p0", "p1", "0") KILN_SDOT_ASM_STEP("p2", "p3", "16")
        KILN_SDOT_ASM_STEP("p4", "p5", "32") KILN_SDOT_ASM_STEP("p6", "p7", "48")
        "b 1b\n\t"
        "3:\n\t"
        "cbz %[fused], 7f\n\t"
        KILN_SDOT_ASM_TABLES("t0")
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE)
        "mov %[t0], %[out]\n\t"
        KILN_SDOT_ASM_STORE8
        "b 8f\n\t"
        "7:\n\t"
        "mov %[t0], %[acc]\n\t"
        "st1 {v0.4s - v3.4s}, [%[t0]], #64\n\t"
        "st1 {v4.4s - v7.4s}, [%[t0]], #64\n\t"
        "st1 {v8.4s - v11.4s}, [%[t0]], #64\n\t"
        "st1 {v12.4s - v15.4s}, [%[t0]]\n\t"
        "8:\n\t"
        : [w] "+&r"(wp), [rows] "+&r"(rows), [p0] "=&r"(p0), [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3),
          [p4] "=&r"(p4), [p5] "=&r"(p5), [p6] "=&r"(p6), [p7] "=&r"(p7), [g] "=&r"(g), [t0] "=&r"(t0),
          [t1] "=&r"(t1)
        : [col] "r"(col), [adv] "r"(adv), [groups] "r"(quads / 4), [tail] "r"(quads & 3), [rq] "r"(rq),
          [acc] "r"(acc), [fused] "r"(fused), [stage] "r"(s), [out] "r"(out), [stride] "r"(out_stride)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
          "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30", "v31");
    (void)p0; /* stepped by the loop, not read after it */
    (void)p1;
    (void)p2;
    (void)p3;
    (void)p4;
    (void)p5;
    (void)p6;
    (void)p7;
    (void)g;
    (void)t0;
    (void)t1;
    (void)rows;
    *w = wp;
}
/* Two pixels of eight channels, x holding each one's two quads (lanes 0-1, 2-3), against the
 * weights' quads in v16 (quad 0, rows 0-3), v18 (quad 0, rows 4-7), v20, v22 (quad 1): the
 * first pixel sums into a0, b0 (rows 0-3, 4-7), the second into a1, b1. */
#define KILN_SDOT_ASM_PIXELS(a0, b0, a1, b1, x)                                                  \
    KILN_SDOT_ASM_COL(a0, b0, x, "v16", "v18", "0") KILN_SDOT_ASM_COL(a0, b0, x, "v20", "v22", "1")  \
    KILN_SDOT_ASM_COL(a1, b1, x, "v16", "v18", "2") KILN_SDOT_ASM_COL(a1, b1, x, "v20", "v22", "3")
/* A group of eight pixels of eight channels (64 bytes from `in`, which moves past them): the
 * accumulators from the bias, the 32 SDOTs, the output stage's scaling. */
#define KILN_SDOT_ASM_GROUP8_SCALED                                                              \
    "ldr q0, [%[rq]]\n\t"                                                                      \
    "ldr q1, [%[rq], #64]\n\t"                                                                 \
    "ld1 {v27.16b - v30.16b}, [%[in]], #64\n\t"                                                \
    KILN_SDOT_ASM_SPREAD_BIAS                                                                    \
    KILN_SDOT_ASM_PIXELS("v0", "v1", "v2", "v3", "v27") KILN_SDOT_ASM_PIXELS("v4", "v5", "v6", "v7", "v28") \
    KILN_SDOT_ASM_PIXELS("v8", "v9", "v10", "v11", "v29")                                        \
    KILN_SDOT_ASM_PIXELS("v12", "v13", "v14", "v15", "v30")                                      \
    KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE)
/* A pointwise layer of eight input channels (two quads: at stride 1 eight pixels are 64
 * contiguous bytes, one load) whose channels all shift right, for one block of eight output
 * channels (weights w: its 64 packed bytes, kept in registers; table rq) over `groups` groups
 * of eight pixels from `in` on, each pixel's eight bytes stored at out + j * out_stride. The
 * generic tile spends on such a layer more on its loop, column set-up and broadcast loads
 * (LD1R per quad and pixel) than on its 32 SDOTs; here a group is 147 instructions (139 unclamped): the
 * accumulators started from the bias, 32 SDOTs, the output stage of kiln_neon_sdot8_tile8 (its
 * clamp left out where the stage's does nothing). */
KILN_NEON_INLINE void kiln_neon_sdot8_pointwise8(const int8_t *w, const int8_t *in, int64_t groups,
                                                 const int32_t *rq, const kiln_neon_stage *s, int8_t *out,
                                                 int64_t out_stride)
{
    __asm__ volatile(
        "ldr q16, [%[w]]\n\t"
        "ldr q18, [%[w], #16]\n\t"
        "ldr q20, [%[w], #32]\n\t"
        "ldr q22, [%[w], #48]\n\t"
        "ldr q17, [%[rq], #16]\n\t"
        "ldr q19, [%[rq], #48]\n\t"
        "ldr q21, [%[rq], #80]\n\t"
        "ldr q23, [%[rq], #112]\n\t"
        "ld1 {v24.16b - v26.16b}, [%[stage]]\n\t"
        "cbnz %[clamp], 3f\n\t"
        "1:\n\t"
        KILN_SDOT_ASM_GROUP8_SCALED
        KILN_SDOT_ASM_STORE8_UNCLAMPED
        "subs %[groups], %[groups], #1\n\t"
        "b.ne 1b\n\t"
        "b 4f\n\t"
        "3:\n\t"
        KILN_SDOT_ASM_GROUP8_SCALED
        KILN_SDOT_ASM_STORE8
        "subs %[groups], %[groups], #1\n\t"
        "b.ne 3b\n\t"
        "4:\n\t"
        : [in] "+&r"(in), [t0] "+&r"(out), [groups] "+&r"(groups)
        : [w] "r"(w), [rq] "r"(rq), [stage] "r"(s), [clamp] "r"((int64_t)(s->clamp_lo | s->clamp_hi)),
          [stride] "r"(out_stride)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
          "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30");
}
/* kiln_neon_sdot8_pointwise8 for every block of eight output channels (out_c of them).
 * Out of line (inlined, it keeps GCC from cloning the convolution per layer) and not named
 * after the kernel: its loop, the one with the most vector instructions, would otherwise be
 * the hot loop of the profile's cycle estimate in every model, run or not. */
static __attribute__((noinline)) void kiln_neon_sdot8_pointwise8_blocks(const int8_t *w, const int8_t *in,
                                                                        int32_t groups, int32_t out_c,
                                                                        const int32_t *rq, const kiln_neon_stage *s,
                                                                        int8_t *out)
{
    int32_t oc;
    for (oc = 0; oc < out_c; oc += 8) {
        kiln_neon_sdot8_pointwise8(w + 8 * oc, in, groups, rq + 4 * oc, s, out + oc, out_c);
    }
}

/* The run loops' registers that the assembly steps or loads (the pixel cursor, counters,
 * pixel offsets): outputs of the statement, not read after it. */
#define KILN_SDOT_ASM_UNREAD                                                                      \
    do {                                                                                          \
        (void)cursor;                                                                             \
        (void)t0;                                                                                 \
        (void)n;                                                                                  \
        (void)wp;                                                                                 \
        (void)g;                                                                                  \
        (void)t1;                                                                                 \
        (void)o1;                                                                                 \
        (void)o2;                                                                                 \
        (void)o3;                                                                                 \
        (void)o4;                                                                                 \
        (void)o5;                                                                                 \
        (void)o6;                                                                                 \
        (void)o7;                                                                                 \
        (void)next;                                                                               \
    } while (0)

/* kiln_neon_scale4q without `right` on one column's two accumulators (table as
 * KILN_SDOT_ASM_SCALE, left shifts v18, v22): shift left, multiply, then the rounding fix-up
 * only in the channels that shift right (their minus shift's sign bit), v27 and v28 spare. */
#define KILN_SDOT_ASM_SCALE_LEFT(a, b)                                                        \
    "sshl " a ".4s, " a ".4s, v18.4s\n\t"                                                   \
    "sshl " b ".4s, " b ".4s, v22.4s\n\t"                                                   \
    "sqrdmulh " a ".4s, " a ".4s, v17.4s\n\t"                                               \
    "sqrdmulh " b ".4s, " b ".4s, v21.4s\n\t"                                               \
    "and v27.16b, " a ".16b, v19.16b\n\t"                                                   \
    "and v28.16b, " b ".16b, v23.16b\n\t"                                                   \
    "sshr v27.4s, v27.4s, #31\n\t"                                                          \
    "sshr v28.4s, v28.4s, #31\n\t"                                                          \
    "sqadd " a ".4s, " a ".4s, v27.4s\n\t"                                                  \
    "sqadd " b ".4s, " b ".4s, v28.4s\n\t"                                                  \
    "srshl " a ".4s, " a ".4s, v19.4s\n\t"                                                  \
    "srshl " b ".4s, " b ".4s, v23.4s\n\t"
/* The loops over a run of pixels (kiln_neon_sdot8_pointwise, _windows, _slide3) share these
 * steps: the seven pixel offsets and the step to the next group (offsets[0..7]); a group's
 * accumulators from the bias, weights from the block's start; eight pixels' 16 bytes at the
 * cursor (and the block's first weight quads), the cursor moved on by 16; the next block of
 * eight channels (weights, table, output column) and the loop back to label 0. */
#define KILN_SDOT_ASM_OFFSETS                                                                 \
    "ldp %[o1], %[o2], [%[off]]\n\t"                                                          \
    "ldp %[o3], %[o4], [%[off], #16]\n\t"                                                     \
    "ldp %[o5], %[o6], [%[off], #32]\n\t"                                                     \
    "ldp %[o7], %[next], [%[off], #48]\n\t"
#define KILN_SDOT_ASM_START                                                                   \
    "ldr q0, [%[rq]]\n\t"                                                                     \
    "ldr q1, [%[rq], #64]\n\t"                                                                \
    KILN_SDOT_ASM_SPREAD_BIAS                                                                 \
    "mov %[wp], %[w]\n\t"
/* A run loop's head: the pixel offsets; per channel block (0:) the run from its first pixel,
 * per group of eight pixels (1:) the accumulators from the bias. */
#define KILN_SDOT_ASM_RUN_HEAD                                                                \
    KILN_SDOT_ASM_OFFSETS                                                                     \
    "0:\n\t"                                                                                  \
    "mov %[in], %[first]\n\t"                                                                \
    "mov %[t0], %[out]\n\t"                                                                  \
    "mov %[n], %[groups]\n\t"                                                                \
    "1:\n\t"                                                                                  \
    KILN_SDOT_ASM_START
#define KILN_SDOT_ASM_COLUMNS8                                                                \
    "ld1 {v16.16b - v19.16b}, [%[wp]], #64\n\t"                                               \
    "ldr q24, [%[in]]\n\t"                                                                    \
    "ldr q25, [%[in], %[o1]]\n\t"                                                             \
    "ldr q26, [%[in], %[o2]]\n\t"                                                             \
    "ldr q27, [%[in], %[o3]]\n\t"                                                             \
    "ldr q28, [%[in], %[o4]]\n\t"                                                             \
    "ldr q29, [%[in], %[o5]]\n\t"                                                             \
    "ldr q30, [%[in], %[o6]]\n\t"                                                             \
    "ldr q31, [%[in], %[o7]]\n\t"                                                             \
    "add %[in], %[in], #16\n\t"
#define KILN_SDOT_ASM_NEXT_BLOCK                                                              \
    "mov %[w], %[wp]\n\t"                                                                     \
    "add %[rq], %[rq], #128\n\t"                                                              \
    "add %[out], %[out], #8\n\t"                                                              \
    "subs %[blocks], %[blocks], #1\n\t"                                                       \
    "b.ne 0b\n\t"
/* kiln_neon_sdot8_pointwise8 for a pointwise layer of in_c channels, a multiple of 16, and
 * any shifts, its pixels `pitch` bytes apart (in_c times the stride; offsets: pitch .. 7
 * pitch, then 8 pitch - in_c), for `blocks` blocks of eight output channels in turn (w, rq
 * and out stepped per block): per group of eight pixels (one load of each pixel's 16 bytes per group of sixteen k,
 * at offsets 0, pitch .. 7 pitch from one cursor; no column set-up), the
 * accumulators from the bias, the k loop of kiln_neon_sdot8_tile8, then its output stage with
 * `right`, else with the left shifts of kiln_neon_scale4q (table: bias, multiplier, left
 * shift, minus right shift per four rows, read into v16-v19, v20-v23), the clamp left out
 * where the stage's does nothing. */
KILN_NEON_INLINE void kiln_neon_sdot8_pointwise(const int8_t *w, const int8_t *in, int64_t in_c,
                                                const int64_t offsets[8], int64_t groups, int64_t blocks,
                                                const int32_t *rq, const kiln_neon_stage *s, int64_t right,
                                                int8_t *out, int64_t out_stride)
{
    const int8_t *wp;
    const int8_t *cursor;
    int8_t *t0;
    int64_t g, n, t1, o1, o2, o3, o4, o5, o6, o7, next;
    __asm__ volatile(
        KILN_SDOT_ASM_RUN_HEAD
        "mov %[g], %[k16]\n\t"
        "2:\n\t"
        KILN_SDOT_ASM_COLUMNS8
        KILN_SDOT_ASM_GROUP("wp")
        "add %[in], %[in], %[next]\n\t"
        KILN_SDOT_ASM_TABLES("t1")
        "cbz %[right], 3f\n\t"
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE)
        "4:\n\t"
        "cbnz %[clamp], 5f\n\t"
        KILN_SDOT_ASM_STORE8_UNCLAMPED
        "subs %[n], %[n], #1\n\t"
        "b.ne 1b\n\t"
        "b 6f\n\t"
        "5:\n\t"
        KILN_SDOT_ASM_STORE8
        "subs %[n], %[n], #1\n\t"
        "b.ne 1b\n\t"
        "b 6f\n\t"
        "3:\n\t"
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE_LEFT)
        "b 4b\n\t"
        "6:\n\t"
        KILN_SDOT_ASM_NEXT_BLOCK
        : [in] "=&r"(cursor), [t0] "=&r"(t0), [n] "=&r"(n), [out] "+&r"(out), [w] "+&r"(w), [rq] "+&r"(rq),
          [blocks] "+&r"(blocks), [wp] "=&r"(wp), [g] "=&r"(g), [t1] "=&r"(t1),
          [o1] "=&r"(o1), [o2] "=&r"(o2), [o3] "=&r"(o3), [o4] "=&r"(o4), [o5] "=&r"(o5), [o6] "=&r"(o6),
          [o7] "=&r"(o7), [next] "=&r"(next)
        : [first] "r"(in), [groups] "r"(groups), [k16] "r"(in_c / 16), [off] "r"(offsets),
          [stage] "r"(s), [right] "r"(right), [clamp] "r"((int64_t)(s->clamp_lo | s->clamp_hi)),
          [stride] "r"(out_stride)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
          "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30", "v31");
    KILN_SDOT_ASM_UNREAD;
}
/* kiln_neon_sdot8_pointwise for windows of `rows` rows of 16k bytes each, read in place:
 * a window's first row at the cursor, its next rows `row` bytes apart, the eight pixels' windows
 * offsets[0..6] from the first (offsets[7]: from where the k loop leaves the cursor to the
 * next group of eight pixels), shape = {16-k groups per row, rows, bytes from a row's end
 * to the next row's start}; `groups` groups of eight pixels from `in` on, for `blocks` blocks
 * of eight output channels (the output stage as kiln_neon_sdot8_pointwise). A banded
 * convolution's output row, 3x3 windows of 16 channels: 3 rows of 3 groups, 684 SDOT-loop
 * instructions and about 130 more per eight pixels and block. */
KILN_NEON_INLINE void kiln_neon_sdot8_windows(const int8_t *w, const int8_t *in, const int64_t offsets[8],
                                              const int64_t shape[3], int64_t groups, int64_t blocks,
                                              const int32_t *rq, const kiln_neon_stage *s, int64_t right,
                                              int8_t *out, int64_t out_stride)
{
    const int8_t *wp;
    const int8_t *cursor;
    int8_t *t0;
    int64_t g, r, n, t1, o1, o2, o3, o4, o5, o6, o7, next;
    __asm__ volatile(
        KILN_SDOT_ASM_RUN_HEAD
        "ldr %[r], [%[shape], #8]\n\t"
        "5:\n\t"
        "ldr %[g], [%[shape]]\n\t"
        "2:\n\t"
        KILN_SDOT_ASM_COLUMNS8
        KILN_SDOT_ASM_GROUP("wp")
        "ldr %[t1], [%[shape], #16]\n\t"
        "add %[in], %[in], %[t1]\n\t"
        "subs %[r], %[r], #1\n\t"
        "b.ne 5b\n\t"
        "add %[in], %[in], %[next]\n\t"
        KILN_SDOT_ASM_TABLES("t1")
        "cbz %[right], 3f\n\t"
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE)
        "b 4f\n\t"
        "3:\n\t"
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE_LEFT)
        "4:\n\t"
        KILN_SDOT_ASM_STORE8
        "subs %[n], %[n], #1\n\t"
        "b.ne 1b\n\t"
        KILN_SDOT_ASM_NEXT_BLOCK
        : [in] "=&r"(cursor), [t0] "=&r"(t0), [n] "=&r"(n), [out] "+&r"(out), [w] "+&r"(w), [rq] "+&r"(rq),
          [blocks] "+&r"(blocks), [wp] "=&r"(wp), [g] "=&r"(g), [r] "=&r"(r), [t1] "=&r"(t1),
          [o1] "=&r"(o1), [o2] "=&r"(o2), [o3] "=&r"(o3), [o4] "=&r"(o4), [o5] "=&r"(o5), [o6] "=&r"(o6),
          [o7] "=&r"(o7), [next] "=&r"(next)
        : [first] "r"(in), [groups] "r"(groups), [off] "r"(offsets), [shape] "r"(shape),
          [stage] "r"(s), [right] "r"(right), [stride] "r"(out_stride)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
          "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30", "v31");
    (void)r;
    KILN_SDOT_ASM_UNREAD;
}
/* Lane `lane` of the weight quads wa (rows 0-3), wb (rows 4-7) against eight pixels' column
 * registers x0..x7; pixel j sums into v(2j), v(2j+1). */
#define KILN_SDOT_ASM_LANE8(wa, wb, lane, x0, x1, x2, x3, x4, x5, x6, x7)                       \
    KILN_SDOT_ASM_COL("v0", "v1", x0, wa, wb, lane) KILN_SDOT_ASM_COL("v2", "v3", x1, wa, wb, lane)       \
    KILN_SDOT_ASM_COL("v4", "v5", x2, wa, wb, lane) KILN_SDOT_ASM_COL("v6", "v7", x3, wa, wb, lane)       \
    KILN_SDOT_ASM_COL("v8", "v9", x4, wa, wb, lane) KILN_SDOT_ASM_COL("v10", "v11", x5, wa, wb, lane)     \
    KILN_SDOT_ASM_COL("v12", "v13", x6, wa, wb, lane) KILN_SDOT_ASM_COL("v14", "v15", x7, wa, wb, lane)
/* One kernel column's 16-k group (its 128 weight bytes from wp) against the eight pixels'
 * registers x0..x7: two LD1 of four registers, 64 SDOTs. */
#define KILN_SDOT_ASM_TAP(x0, x1, x2, x3, x4, x5, x6, x7)                                      \
    "ld1 {v16.16b - v19.16b}, [%[wp]], #64\n\t"                                                \
    KILN_SDOT_ASM_LANE8("v16", "v17", "0", x0, x1, x2, x3, x4, x5, x6, x7)                     \
    KILN_SDOT_ASM_LANE8("v18", "v19", "1", x0, x1, x2, x3, x4, x5, x6, x7)                     \
    "ld1 {v16.16b - v19.16b}, [%[wp]], #64\n\t"                                                \
    KILN_SDOT_ASM_LANE8("v16", "v17", "2", x0, x1, x2, x3, x4, x5, x6, x7)                     \
    KILN_SDOT_ASM_LANE8("v18", "v19", "3", x0, x1, x2, x3, x4, x5, x6, x7)
/* The ten pixels' 16 bytes at the cursor (pixel j at offset o_j; q28, q29 from t1, pixel 7),
 * the cursor then moved to the next 16-k group: eleven loads and adds. */
#define KILN_SDOT_ASM_TEN_ANY                                                                  \
    "ldr q20, [%[in]]\n\t"                                                                     \
    "ldr q21, [%[in], %[o1]]\n\t"                                                              \
    "ldr q22, [%[in], %[o2]]\n\t"                                                              \
    "ldr q23, [%[in], %[o3]]\n\t"                                                              \
    "ldr q24, [%[in], %[o4]]\n\t"                                                              \
    "ldr q25, [%[in], %[o5]]\n\t"                                                              \
    "ldr q26, [%[in], %[o6]]\n\t"                                                              \
    "ldr q27, [%[in], %[o7]]\n\t"                                                              \
    "add %[t1], %[in], %[o7]\n\t"                                                              \
    "ldr q28, [%[t1], %[o1]]\n\t"                                                              \
    "ldr q29, [%[t1], %[o2]]\n\t"                                                              \
    "add %[in], %[in], #16\n\t"
/* The same for pixels of exactly 16 bytes, contiguous: three LD1 and the cursor moved back. */
#define KILN_SDOT_ASM_TEN_16                                                                   \
    "ld1 {v20.16b - v23.16b}, [%[in]], #64\n\t"                                                \
    "ld1 {v24.16b - v27.16b}, [%[in]], #64\n\t"                                                \
    "ld1 {v28.16b, v29.16b}, [%[in]]\n\t"                                                      \
    "sub %[in], %[in], #112\n\t"
/* The assembly of kiln_neon_sdot8_slide3 with `ten` loading the ten pixels. */
#define KILN_SDOT_ASM_SLIDE3(ten)                                                              \
    __asm__ volatile(                                                                          \
        KILN_SDOT_ASM_OFFSETS                                                                  \
        "0:\n\t"                                                                               \
        "ldr %[in], [%[shape], #24]\n\t"                                                       \
        "mov %[t0], %[out]\n\t"                                                                \
        "ldr %[n], [%[shape], #32]\n\t"                                                        \
        "1:\n\t"                                                                               \
        KILN_SDOT_ASM_START                                                                    \
        "ldr %[r], [%[shape], #8]\n\t"                                                         \
        "5:\n\t"                                                                               \
        "ldr %[g], [%[shape]]\n\t"                                                             \
        "2:\n\t"                                                                               \
        ten                                                                                    \
        KILN_SDOT_ASM_TAP("v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27")              \
        KILN_SDOT_ASM_TAP("v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28")              \
        "subs %[g], %[g], #1\n\t"                                                              \
        KILN_SDOT_ASM_TAP("v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29")              \
        "b.ne 2b\n\t"                                                                          \
        "ldr %[t1], [%[shape], #16]\n\t"                                                       \
        "add %[in], %[in], %[t1]\n\t"                                                          \
        "subs %[r], %[r], #1\n\t"                                                              \
        "b.ne 5b\n\t"                                                                          \
        "add %[in], %[in], %[next]\n\t"                                                        \
        KILN_SDOT_ASM_TABLES("t1")                                                             \
        "ldr %[t1], [%[shape], #40]\n\t"                                                       \
        "cbz %[t1], 3f\n\t"                                                                    \
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE)                                                \
        "b 4f\n\t"                                                                             \
        "3:\n\t"                                                                               \
        KILN_SDOT_ASM_ALL8(KILN_SDOT_ASM_SCALE_LEFT)                                           \
        "4:\n\t"                                                                               \
        KILN_SDOT_ASM_STORE8                                                                   \
        "subs %[n], %[n], #1\n\t"                                                              \
        "b.ne 1b\n\t"                                                                          \
        KILN_SDOT_ASM_NEXT_BLOCK                                                               \
        : [in] "=&r"(cursor), [t0] "=&r"(t0), [n] "=&r"(n), [out] "+&r"(out), [w] "+&r"(w), [rq] "+&r"(rq), \
          [blocks] "+&r"(blocks), [wp] "=&r"(wp), [g] "=&r"(g), [r] "=&r"(r), [t1] "=&r"(t1),  \
          [o1] "=&r"(o1), [o2] "=&r"(o2), [o3] "=&r"(o3), [o4] "=&r"(o4), [o5] "=&r"(o5),        \
          [o6] "=&r"(o6), [o7] "=&r"(o7), [next] "=&r"(next)                                   \
        : [off] "r"(offsets), [shape] "r"(shape), [stage] "r"(s), [stride] "r"(out_stride)     \
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", \
          "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", \
          "v27", "v28", "v29", "v30", "v31")
/* kiln_neon_sdot8_windows for windows three pixels wide at stride 1, of 16k channels: per
 * kernel row and 16-k group h of the channels, the ten pixels under the eight windows are
 * loaded once (pixels j .. j + 9, offsets[0..6] = 1..7 pixels; their 16 bytes at h; of 16
 * channels, three LD1) and each kernel column kx takes pixels kx .. kx + 7 (against 24 loads
 * of the same bytes when each window's row is read on its own: 209 instructions per 192
 * SDOTs, not 228; 202 at 16 channels). Weights in the order row, h, kx (repack:
 * sdot_slide_order); shape = {channel groups c, rows, bytes from a row's end (c * 16 past
 * its start) to the next row, the first pixel, pixel groups, right}; offsets[7]: from where
 * the k loop leaves the cursor to the next group of eight pixels. */
KILN_NEON_INLINE void kiln_neon_sdot8_slide3(const int8_t *w, const int64_t offsets[8], const int64_t shape[6],
                                             int64_t blocks, const int32_t *rq, const kiln_neon_stage *s,
                                             int8_t *out, int64_t out_stride)
{
    const int8_t *wp;
    const int8_t *cursor;
    int8_t *t0;
    int64_t g, r, n, t1, o1, o2, o3, o4, o5, o6, o7, next;
    if (offsets[0] == 16) {
        KILN_SDOT_ASM_SLIDE3(KILN_SDOT_ASM_TEN_16);
    } else {
        KILN_SDOT_ASM_SLIDE3(KILN_SDOT_ASM_TEN_ANY);
    }
    (void)r;
    KILN_SDOT_ASM_UNREAD;
}
#undef KILN_SDOT_ASM_SLIDE3
#undef KILN_SDOT_ASM_UNREAD
#undef KILN_SDOT_ASM_TEN_16
#undef KILN_SDOT_ASM_TEN_ANY
#undef KILN_SDOT_ASM_TAP
#undef KILN_SDOT_ASM_LANE8
#undef KILN_SDOT_ASM_SCALE_LEFT
#undef KILN_SDOT_ASM_OFFSETS
#undef KILN_SDOT_ASM_RUN_HEAD
#undef KILN_SDOT_ASM_START
#undef KILN_SDOT_ASM_COLUMNS8
#undef KILN_SDOT_ASM_NEXT_BLOCK
#undef KILN_SDOT_ASM_GROUP8_SCALED
#undef KILN_SDOT_ASM_PIXELS
#undef KILN_SDOT_ASM_STEP
#undef KILN_SDOT_ASM_GROUP
#undef KILN_SDOT_ASM_STORE8
#undef KILN_SDOT_ASM_ALL8
#undef KILN_SDOT_ASM_TABLES
#undef KILN_SDOT_ASM_SPREAD_BIAS
#undef KILN_SDOT_ASM_PAIR
#undef KILN_SDOT_ASM_STORE8_UNCLAMPED
#undef KILN_SDOT_ASM_PAIR_UNCLAMPED
#undef KILN_SDOT_ASM_NARROW
#undef KILN_SDOT_ASM_STORE_PAIR
#undef KILN_SDOT_ASM_SCALE
#undef KILN_SDOT_ASM_LANE
#undef KILN_SDOT_ASM_COL

/* The sums of eight rows of packed weights w with `cols` columns (8, 4 or 1), started from
 * bias: acc[j][h] holds rows 4h..4h+3 of column j, one per lane. A column is `rows` runs of
 * `quads` quads, run r of column j at col[j] + r * step[j] (an im2col column: one run; a
 * window inside the image: one run per kernel row, read in place). Each run sixteen k at a
 * time with 16-byte column loads, then eight, then four, so that no run is read past its end. */
KILN_NEON_INLINE void kiln_neon_sdot8_tile(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                           const int32_t step[KILN_SDOT_COLS], int32_t rows, int32_t quads,
                                           int cols, int tails, int32x4_t b0, int32x4_t b1,
                                           int32x4_t acc[KILN_SDOT_COLS][2])
{
    const int8_t *src[KILN_SDOT_COLS];
    int32_t r, q;
    int j;
    for (j = 0; j < cols; ++j) {
        acc[j][0] = b0;
        acc[j][1] = b1;
        src[j] = col[j];
    }
    for (r = 0; r < rows; ++r) {
        int32_t k = 0;
        for (q = quads; q >= 4; q -= 4, k += 16) {
            int8x16_t x[KILN_SDOT_COLS];
            for (j = 0; j < cols; ++j) {
                x[j] = vld1q_s8(src[j] + k);
            }
            KILN_SDOT_QUAD(vdotq_laneq_s32, 0);
            KILN_SDOT_QUAD(vdotq_laneq_s32, 1);
            KILN_SDOT_QUAD(vdotq_laneq_s32, 2);
            KILN_SDOT_QUAD(vdotq_laneq_s32, 3);
        }
        if (tails && q >= 2) {
            int8x8_t x[KILN_SDOT_COLS];
            for (j = 0; j < cols; ++j) {
                x[j] = vld1_s8(src[j] + k);
            }
            KILN_SDOT_QUAD(vdotq_lane_s32, 0);
            KILN_SDOT_QUAD(vdotq_lane_s32, 1);
            q -= 2;
            k += 8;
        }
        if (tails && q == 1) {
            int8x8_t x[KILN_SDOT_COLS];
            for (j = 0; j < cols; ++j) {
                x[j] = vreinterpret_s8_s32(vdup_n_s32(*(const kiln_neon_w32 *)(const void *)(src[j] + k)));
            }
            KILN_SDOT_QUAD(vdotq_lane_s32, 0);
        }
        for (j = 0; j < cols; ++j) {
            src[j] += step[j];
        }
    }
}
#undef KILN_SDOT_QUAD

/* Columns j and j + 1 of a tile (j alone when it is the last) through the output stage, the
 * first n bytes (at most 8) of each written at out + j * out_stride. Called with constant j
 * and `right` so that the accumulators stay in registers; a whole column of the pair's
 * second half is one lane store (no move out of the vector first). */
KILN_NEON_INLINE void kiln_neon_sdot8_out(int32x4_t acc[KILN_SDOT_COLS][2], int j, int cols, const kiln_neon_rq4 *qa,
                                          const kiln_neon_rq4 *qb, const kiln_neon_stage *s, int right,
                                          int8_t *out, int32_t out_stride, int32_t n)
{
    const int k = j + 1 < cols ? j + 1 : j;
    const int8x16_t b = kiln_neon_pack16(kiln_neon_scale4q(acc[j][0], qa, right),
                                         kiln_neon_scale4q(acc[j][1], qb, right),
                                         kiln_neon_scale4q(acc[k][0], qa, right),
                                         kiln_neon_scale4q(acc[k][1], qb, right), s->zp, s->lo, s->hi);
    if (n >= 8) {
        vst1_s8(out + j * out_stride, vget_low_s8(b));
        if (j + 1 < cols) {
            vst1q_lane_s64((int64_t *)(void *)(out + (j + 1) * out_stride), vreinterpretq_s64_s8(b), 1);
        }
        return;
    }
    kiln_neon_store8(out + j * out_stride, vget_low_s8(b), n);
    if (j + 1 < cols) {
        kiln_neon_store8(out + (j + 1) * out_stride, vget_high_s8(b), n);
    }
}

/* A tile's `cols` columns (8, 4 or 1) of the output channels oc..oc+7 through the output
 * stage s, table rq of the block (loaded here, after the tile: no table vector lives across
 * the k loop), two columns at a time. */
KILN_NEON_INLINE void kiln_neon_sdot8_outs(int32x4_t acc[KILN_SDOT_COLS][2], int cols, const int32_t *rq,
                                           const kiln_neon_stage *s, int right, int8_t *out, int32_t out_stride,
                                           int32_t n)
{
    const kiln_neon_rq4 qa = kiln_neon_rq4_load(rq), qb = kiln_neon_rq4_load(rq + 16);
    kiln_neon_sdot8_out(acc, 0, cols, &qa, &qb, s, right, out, out_stride, n);
    if (cols > 2) {
        kiln_neon_sdot8_out(acc, 2, cols, &qa, &qb, s, right, out, out_stride, n);
    }
    if (cols > 4) {
        kiln_neon_sdot8_out(acc, 4, cols, &qa, &qb, s, right, out, out_stride, n);
        kiln_neon_sdot8_out(acc, 6, cols, &qa, &qb, s, right, out, out_stride, n);
    }
}

/* `cols` columns (8, 4 or 1) times every block of eight rows, `cols`, `right` and `tails`
 * constants once inlined: the tile (eight columns: kiln_neon_sdot8_tile8, which stores whole
 * blocks itself with `right`), then the output stage s (table rq, 32 words per block), the
 * first out_c bytes of column j written at out + j * out_stride. */
KILN_NEON_INLINE void kiln_neon_sdot8_gemm(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                           const int32_t step[KILN_SDOT_COLS], int cols, int32_t rows,
                                           int32_t quads, int32_t out_c, const int32_t *rq,
                                           const kiln_neon_stage *s, int right, int tails, int8_t *out,
                                           int32_t out_stride)
{
    int64_t adv[KILN_SDOT_COLS];
    int32_t oc;
    int j;
    if (cols == 8) {
        for (j = 0; j < KILN_SDOT_COLS; ++j) {
            adv[j] = (int64_t)step[j] - 4 * (int64_t)quads;
        }
    }
    for (oc = 0; oc < out_c; oc += 8, rq += 32) {
        int32x4_t acc[KILN_SDOT_COLS][2];
        if (cols == 8) {  /* with `right`, a whole block of eight channels stored by the tile */
            const int64_t fused = right && out_c - oc >= 8;
            kiln_neon_sdot8_tile8(&w, col, adv, rows, quads, rq, fused, s, out + oc, out_stride, acc);
            if (fused) {
                continue;
            }
        } else {
            kiln_neon_sdot8_tile(w, col, step, rows, quads, cols, tails, vld1q_s32(rq), vld1q_s32(rq + 16), acc);
            w += 32 * rows * quads;
        }
        kiln_neon_sdot8_outs(acc, cols, rq, s, right, out + oc, out_stride, out_c - oc);
    }
}

#define KILN_SDOT_GEMM(c, r, t) \
    kiln_neon_sdot8_gemm(w, col, step, c, rows, quads, out_c, rq, s, r, t, out, out_stride)

/* The tiles of fewer than eight columns (a layer's last pixels: intrinsics, with `right` and
 * whether a run ends in a partial group of quads as constants) and those of layers with left
 * shifts (the assembly leaves their sums to the intrinsics' output stage), out of line:
 * inlined, they grow the convolution past what GCC clones per layer with its parameters as
 * constants (measured: the KWS stem twice as slow). */
static __attribute__((noinline)) void kiln_neon_sdot8_few(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                                          const int32_t step[KILN_SDOT_COLS], int cols,
                                                          int32_t rows, int32_t quads, int32_t out_c,
                                                          const int32_t *rq, const kiln_neon_stage *s, int8_t *out,
                                                          int32_t out_stride)
{
    const int tails = (quads & 3) != 0;
    if (cols == 8) {
        KILN_SDOT_GEMM(8, 0, 1);
    } else if (s->right) {
        if (cols == 4 && tails) {
            KILN_SDOT_GEMM(4, 1, 1);
        } else if (cols == 4) {
            KILN_SDOT_GEMM(4, 1, 0);
        } else {
            KILN_SDOT_GEMM(1, 1, 1);
        }
    } else if (cols == 4) {
        KILN_SDOT_GEMM(4, 0, 1);
    } else {
        KILN_SDOT_GEMM(1, 0, 1);
    }
}

/* kiln_neon_sdot8_gemm for `cols` columns (8, 4 or 1): eight of a layer whose channels all
 * shift right inlined (the assembly tile stores them), the rest through kiln_neon_sdot8_few. */
KILN_NEON_INLINE void kiln_neon_sdot8_cols(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                           const int32_t step[KILN_SDOT_COLS], int cols, int32_t rows,
                                           int32_t quads, int32_t out_c, const int32_t *rq,
                                           const kiln_neon_stage *s, int8_t *out, int32_t out_stride)
{
    if (cols == 8 && s->right) {
        KILN_SDOT_GEMM(8, 1, 1);
    } else {
        kiln_neon_sdot8_few(w, col, step, cols, rows, quads, out_c, rq, s, out, out_stride);
    }
}
#undef KILN_SDOT_GEMM

#endif /* KILN_NEON_SDOT_H */
