/*
 * kiln_neon_sdot.h - the int8 convolution GEMM of Kiln's neon_dotprod kernels (Armv8.2-A
 * +dotprod: Cortex-A55/A76): a register tile of eight output channels by eight pixels, 16
 * int32 accumulators started from the bias, over the window in quads of four k (so a
 * pointwise layer whose channels are a multiple of 4 reads its input pixels in place, and a
 * window whose rows are whole quads reads its rows in place: no im2col copy inside the
 * image), then the output stage of kiln_neon_s8.h fused per pair of pixels.
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

/* Columns per tile: 8 pixels (16 accumulators, 8 column vectors and 2 weight vectors of the
 * 32 NEON registers), then 4 and 1 for the last pixels of a layer. */
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

/* The sums of eight rows of packed weights w with `cols` columns (8, 4 or 1), started from
 * bias: acc[j][h] holds rows 4h..4h+3 of column j, one per lane. A column is `rows` runs of
 * `quads` quads, run r of column j at col[j] + r * step[j] (an im2col column: one run; a
 * window inside the image: one run per kernel row, read in place). Each run sixteen k at a
 * time with 16-byte column loads, then eight, then four, so that no run is read past its end. */
KILN_NEON_INLINE void kiln_neon_sdot8_tile(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                           const int32_t step[KILN_SDOT_COLS], int32_t rows, int32_t quads,
                                           int cols, int32x4_t b0, int32x4_t b1, int32x4_t acc[KILN_SDOT_COLS][2])
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
        if (q >= 2) {
            int8x8_t x[KILN_SDOT_COLS];
            for (j = 0; j < cols; ++j) {
                x[j] = vld1_s8(src[j] + k);
            }
            KILN_SDOT_QUAD(vdotq_lane_s32, 0);
            KILN_SDOT_QUAD(vdotq_lane_s32, 1);
            q -= 2;
            k += 8;
        }
        if (q == 1) {
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
 * so that the accumulators stay in registers. */
KILN_NEON_INLINE void kiln_neon_sdot8_out(int32x4_t acc[KILN_SDOT_COLS][2], int j, int cols, const kiln_neon_rq4 *qa,
                                          const kiln_neon_rq4 *qb, const kiln_neon_stage *s, int8_t *out,
                                          int32_t out_stride, int32_t n)
{
    const int k = j + 1 < cols ? j + 1 : j;
    const int8x16_t b = kiln_neon_pack16(kiln_neon_scale4q(acc[j][0], qa, s->right),
                                         kiln_neon_scale4q(acc[j][1], qb, s->right),
                                         kiln_neon_scale4q(acc[k][0], qa, s->right),
                                         kiln_neon_scale4q(acc[k][1], qb, s->right), s->zp, s->lo, s->hi);
    kiln_neon_store8(out + j * out_stride, vget_low_s8(b), n);
    if (j + 1 < cols) {
        kiln_neon_store8(out + (j + 1) * out_stride, vget_high_s8(b), n);
    }
}

/* `cols` columns (8, 4 or 1; a constant once inlined) times every block of eight rows: the
 * tile, then the output stage s (table rq, 32 words per block) two columns at a time, the
 * first out_c bytes of column j written at out + j * out_stride. */
KILN_NEON_INLINE void kiln_neon_sdot8_gemm(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                           const int32_t step[KILN_SDOT_COLS], int cols, int32_t rows,
                                           int32_t quads, int32_t out_c, const int32_t *rq,
                                           const kiln_neon_stage *s, int8_t *out, int32_t out_stride)
{
    int32_t oc;
    for (oc = 0; oc < out_c; oc += 8, w += 32 * rows * quads, rq += 32) {
        const kiln_neon_rq4 qa = kiln_neon_rq4_load(rq), qb = kiln_neon_rq4_load(rq + 16);
        int32x4_t acc[KILN_SDOT_COLS][2];
        kiln_neon_sdot8_tile(w, col, step, rows, quads, cols, qa.bias, qb.bias, acc);
        kiln_neon_sdot8_out(acc, 0, cols, &qa, &qb, s, out + oc, out_stride, out_c - oc);
        if (cols > 2) {
            kiln_neon_sdot8_out(acc, 2, cols, &qa, &qb, s, out + oc, out_stride, out_c - oc);
        }
        if (cols > 4) {
            kiln_neon_sdot8_out(acc, 4, cols, &qa, &qb, s, out + oc, out_stride, out_c - oc);
            kiln_neon_sdot8_out(acc, 6, cols, &qa, &qb, s, out + oc, out_stride, out_c - oc);
        }
    }
}

/* kiln_neon_sdot8_gemm with the column count as a constant: one specialised loop each. */
KILN_NEON_INLINE void kiln_neon_sdot8_cols(const int8_t *w, const int8_t *const col[KILN_SDOT_COLS],
                                           const int32_t step[KILN_SDOT_COLS], int cols, int32_t rows,
                                           int32_t quads, int32_t out_c, const int32_t *rq,
                                           const kiln_neon_stage *s, int8_t *out, int32_t out_stride)
{
    if (cols == 8) {
        kiln_neon_sdot8_gemm(w, col, step, 8, rows, quads, out_c, rq, s, out, out_stride);
    } else if (cols == 4) {
        kiln_neon_sdot8_gemm(w, col, step, 4, rows, quads, out_c, rq, s, out, out_stride);
    } else {
        kiln_neon_sdot8_gemm(w, col, step, 1, rows, quads, out_c, rq, s, out, out_stride);
    }
}

#endif /* KILN_NEON_SDOT_H */
