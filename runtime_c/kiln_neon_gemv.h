/*
 * kiln_neon_gemv.h - the int8 matrix-vector product of Kiln's NEON fully connected kernels
 * (one input row: batch 1, or the rows a batch leaves after its tiles of four): several
 * blocks of output rows per pass over the input, so that each loaded input vector meets
 * eight rows (SMULL2/SMLAL/SADALP, two blocks of repack.mve_gemm_rows) or sixteen (SDOT, two blocks
 * of repack.sdot_gemm_blocks), the weights of a block read 64 bytes per load (LD1 of four
 * registers), then the output stage of kiln_neon_s8.h on 8 or 16 channels at once.
 *
 * The weights keep the layouts of the register-tiled GEMM (kiln_neon_gemm_cols), whose
 * blocks lie one after the other: block b + 1 starts 64 (SDOT: 128) bytes per group of 16 k
 * after block b. Sums are the same integers as TFLite Micro's, so the result is bit-exact.
 */
#ifndef KILN_NEON_GEMV_H
#define KILN_NEON_GEMV_H

#include "kiln_neon_s8.h"

/* The 64 bytes at *p (one LD1 of four registers), *p moved past them. The empty asm makes
 * the moved pointer a value of its own, so that gcc post-increments it in the load instead
 * of keeping a second pointer and adding to it (two more instructions a block). */
KILN_NEON_INLINE int8x16x4_t kiln_neon_gemv_load64(const int8_t **p)
{
    const int8x16x4_t v = vld1q_s8_x4(*p);
    *p += 64;
    __asm__("" : "+r"(*p));
    return v;
}

/* 16 products of x and w added into the four int32 partial sums of acc (`first`: summed into
 * fresh ones, acc not read), as kiln_neon_mac16 / kiln_neon_mul16 but with the pair of
 * products (MLA_PAIRS) started from the high halves, an order in which gcc keeps the weights
 * in the registers they were loaded into (no copies in the loop). */
KILN_NEON_INLINE int32x4_t kiln_neon_gemv_mac16(int32x4_t acc, int8x16_t x, int8x16_t w, int mode, int first)
{
    if (mode == KILN_NEON_MLA_PAIRS) {
        const int16x8_t pair = vmlal_s8(vmull_high_s8(x, w), vget_low_s8(x), vget_low_s8(w));
        return first ? vpaddlq_s16(pair) : vpadalq_s16(acc, pair);
    }
    return first ? kiln_neon_mul16(x, w, mode) : kiln_neon_mac16(acc, x, w, mode);
}

/* One group of 16 k of kiln_neon_gemv_rows: the input vector at x against the next 64 bytes
 * of each block. */
KILN_NEON_INLINE void kiln_neon_gemv_group(const int8_t *block[2], const int8_t *x, int blocks, int mode, int first,
                                           int32x4_t acc[2][4])
{
    const int8x16_t xv = vld1q_s8(x);
    int h, r;
    for (h = 0; h < blocks; ++h) {
        const int8x16x4_t wr = kiln_neon_gemv_load64(&block[h]);
        for (r = 0; r < 4; ++r) {
            acc[h][r] = kiln_neon_gemv_mac16(acc[h][r], xv, wr.val[r], mode, first);
        }
    }
}

/* The sums of `blocks` (1 or 2) consecutive blocks of four rows (kiln_neon_tile's layout)
 * with the input x (zero-padded to 16 * groups bytes, groups >= 1): sums[h] holds rows
 * 4h..4h+3. Every row keeps four partial sums, started by the first group (no zeroing) and
 * reduced once at the end. */
