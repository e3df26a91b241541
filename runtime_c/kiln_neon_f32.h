/*
 * kiln_neon_f32.h - the float32 GEMM register tile of Kiln's NEON conv2d_f32 and
 * fully_connected_f32 kernels (AArch64: Cortex-A53/A55/A72/A76): four rows by sixteen output
 * channels (or eight), 16 float32x4 accumulators (v16-v31; 8: v16-v23) started from the bias, per step of k one input
 * lane of each row times four weight vectors (FMLA by element), then the activation clamp (its
 * upper bound only when finite) and one ST1 of four vectors per row.
 *
 * Inline assembly because GCC's scheduler hoists the next steps' weight loads above the
 * multiplies and then spills accumulators to the stack (92 instructions per four k at -O3
 * -mcpu=cortex-a72 where 74 do); here four k take 4 input loads, 4 LD1s of four weight vectors
 * (the next step's loaded while the current one multiplies) and 64 FMLAs.
 *
 * The rows are read in place in runs, each from a table of pointers (a window's kernel rows
 * inside the image, its taps at the border, zeros for the padding: no im2col copy).
 * Weights: codegen/kernels/repack_f32.gemm_panels (a block's 16 bias values, then per k its 16
 * weights). Each sum is bias + a[0]w[0] + a[1]w[1] + ..., one rounding per FMA.
 */
#ifndef KILN_NEON_F32_H
#define KILN_NEON_F32_H

#include <stdint.h>
#include <arm_neon.h>

#if !defined(__aarch64__)
#error "kiln_neon_f32.h: the NEON float32 kernels are written for AArch64"
#endif

/* Accumulators c0..c3 (c0, c1 for eight channels) += weights wa..wd times lane `lane` of x. */
#define KILN_F32_ROW2(c0, c1, x, wa, wb, lane)                     \
    "fmla " c0 ".4s, " wa ".4s, " x ".s[" lane "]\n\t"              \
    "fmla " c1 ".4s, " wb ".4s, " x ".s[" lane "]\n\t"
#define KILN_F32_ROW4(c0, c1, c2, c3, x, wa, wb, wc, wd, lane)     \
    KILN_F32_ROW2(c0, c1, x, wa, wb, lane) KILN_F32_ROW2(c2, c3, x, wc, wd, lane)

/* One step of k over sixteen (eight) channels: the four rows' inputs (lane `lane` of v0..v3)
 * times weights wa..wd (wa, wb); row r's accumulators from v16 + 4r (v16 + 2r). */
#define KILN_F32_STEP16(wa, wb, wc, wd, lane)                                      \
    KILN_F32_ROW4("v16", "v17", "v18", "v19", "v0", wa, wb, wc, wd, lane)          \
    KILN_F32_ROW4("v20", "v21", "v22", "v23", "v1", wa, wb, wc, wd, lane)          \
    KILN_F32_ROW4("v24", "v25", "v26", "v27", "v2", wa, wb, wc, wd, lane)          \
    KILN_F32_ROW4("v28", "v29", "v30", "v31", "v3", wa, wb, wc, wd, lane)
#define KILN_F32_STEP8(wa, wb, lane)                                               \
    KILN_F32_ROW2("v16", "v17", "v0", wa, wb, lane)                                \
    KILN_F32_ROW2("v18", "v19", "v1", wa, wb, lane)                                \
    KILN_F32_ROW2("v20", "v21", "v2", wa, wb, lane)                                \
    KILN_F32_ROW2("v22", "v23", "v3", wa, wb, lane)

/* fmax (lo) or fmin (hi) of accumulators a, b with the clamp vector `bound`. */
#define KILN_F32_CLAMP2(op, bound, a, b)                       \
    op " " a ".4s, " a ".4s, %" bound ".4s\n\t"                 \
    op " " b ".4s, " b ".4s, %" bound ".4s\n\t"
#define KILN_F32_CLAMP16(op, bound)                                                           \
    KILN_F32_CLAMP2(op, bound, "v16", "v17") KILN_F32_CLAMP2(op, bound, "v18", "v19")         \
    KILN_F32_CLAMP2(op, bound, "v20", "v21") KILN_F32_CLAMP2(op, bound, "v22", "v23")         \
    KILN_F32_CLAMP2(op, bound, "v24", "v25") KILN_F32_CLAMP2(op, bound, "v26", "v27")         \
    KILN_F32_CLAMP2(op, bound, "v28", "v29") KILN_F32_CLAMP2(op, bound, "v30", "v31")
#define KILN_F32_CLAMP8(op, bound)                                                            \
    KILN_F32_CLAMP2(op, bound, "v16", "v17") KILN_F32_CLAMP2(op, bound, "v18", "v19")         \
    KILN_F32_CLAMP2(op, bound, "v20", "v21") KILN_F32_CLAMP2(op, bound, "v22", "v23")

/* One quad of k (four steps) of the four rows: their inputs, then per step the weights of the
 * next lane loaded (`load_a` or `load_b`) while the current lane multiplies; `mid` goes
 * before the last step (the loop's count). */
#define KILN_F32_QUAD(load_a, load_b, step_a0, step_b1, step_a2, step_b3, mid)             \
    "ldr q0, [%[a0]], #16\n\t"                                                            \
    "ldr q1, [%[a1]], #16\n\t"                                                            \
    "ldr q2, [%[a2]], #16\n\t"                                                            \
    "ldr q3, [%[a3]], #16\n\t"                                                            \
    load_a load_b step_a0 load_a step_b1 load_b step_a2 mid step_b3

/* The loops of a tile over its runs: per run its quads of k, an odd one first, then two per
 * iteration (one loop count for eight steps), then the rest one k at a time. */
#define KILN_F32_LOOPS(load_a, load_b, step_a0, step_b1, step_a2, step_b3, step_tail)      \
    "1:\n\t"                                                                              \
    "ldp %[a0], %[a1], [%[run]], #16\n\t"                                                 \
    "ldp %[a2], %[a3], [%[run]], #16\n\t"                                                 \
    "lsr %[quads], %[run_len], #3\n\t"                                                    \
    "tbz %[run_len], #2, 21f\n\t"                                                         \
    KILN_F32_QUAD(load_a, load_b, step_a0, step_b1, step_a2, step_b3, "")                 \
    "21:\n\t"                                                                             \
    "cbz %[quads], 3f\n\t"                                                                \
    "2:\n\t"                                                                              \
    KILN_F32_QUAD(load_a, load_b, step_a0, step_b1, step_a2, step_b3, "")                 \
    KILN_F32_QUAD(load_a, load_b, step_a0, step_b1, step_a2, step_b3,                     \
                  "subs %[quads], %[quads], #1\n\t")                                      \
    "b.ne 2b\n\t"                                                                         \
    "3:\n\t"                                                                              \
    "ands %[rest], %[run_len], #3\n\t"                                                    \
    "b.eq 5f\n\t"                                                                         \
    "4:\n\t"                                                                              \
    "ldr s0, [%[a0]], #4\n\t"                                                             \
    "ldr s1, [%[a1]], #4\n\t"                                                             \
    "ldr s2, [%[a2]], #4\n\t"                                                             \
    "ldr s3, [%[a3]], #4\n\t"                                                             \
    load_a                                                                                \
    "subs %[rest], %[rest], #1\n\t"                                                       \
    step_tail                                                                             \
    "b.ne 4b\n\t"                                                                         \
    "5:\n\t"                                                                              \
    "subs %[runs], %[runs], #1\n\t"                                                       \
    "b.ne 1b\n\t"

/* Store the four rows (`regs`: one row's accumulators as an ST1 list) at out, out + ldo, ... */
#define KILN_F32_STORE(r0, r1, r2, r3)                         \
    "st1 {" r0 "}, [%[out]]\n\t"                                \
    "add %[out], %[out], %[row_bytes]\n\t"                      \
    "st1 {" r1 "}, [%[out]]\n\t"                                \
    "add %[out], %[out], %[row_bytes]\n\t"                      \
    "st1 {" r2 "}, [%[out]]\n\t"                                \
    "add %[out], %[out], %[row_bytes]\n\t"                      \
    "st1 {" r3 "}, [%[out]]\n\t"

#define KILN_F32_OPERANDS                                                                                      \
    : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [w] "+&r"(w), [run] "+&r"(run),          \
      [runs] "+&r"(runs), [out] "+&r"(out), [quads] "=&r"(quads), [rest] "=&r"(rest)                             \
    : [run_len] "r"(run_len), [row_bytes] "r"(row_bytes), [lo] "w"(lo), [hi] "w"(hi), [bounded] "r"(bounded)   \
    : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v16", "v17",  \
      "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31"