KILN_NEON_INLINE void kiln_neon_gemv_rows(const int8_t *w, const int8_t *x, int32_t groups, int blocks, int mode,
                                          int32x4_t sums[2])
{
    const int8_t *const end = x + 16 * groups;
    const int8_t *block[2];
    int32x4_t acc[2][4];
    int h;
    block[0] = w;
    block[1] = w + 64 * groups;
    kiln_neon_gemv_group(block, x, blocks, mode, 1, acc);
    for (x += 16; x != end; x += 16) {
        kiln_neon_gemv_group(block, x, blocks, mode, 0, acc);
    }
    for (h = 0; h < blocks; ++h) {
        sums[h] = kiln_neon_sum4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
    }
}

/* Eight channels' scaled sums a (channels 0-3) and b (4-7) through the output stage, the
 * first n bytes (all eight when n >= 8) written to out. */
KILN_NEON_INLINE void kiln_neon_gemv_store8(int32x4_t a, int32x4_t b, const kiln_neon_stage *s, int8_t *out,
                                            int32_t n)
{
    kiln_neon_store8(out, kiln_neon_pack8(a, b, s->zp, s->lo, s->hi), n);
}

/* The SMULL modes: out_c outputs, eight rows a pass, then a last block of four. */
KILN_NEON_INLINE void kiln_neon_gemv_mla(const int8_t *w, const int8_t *x, int32_t groups, int32_t out_c, int mode,
                                         const int32_t *rq, const kiln_neon_stage *s, int8_t *out)
{
    int32_t oc = 0;
    int32x4_t sums[2];
    for (; out_c - oc > 4; oc += 8, w += 128 * groups, rq += 32) {
        kiln_neon_gemv_rows(w, x, groups, 2, mode, sums);
        kiln_neon_gemv_store8(kiln_neon_scale4(sums[0], rq, s->right), kiln_neon_scale4(sums[1], rq + 16, s->right),
                              s, out + oc, out_c - oc);
    }
    if (oc < out_c) {
        kiln_neon_gemv_rows(w, x, groups, 1, mode, sums);
        sums[0] = kiln_neon_scale4(sums[0], rq, s->right);
        kiln_neon_gemv_store8(sums[0], sums[0], s, out + oc, out_c - oc);
    }
}

#if defined(__ARM_FEATURE_DOTPROD)
/* The four quads of the input vector xv (its lanes) against one block's weights for them,
 * lo holding quads 0-1 and hi quads 2-3 (each quad: rows 0-3, then rows 4-7). Quads 0-1 and
 * 2-3 go to separate accumulators (acc[0..1] and acc[2..3]: two SDOT chains per row). */
#define KILN_NEON_GEMV_SDOT_BLOCK(acc, lo, hi)                                     \
    do {                                                                           \
        acc[0] = vdotq_laneq_s32(acc[0], lo.val[0], xv, 0);                        \
        acc[1] = vdotq_laneq_s32(acc[1], lo.val[1], xv, 0);                        \
        acc[2] = vdotq_laneq_s32(acc[2], hi.val[0], xv, 2);                        \
        acc[3] = vdotq_laneq_s32(acc[3], hi.val[1], xv, 2);                        \
        acc[0] = vdotq_laneq_s32(acc[0], lo.val[2], xv, 1);                        \
        acc[1] = vdotq_laneq_s32(acc[1], lo.val[3], xv, 1);                        \
        acc[2] = vdotq_laneq_s32(acc[2], hi.val[2], xv, 3);                        \
        acc[3] = vdotq_laneq_s32(acc[3], hi.val[3], xv, 3);                        \
    } while (0)

/* The sums of `blocks` (1 or 2) consecutive blocks of eight rows (repack.sdot_gemm_blocks)
 * with the input x (groups >= 1), started from the biases of q (one table per four rows):
 * sums[4h + i] holds rows 8h + 4i..8h + 4i + 3, one per lane. */