/* The left operand of a GEMM tile: row r (r < 4; a tile of one row reads row 0 only) is
 * `runs` runs of `run_len` floats, run i of row r at run[4 * i + r]: a window's kernel rows
 * read in place (taps in the padding: a run of zeros), its taps one by one at the border, or
 * one run (a pointwise layer's pixel, a fully connected layer's row). */
typedef struct {
    const float *const *run;
    int32_t runs;
    int32_t run_len;
} kiln_neon_f32_rows;

/* A 4-row tile's code over sixteen (eight) channels, `clamp_lo` its lower clamp (or none). */
#define KILN_F32_TILE16(clamp_lo)                                                                                \
    "ld1 {v16.4s - v19.4s}, [%[w]]\n\t"                                                                          \
    "ld1 {v20.4s - v23.4s}, [%[w]]\n\t"                                                                          \
    "ld1 {v24.4s - v27.4s}, [%[w]]\n\t"                                                                          \
    "ld1 {v28.4s - v31.4s}, [%[w]], #64\n\t"                                                                     \
    KILN_F32_LOOPS("ld1 {v4.4s - v7.4s}, [%[w]], #64\n\t", "ld1 {v8.4s - v11.4s}, [%[w]], #64\n\t",              \
                   KILN_F32_STEP16("v4", "v5", "v6", "v7", "0"), KILN_F32_STEP16("v8", "v9", "v10", "v11", "1"),    \
                   KILN_F32_STEP16("v4", "v5", "v6", "v7", "2"), KILN_F32_STEP16("v8", "v9", "v10", "v11", "3"),    \
                   KILN_F32_STEP16("v4", "v5", "v6", "v7", "0"))                                                   \
    clamp_lo                                                                                                    \
    "cbz %w[bounded], 6f\n\t"                                                                                    \
    KILN_F32_CLAMP16("fmin", "[hi]")                                                                            \
    "6:\n\t"                                                                                                     \
    KILN_F32_STORE("v16.4s - v19.4s", "v20.4s - v23.4s", "v24.4s - v27.4s", "v28.4s - v31.4s")
#define KILN_F32_TILE8(clamp_lo)                                                                                 \
    "ld1 {v16.4s, v17.4s}, [%[w]]\n\t"                                                                           \
    "ld1 {v18.4s, v19.4s}, [%[w]]\n\t"                                                                           \
    "ld1 {v20.4s, v21.4s}, [%[w]]\n\t"                                                                           \
    "ld1 {v22.4s, v23.4s}, [%[w]], #32\n\t"                                                                      \
    KILN_F32_LOOPS("ld1 {v4.4s, v5.4s}, [%[w]], #32\n\t", "ld1 {v8.4s, v9.4s}, [%[w]], #32\n\t",                  \
                   KILN_F32_STEP8("v4", "v5", "0"), KILN_F32_STEP8("v8", "v9", "1"),                                \
                   KILN_F32_STEP8("v4", "v5", "2"), KILN_F32_STEP8("v8", "v9", "3"),                                \
                   KILN_F32_STEP8("v4", "v5", "0"))                                                                \
    clamp_lo                                                                                                    \
    "cbz %w[bounded], 6f\n\t"                                                                                    \
    KILN_F32_CLAMP8("fmin", "[hi]")                                                                             \
    "6:\n\t"                                                                                                     \
    KILN_F32_STORE("v16.4s, v17.4s", "v18.4s, v19.4s", "v20.4s, v21.4s", "v22.4s, v23.4s")

/* out[r * ldo + c] = clamp(bias[c] + sum over k of a[r][k] * w[k][c]) for rows r < 4 and
 * channels c < 16 (`wide`) or c < 8 of one panel w (its 16 or 8 bias values, then
 * runs * run_len steps of 16 or 8 weights); `floored`: the lower clamp applies (0: none, a
 * Winograd GEMM's products). `wide` and `floored` are constants where it is inlined. */
static inline __attribute__((always_inline)) void kiln_neon_f32_tile4(const kiln_neon_f32_rows *a, const float *w,
                                                                     float *out, int32_t ldo, float32x4_t lo,
                                                                     float32x4_t hi, int wide, int floored)
{
    const float *a0, *a1, *a2, *a3;
    const float *const *run = a->run;
    int64_t quads, rest, runs = a->runs;
    const int64_t run_len = a->run_len, row_bytes = (int64_t)ldo * 4;
    /* the upper clamp applies (not +inf, e.g. ReLU6); else its FMINs are skipped */
    const int64_t bounded = vgetq_lane_f32(hi, 0) <= 0x1.fffffep+127f;
    if (wide && floored) {
        __asm__ volatile(KILN_F32_TILE16(KILN_F32_CLAMP16("fmax", "[lo]")) KILN_F32_OPERANDS);
    } else if (wide) {
        __asm__ volatile(KILN_F32_TILE16("") KILN_F32_OPERANDS);
    } else if (floored) {
        __asm__ volatile(KILN_F32_TILE8(KILN_F32_CLAMP8("fmax", "[lo]")) KILN_F32_OPERANDS);
    } else {
        __asm__ volatile(KILN_F32_TILE8("") KILN_F32_OPERANDS);
    }
    (void)a0; /* stepped by the loops, not read after them */
    (void)a1;
    (void)a2;
    (void)a3;
    (void)run;
    (void)w;
    (void)runs;
    (void)out;
    (void)quads;
    (void)rest;
}

/* One row's step of k: accumulators c0..c3 (c0, c1 for eight channels) += weights wa..wd times
 * lane `lane` of v0. */
#define KILN_F32_ONE16(c0, c1, c2, c3, wa, wb, wc, wd, lane) KILN_F32_ROW4(c0, c1, c2, c3, "v0", wa, wb, wc, wd, lane)
#define KILN_F32_ONE8(c0, c1, wa, wb, lane) KILN_F32_ROW2(c0, c1, "v0", wa, wb, lane)

/* The loops of a one-row tile over its runs: per run its quads of k (the four steps' weights
 * by `loads`, even steps into one set of accumulators and odd ones into another: twice the
 * independent FMLA chains), then the rest one k at a time; the row then steps to its next run. */
#define KILN_F32_ONE_LOOPS(loads, steps, load_tail, step_tail)                             \
    "1:\n\t"                                                                              \
    "ldr %[a0], [%[run]], #32\n\t"                                                        \
    "lsr %[quads], %[run_len], #2\n\t"                                                    \
    "and %[rest], %[run_len], #3\n\t"                                                     \
    "cbz %[quads], 3f\n\t"                                                                \
    "2:\n\t"                                                                              \
    "ldr q0, [%[a0]], #16\n\t"                                                            \
    loads                                                                                 \
    "subs %[quads], %[quads], #1\n\t"                                                     \
    steps                                                                                 \
    "b.ne 2b\n\t"                                                                         \
    "3:\n\t"                                                                              \
    "cbz %[rest], 5f\n\t"                                                                 \
    "4:\n\t"                                                                              \
    "ldr s0, [%[a0]], #4\n\t"                                                             \
    load_tail                                                                             \
    "subs %[rest], %[rest], #1\n\t"                                                       \
    step_tail                                                                             \
    "b.ne 4b\n\t"                                                                         \
    "5:\n\t"                                                                              \
    "subs %[runs], %[runs], #1\n\t"                                                       \
    "b.ne 1b\n\t"

#define KILN_F32_ONE_OPERANDS                                                                                  \
    : [a0] "=&r"(a0), [w] "+&r"(w), [run] "+&r"(run), [runs] "+&r"(runs), [quads] "=&r"(quads), [rest] "=&r"(rest) \
    : [run_len] "r"(run_len), [out] "r"(out), [lo] "w"(lo), [hi] "w"(hi), [bounded] "r"(bounded)              \
    : "cc", "memory", "v0", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",      \
      "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27"

/* out[c] = clamp(bias[c] + sum over k of a[0][k] * w[k][c]) for channels c < 16 (`wide`) or
 * c < 8 of one panel w, as kiln_neon_f32_tile4 for one row (a fully connected layer of batch
 * 1, a convolution's last pixel): each weight is used once, so four weight vectors come per
 * LD1; the sum is the bias plus the even steps' products, plus the odd steps' products. */