KILN_NEON_INLINE void kiln_neon_gemv_sdot_rows(const int8_t *w, const int8_t *x, int32_t groups, int blocks,
                                               const kiln_neon_rq4 q[4], int32x4_t sums[4])
{
    const int8_t *const end = x + 16 * groups;
    const int8_t *block[2];
    int32x4_t acc[2][4];
    int h;
    for (h = 0; h < 2; ++h) {
        block[h] = w + 128 * groups * h;
        acc[h][0] = q[2 * h].bias;
        acc[h][1] = q[2 * h + 1].bias;
        acc[h][2] = vdupq_n_s32(0);
        acc[h][3] = acc[h][2];
    }
    do {
        const int8x16_t xv = vld1q_s8(x);
        for (h = 0; h < blocks; ++h) {
            const int8x16x4_t lo = kiln_neon_gemv_load64(&block[h]);
            const int8x16x4_t hi = kiln_neon_gemv_load64(&block[h]);
            KILN_NEON_GEMV_SDOT_BLOCK(acc[h], lo, hi);
        }
        x += 16;
    } while (x != end);
    for (h = 0; h < 2; ++h) {
        sums[2 * h] = vaddq_s32(acc[h][0], acc[h][2]);
        sums[2 * h + 1] = vaddq_s32(acc[h][1], acc[h][3]);
    }
}
#undef KILN_NEON_GEMV_SDOT_BLOCK

/* SDOT: out_c outputs, sixteen rows a pass, then a last block of eight. */
KILN_NEON_INLINE void kiln_neon_gemv_sdot(const int8_t *w, const int8_t *x, int32_t groups, int32_t out_c,
                                          const int32_t *rq, const kiln_neon_stage *s, int8_t *out)
{
    int32_t oc = 0;
    int32x4_t sums[4];
    kiln_neon_rq4 q[4];
    int i;
    for (; out_c - oc > 8; oc += 16, w += 256 * groups, rq += 64) {
        int8x16_t b;
        for (i = 0; i < 4; ++i) {
            q[i] = kiln_neon_rq4_load(rq + 16 * i);
        }
        kiln_neon_gemv_sdot_rows(w, x, groups, 2, q, sums);
        for (i = 0; i < 4; ++i) {
            sums[i] = kiln_neon_scale4q(sums[i], &q[i], s->right);
        }
        b = kiln_neon_pack16(sums[0], sums[1], sums[2], sums[3], s->zp, s->lo, s->hi);
        if (out_c - oc >= 16) {
            vst1q_s8(out + oc, b);
        } else {
            vst1_s8(out + oc, vget_low_s8(b));
            kiln_neon_store8(out + oc + 8, vget_high_s8(b), out_c - oc - 8);
        }
    }
    if (oc < out_c) {
        q[0] = q[2] = kiln_neon_rq4_load(rq);
        q[1] = q[3] = kiln_neon_rq4_load(rq + 16);
        kiln_neon_gemv_sdot_rows(w, x, groups, 1, q, sums);
        kiln_neon_gemv_store8(kiln_neon_scale4q(sums[0], &q[0], s->right), kiln_neon_scale4q(sums[1], &q[1], s->right),
                              s, out + oc, out_c - oc);
    }
}
#endif

/* One input row x (16 * groups bytes, zero-padded) times all out_c rows of the packed
 * weights w (laid out for `mode`), through the output stage s with its table rq, to out. */
KILN_NEON_INLINE void kiln_neon_gemv(const int8_t *w, const int8_t *x, int32_t groups, int32_t out_c, int mode,
                                     const int32_t *rq, const kiln_neon_stage *s, int8_t *out)
{
#if defined(__ARM_FEATURE_DOTPROD)
    if (mode == KILN_NEON_SDOT) {
        kiln_neon_gemv_sdot(w, x, groups, out_c, rq, s, out);
        return;
    }
#endif
    if (mode == KILN_NEON_MLA_PAIRS) {
        kiln_neon_gemv_mla(w, x, groups, out_c, KILN_NEON_MLA_PAIRS, rq, s, out);
    } else {
        kiln_neon_gemv_mla(w, x, groups, out_c, KILN_NEON_MLA, rq, s, out);
    }
}

#endif /* KILN_NEON_GEMV_H */