static inline __attribute__((always_inline)) void kiln_neon_f32_tile1(const kiln_neon_f32_rows *a, const float *w,
                                                                     float *out, float32x4_t lo, float32x4_t hi,
                                                                     int wide)
{
    const float *a0;
    const float *const *run = a->run;
    int64_t quads, rest, runs = a->runs;
    const int64_t run_len = a->run_len;
    const int64_t bounded = vgetq_lane_f32(hi, 0) <= 0x1.fffffep+127f;
    if (wide) {
        __asm__ volatile(
            "ld1 {v16.4s - v19.4s}, [%[w]], #64\n\t"
            "movi v20.4s, #0\n\t" "movi v21.4s, #0\n\t" "movi v22.4s, #0\n\t" "movi v23.4s, #0\n\t"
            KILN_F32_ONE_LOOPS("ld1 {v4.4s - v7.4s}, [%[w]], #64\n\t" "ld1 {v8.4s - v11.4s}, [%[w]], #64\n\t"
                               "ld1 {v12.4s - v15.4s}, [%[w]], #64\n\t" "ld1 {v24.4s - v27.4s}, [%[w]], #64\n\t",
                               KILN_F32_ONE16("v16", "v17", "v18", "v19", "v4", "v5", "v6", "v7", "0")
                               KILN_F32_ONE16("v20", "v21", "v22", "v23", "v8", "v9", "v10", "v11", "1")
                               KILN_F32_ONE16("v16", "v17", "v18", "v19", "v12", "v13", "v14", "v15", "2")
                               KILN_F32_ONE16("v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "3"),
                               "ld1 {v4.4s - v7.4s}, [%[w]], #64\n\t",
                               KILN_F32_ONE16("v16", "v17", "v18", "v19", "v4", "v5", "v6", "v7", "0"))
            "fadd v16.4s, v16.4s, v20.4s\n\t" "fadd v17.4s, v17.4s, v21.4s\n\t"
            "fadd v18.4s, v18.4s, v22.4s\n\t" "fadd v19.4s, v19.4s, v23.4s\n\t"
            KILN_F32_CLAMP2("fmax", "[lo]", "v16", "v17") KILN_F32_CLAMP2("fmax", "[lo]", "v18", "v19")
            "cbz %w[bounded], 6f\n\t"
            KILN_F32_CLAMP2("fmin", "[hi]", "v16", "v17") KILN_F32_CLAMP2("fmin", "[hi]", "v18", "v19")
            "6:\n\t"
            "st1 {v16.4s - v19.4s}, [%[out]]\n\t"
            KILN_F32_ONE_OPERANDS);
    } else {
        __asm__ volatile(
            "ld1 {v16.4s, v17.4s}, [%[w]], #32\n\t"
            "movi v20.4s, #0\n\t" "movi v21.4s, #0\n\t"
            KILN_F32_ONE_LOOPS("ld1 {v4.4s - v7.4s}, [%[w]], #64\n\t" "ld1 {v8.4s - v11.4s}, [%[w]], #64\n\t",
                               KILN_F32_ONE8("v16", "v17", "v4", "v5", "0")
                               KILN_F32_ONE8("v20", "v21", "v6", "v7", "1")
                               KILN_F32_ONE8("v16", "v17", "v8", "v9", "2")
                               KILN_F32_ONE8("v20", "v21", "v10", "v11", "3"),
                               "ld1 {v4.4s, v5.4s}, [%[w]], #32\n\t",
                               KILN_F32_ONE8("v16", "v17", "v4", "v5", "0"))
            "fadd v16.4s, v16.4s, v20.4s\n\t" "fadd v17.4s, v17.4s, v21.4s\n\t"
            KILN_F32_CLAMP2("fmax", "[lo]", "v16", "v17")
            "cbz %w[bounded], 6f\n\t"
            KILN_F32_CLAMP2("fmin", "[hi]", "v16", "v17")
            "6:\n\t"
            "st1 {v16.4s, v17.4s}, [%[out]]\n\t"
            KILN_F32_ONE_OPERANDS);
    }
    (void)a0; /* stepped by the loops, not read after them */
    (void)run;
    (void)w;
    (void)runs;
    (void)quads;
    (void)rest;
}

#undef KILN_F32_ROW2
#undef KILN_F32_ROW4
#undef KILN_F32_STEP16
#undef KILN_F32_STEP8
#undef KILN_F32_CLAMP2
#undef KILN_F32_CLAMP16
#undef KILN_F32_CLAMP8
#undef KILN_F32_QUAD
#undef KILN_F32_LOOPS
#undef KILN_F32_STORE
#undef KILN_F32_TILE16
#undef KILN_F32_TILE8
#undef KILN_F32_OPERANDS
#undef KILN_F32_ONE16
#undef KILN_F32_ONE8
#undef KILN_F32_ONE_LOOPS
#undef KILN_F32_ONE_OPERANDS

#endif /* KILN_NEON_F32_H */
