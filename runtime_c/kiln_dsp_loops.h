/*
 * kiln_dsp_loops.h - whole inner loops of Kiln's fastest int8 DSP kernels (Cortex-M4, M7, M33,
 * M55) in inline assembly, each with the requantization, clamp and stores inside, so that the
 * loop state never spills around an assembly block: the convolution's pixel pair over int16
 * weights (kiln_dsp_gemm_pair_r2_wide, with the interleaved columns it reads) and the 3x3 and
 * k_h x 1 depthwise loops. Built from kiln_dsp.h's helpers and requantization (their C forms
 * are what the -O0 fallbacks run); bit-exact with them, tested in
 * tests/cortex_m/test_dsp_kernels.py.
 */
#ifndef KILN_DSP_LOOPS_H
#define KILN_DSP_LOOPS_H

#include <stdint.h>
#include <arm_acle.h>
#include "kiln_dsp.h"

/* ---- depthwise, requantized in the loop ---- */

/* Every channel of one output pixel of a 3x3 depthwise layer whose channels all shift right
 * by 2 or more, four channels per turn: the nine taps as kiln_dsp_dw_3x3 (from x, taps xstride
 * bytes apart, rows ystride), then kiln_dsp_requant_r2 of the four accumulators (k = 1 + 2 zp),
 * the clamp to the lanes of lo4 / hi4 and one word stored at out. w holds the groups' taps
 * (repack.dsp_depthwise_taps), q their records (KILN_DSP_RQ words per channel, the bias
 * first). One loop in assembly: GCC spills the loop's pointers around kiln_dsp_dw_3x3 and
 * reloads the constants of every group; here the 14 registers hold the taps' operands and the
 * group's pointers, and the counter, output pointer and layer constants live on the stack. */
KILN_DSP_INLINE void kiln_dsp_dw_3x3_r2_pixel(const int8_t *x, int32_t ystride, int32_t xstride, const int32_t *w,
                                              const int32_t *q, int8_t *out, int32_t groups, int32_t k,
                                              uint32_t lo4, uint32_t hi4)
{
#if !defined(__OPTIMIZE__)
    int32_t g;  /* -O0 (r7 the frame pointer): the same arithmetic from the C helpers */
    for (g = 0; g < groups; ++g, x += 4, w += 18, q += 4 * KILN_DSP_RQ, out += 4) {
        int32_t acc[4];
        acc[0] = q[0];
        acc[1] = q[KILN_DSP_RQ];
        acc[2] = q[2 * KILN_DSP_RQ];
        acc[3] = q[3 * KILN_DSP_RQ];
        kiln_dsp_dw_taps(x, ystride, xstride, 3, 3, w, acc);
        kiln_dsp_st32(out, (int32_t)kiln_dsp_out4(acc, q + 1, q + KILN_DSP_RQ + 1, q + 2 * KILN_DSP_RQ + 1,
                                                  q + 3 * KILN_DSP_RQ + 1, 1, 0, k, lo4, hi4));
    }
#else
    int32_t a0, a1, a2, a3, y, v, e, w0, w1;
    int8_t *o = out;
    int32_t n = groups;
#define KILN_DSP_DWP_TAP(addr)                                                                  \
    "ldr    %[v], " addr "\n\t"                                                               \
    "ldrd   %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "sxtb16 %[e], %[v]\n\t"                                                                   \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                           \
    "smlabb %[a0], %[e], %[w0], %[a0]\n\t"                                                    \
    "smlatt %[a2], %[e], %[w0], %[a2]\n\t"                                                    \
    "smlabb %[a1], %[v], %[w1], %[a1]\n\t"                                                    \
    "smlatt %[a3], %[v], %[w1], %[a3]\n\t"
#define KILN_DSP_DWP_ROW(r)                                                                     \
    KILN_DSP_DWP_TAP("[%[" r "]]") KILN_DSP_DWP_TAP("[%[" r "], %[xs]]")                        \
    KILN_DSP_DWP_TAP("[%[" r "], %[xs], lsl #1]")
    /* kiln_dsp_requant_r2 of accumulator a with the record fields at q + off (M, A, shift) */
#define KILN_DSP_DWP_RQ(a, off)                                                                 \
    "ldrd   %[w0], %[w1], [%[q], #" off "]\n\t"                                               \
    "ldr    %[e], [%[q], #" off " + 8]\n\t"                                                   \
    "and    %[w1], %[w1], %[" a "], asr #31\n\t"                                              \
    "umull  %[v], %[" a "], %[" a "], %[w0]\n\t"                                              \
    "add    %[" a "], %[" a "], %[v], lsr #31\n\t"                                            \
    "add    %[" a "], %[" a "], %[w1]\n\t"                                                    \
    "asr    %[" a "], %[" a "], %[e]\n\t"                                                     \
    "add    %[" a "], %[" a "], %[y]\n\t"                                                     \
    "ssat   %[" a "], #8, %[" a "], asr #1\n\t"
    /* the four results packed, clamped, stored; the next group */
#define KILN_DSP_DWP_STORE                                                                      \
    "bfi    %[a0], %[a1], #8, #8\n\t"                                                           \
    "bfi    %[a2], %[a3], #8, #8\n\t"                                                           \
    "bfi    %[a0], %[a2], #16, #16\n\t"                                                         \
    "ldr    %[v], %[lo4]\n\t"                                                                   \
    "ssub8  %[e], %[a0], %[v]\n\t"                                                              \
    "sel    %[a0], %[a0], %[v]\n\t"                                                             \
    "ldr    %[v], %[hi4]\n\t"                                                                   \
    "ssub8  %[e], %[v], %[a0]\n\t"                                                              \
    "sel    %[a0], %[a0], %[v]\n\t"                                                             \
    "ldr    %[v], %[o]\n\t"                                                                     \
    "str    %[a0], [%[v]], #4\n\t"                                                              \
    "str    %[v], %[o]\n\t"                                                                     \
    "adds   %[x], %[x], #4\n\t"                                                                 \
    "adds   %[q], %[q], #64\n\t"                                                                \
    "ldr    %[v], %[n]\n\t"                                                                     \
    "subs   %[v], %[v], #1\n\t"                                                                 \
    "str    %[v], %[n]\n\t"                                                                     \
    "bne    1b\n\t"
    __asm__ volatile("1:\n\t"
                     "ldr    %[a0], [%[q]]\n\t"
                     "ldr    %[a1], [%[q], #16]\n\t"
                     "ldr    %[a2], [%[q], #32]\n\t"
                     "ldr    %[a3], [%[q], #48]\n\t"
                     KILN_DSP_DWP_ROW("x")
                     "add    %[y], %[x], %[ys]\n\t" KILN_DSP_DWP_ROW("y")
                     "add    %[y], %[y], %[ys]\n\t" KILN_DSP_DWP_ROW("y")
                     "ldr    %[y], %[k]\n\t"
                     KILN_DSP_DWP_RQ("a0", "4") KILN_DSP_DWP_RQ("a1", "20")
                     KILN_DSP_DWP_RQ("a2", "36") KILN_DSP_DWP_RQ("a3", "52")
                     KILN_DSP_DWP_STORE
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [x] "+r"(x), [w] "+r"(w),
                       [q] "+r"(q), [y] "=&r"(y), [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1),
                       [o] "+m"(o), [n] "+m"(n)
                     : [xs] "r"(xstride), [ys] "r"(ystride), [k] "m"(k), [lo4] "m"(lo4), [hi4] "m"(hi4)
                     : "cc", "memory");
#undef KILN_DSP_DWP_TAP
#undef KILN_DSP_DWP_ROW
#endif
}

/* The clamp of four packed int8 results (operand r) to the lanes of lo4 / hi4 (memory
 * operands), with two scratch registers t, f: SSUB8 sets the lane flags SEL reads. A layer
 * whose clamp is the whole int8 range leaves it out of its loop. */
#define KILN_DSP_CLAMP(r, t, f)                                                                 \
    "ldr    %[" t "], %[lo4]\n\t"                                                             \
    "ssub8  %[" f "], %[" r "], %[" t "]\n\t"                                                 \
    "sel    %[" r "], %[" r "], %[" t "]\n\t"                                                 \
    "ldr    %[" t "], %[hi4]\n\t"                                                             \
    "ssub8  %[" f "], %[" t "], %[" r "]\n\t"                                                 \
    "sel    %[" r "], %[" r "], %[" t "]\n\t"

/* ---- the convolution's pixel pair, requantized in the loop ---- */

/* The columns of a pixel pair interleaved for kiln_dsp_gemm_pair_r2_wide: per group of four,
 * pixel 0's four int16 then pixel 1's (16 bytes, one LDM). From two plain int16 columns: */
KILN_DSP_INLINE void kiln_dsp_interleave_pair(const int16_t *col0, const int16_t *col1, int16_t *dst,
                                              int32_t groups)
{
    int32_t g;
    for (g = 0; g < groups; ++g, col0 += 4, col1 += 4, dst += 8) {
        const int32_t a = kiln_dsp_ld32(col0), b = kiln_dsp_ld32(col0 + 2);
        const int32_t c = kiln_dsp_ld32(col1), d = kiln_dsp_ld32(col1 + 2);
        kiln_dsp_st32(dst, a);
        kiln_dsp_st32(dst + 2, b);
        kiln_dsp_st32(dst + 4, c);
        kiln_dsp_st32(dst + 6, d);
    }
}

/* The same layout written one pixel at a time (col: the pixel's first lane, cols or
 * cols + 4): logical element e of its window goes to col[(e & ~3) * 2 + (e & 3)]. n int8
 * values from src into elements [e, e + n), or n copies of v: */
#define KILN_DSP_IL(e) ((((e) & ~3) << 1) + ((e) & 3))
KILN_DSP_INLINE void kiln_dsp_s8_to_s16_il(const int8_t *src, int16_t *col, int32_t e, int32_t n)
{
    int32_t i = 0;
    for (; i < n && ((e + i) & 3) != 0; ++i) {
        col[KILN_DSP_IL(e + i)] = src[i];
    }
    if (i + 4 <= n) {
        int16_t *d = col + KILN_DSP_IL(e + i);  /* whole groups: 8 lanes apart */
        const int32_t end = n - 4;
        for (; i <= end; i += 4, d += 8) {
            const int32_t x = kiln_dsp_ld32(src + i);
            const int32_t even = __sxtb16(x), odd = kiln_dsp_sxtb16_ror8(x);
            kiln_dsp_st32(d, kiln_dsp_pack_lo(even, odd));
            kiln_dsp_st32(d + 2, kiln_dsp_pack_hi(even, odd));
        }
    }
    /* At most three left; said so (n - i, masked) because GCC, inlining a call with known
     * parameters, otherwise derives a trip count from the groups loop it cannot bound and stops
     * the build with -Waggressive-loop-optimizations. */
    {
        const int32_t left = (n - i) & 3;
        int32_t k;
        for (k = 0; k < left; ++k, ++i) {
            col[KILN_DSP_IL(e + i)] = src[i];
        }
    }
}

KILN_DSP_INLINE void kiln_dsp_fill_s16_il(int16_t *col, int32_t v, int32_t e, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; ++i) {
        col[KILN_DSP_IL(e + i)] = (int16_t)v;
    }
}
#undef KILN_DSP_IL

/* ... or from two int8 pixels of n values (a pointwise layer's inputs), zero up to k4. */
KILN_DSP_INLINE void kiln_dsp_widen_pair(const int8_t *px0, const int8_t *px1, int16_t *dst, int32_t n, int32_t k4)
{
    const int32_t n4 = n - n % 4;
    int32_t i;
    for (i = 0; i < n4; i += 4, dst += 8) {
        const int32_t x = kiln_dsp_ld32(px0 + i), y = kiln_dsp_ld32(px1 + i);
        const int32_t xe = __sxtb16(x), xo = kiln_dsp_sxtb16_ror8(x);
        const int32_t ye = __sxtb16(y), yo = kiln_dsp_sxtb16_ror8(y);
        kiln_dsp_st32(dst, kiln_dsp_pack_lo(xe, xo));
        kiln_dsp_st32(dst + 2, kiln_dsp_pack_hi(xe, xo));
        kiln_dsp_st32(dst + 4, kiln_dsp_pack_lo(ye, yo));
        kiln_dsp_st32(dst + 6, kiln_dsp_pack_hi(ye, yo));
    }
    if (i < k4) {
        int32_t j;
        for (j = 0; j < 4; ++j) {
            dst[j] = (int16_t)(i + j < n ? px0[i + j] : 0);
            dst[4 + j] = (int16_t)(i + j < n ? px1[i + j] : 0);
        }
    }
}

/* Every output channel of a pair of output pixels, for a layer whose channels all shift right
 * by 2 or more, whose output channels are even and whose weights are int16 lanes
 * (repack.dsp_gemm_pairs_wide): for each pair of channels, the 2x2 tile of
 * kiln_dsp_dot_2x2_wide over the interleaved columns cols (kiln_dsp_s8_to_s16_il) from the
 * records' biases, kiln_dsp_requant_r2 of its four accumulators (k = 1 + 2 zp), the clamp to
 * the lanes of lo4 / hi4, and two bytes stored at out0 (pixel 0) and two at out0 + out1_off
 * (pixel 1; 0 for a lone last pixel, whose column then repeats pixel 0's). The columns are
 * complete before the call: outputs are written as the channels go, so no accumulator
 * scratch. One assembly loop, per group one LDM of both columns, two LDRD of the weights and
 * eight SMLAD (11 instructions for 16 multiply-accumulates); the registers are named because
 * LDM fills them in ascending order; the channel loop's state lives on the stack. */
KILN_DSP_INLINE void kiln_dsp_gemm_pair_r2_wide(const int32_t *w, const int16_t *cols, int32_t groups,
                                                const int32_t *rq, int32_t out_c, int8_t *out0, int32_t out1_off,
                                                int32_t k, uint32_t lo4, uint32_t hi4)
{
#if !defined(__OPTIMIZE__)
    int32_t c;  /* -O0 (r7 the frame pointer): the same arithmetic in C */
    for (c = 0; c < out_c; c += 2, rq += 2 * KILN_DSP_RQ, out0 += 2) {
        const int16_t *x = cols;
        int32_t a[4], g;
        uint32_t v;
        a[0] = a[2] = rq[0];
        a[1] = a[3] = rq[KILN_DSP_RQ];
        for (g = 0; g < groups; ++g, x += 8, w += 4) {
            a[0] = __smlad(w[1], kiln_dsp_ld32(x + 2), __smlad(w[0], kiln_dsp_ld32(x), a[0]));
            a[2] = __smlad(w[1], kiln_dsp_ld32(x + 6), __smlad(w[0], kiln_dsp_ld32(x + 4), a[2]));
            a[1] = __smlad(w[3], kiln_dsp_ld32(x + 2), __smlad(w[2], kiln_dsp_ld32(x), a[1]));
            a[3] = __smlad(w[3], kiln_dsp_ld32(x + 6), __smlad(w[2], kiln_dsp_ld32(x + 4), a[3]));
        }
        v = kiln_dsp_out4(a, rq + 1, rq + 1 + KILN_DSP_RQ, rq + 1, rq + 1 + KILN_DSP_RQ, 1, 0, k, lo4, hi4);
        kiln_dsp_st16(out0 + out1_off, (int32_t)(v >> 16));
        kiln_dsp_st16(out0, (int32_t)v);
    }
#else
    register int32_t x0a __asm__("r0");
    register int32_t x0b __asm__("r1");
    register int32_t x1a __asm__("r2");
    register int32_t x1b __asm__("r3");
    register int32_t a00 __asm__("r4");
    register int32_t a01 __asm__("r5");
    register int32_t a10 __asm__("r6");
    register int32_t a11 __asm__("r8");
    register int32_t wa __asm__("r9");
    register int32_t wb __asm__("r10");
    register const int16_t *c __asm__("r11");
    register const int32_t *wp __asm__("r12") = w;
    register int32_t n __asm__("lr");
    const int32_t g4 = groups >> 2, g1 = groups & 3;
    const int32_t *q = rq;
    int8_t *o = out0;
    int32_t pairs = out_c >> 1;
    /* one group: both pixels' four int16, then row 0's and row 1's weight pairs */
#define KILN_DSP_GPI_GROUP                                                                      \
    "ldm    %[c]!, {%[x0a], %[x0b], %[x1a], %[x1b]}\n\t"                                      \
    "ldrd   %[wa], %[wb], [%[w]], #8\n\t"                                                     \
    "smlad  %[a00], %[wa], %[x0a], %[a00]\n\t"                                                \
    "smlad  %[a00], %[wb], %[x0b], %[a00]\n\t"                                                \
    "smlad  %[a01], %[wa], %[x1a], %[a01]\n\t"                                                \
    "smlad  %[a01], %[wb], %[x1b], %[a01]\n\t"                                                \
    "ldrd   %[wa], %[wb], [%[w]], #8\n\t"                                                     \
    "smlad  %[a10], %[wa], %[x0a], %[a10]\n\t"                                                \
    "smlad  %[a10], %[wb], %[x0b], %[a10]\n\t"                                                \
    "smlad  %[a11], %[wa], %[x1a], %[a11]\n\t"                                                \
    "smlad  %[a11], %[wb], %[x1b], %[a11]\n\t"
    /* kiln_dsp_requant_r2 of accumulator a: M, A and the shift in x0a, x0b, x1a, k in x1b */
#define KILN_DSP_GPI_RQ(a)                                                                      \
    "and    %[wb], %[x0b], %[" a "], asr #31\n\t"                                             \
    "umull  %[wa], %[" a "], %[" a "], %[x0a]\n\t"                                            \
    "add    %[" a "], %[" a "], %[wa], lsr #31\n\t"                                           \
    "add    %[" a "], %[" a "], %[wb]\n\t"                                                    \
    "asr    %[" a "], %[" a "], %[x1a]\n\t"                                                   \
    "add    %[" a "], %[" a "], %[x1b]\n\t"                                                   \
    "ssat   %[" a "], #8, %[" a "], asr #1\n\t"
    /* the loop, with or without the clamp of the packed results (a00) */
#define KILN_DSP_GPI_ASM(clamp) \
    __asm__ volatile("0:\n\t"                                                                       \
                     "ldr    %[n], %[q]\n\t"                                                    \
                     "ldr    %[a00], [%[n]]\n\t"                                                \
                     "ldr    %[a10], [%[n], #16]\n\t"                                           \
                     "mov    %[a01], %[a00]\n\t"                                                \
                     "mov    %[a11], %[a10]\n\t"                                                \
                     "ldr    %[c], %[cols]\n\t"                                                 \
                     "ldr    %[n], %[g4]\n\t"                                                   \
                     "cmp    %[n], #0\n\t"                                                      \
                     "beq    2f\n\t"                                                            \
                     "1:\n\t" KILN_DSP_GPI_GROUP KILN_DSP_GPI_GROUP KILN_DSP_GPI_GROUP KILN_DSP_GPI_GROUP \
                     "subs   %[n], %[n], #1\n\t"                                                \
                     "bne    1b\n\t"                                                            \
                     "2:\n\t"                                                                   \
                     "ldr    %[n], %[g1]\n\t"                                                   \
                     "cmp    %[n], #0\n\t"                                                      \
                     "beq    4f\n\t"                                                            \
                     "3:\n\t" KILN_DSP_GPI_GROUP                                                \
                     "subs   %[n], %[n], #1\n\t"                                                \
                     "bne    3b\n\t"                                                            \
                     "4:\n\t"                                                                   \
                     "ldr    %[n], %[q]\n\t"                                                    \
                     "ldr    %[x1b], %[k]\n\t"                                                  \
                     "ldrd   %[x0a], %[x0b], [%[n], #4]\n\t"                                    \
                     "ldr    %[x1a], [%[n], #12]\n\t"                                           \
                     KILN_DSP_GPI_RQ("a00") KILN_DSP_GPI_RQ("a01")                              \
                     "ldrd   %[x0a], %[x0b], [%[n], #20]\n\t"                                   \
                     "ldr    %[x1a], [%[n], #28]\n\t"                                           \
                     KILN_DSP_GPI_RQ("a10") KILN_DSP_GPI_RQ("a11")                              \
                     "adds   %[n], %[n], #32\n\t"                                               \
                     "str    %[n], %[q]\n\t"                                                    \
                     "bfi    %[a00], %[a10], #8, #8\n\t"                                        \
                     "bfi    %[a01], %[a11], #8, #8\n\t"                                        \
                     "bfi    %[a00], %[a01], #16, #16\n\t"                                      \
                     clamp                                                                      \
                     "ldr    %[wa], %[o]\n\t"                                                   \
                     "ldr    %[wb], %[o1]\n\t"                                                  \
                     "lsrs   %[x0a], %[a00], #16\n\t"                                           \
                     "strh   %[x0a], [%[wa], %[wb]]\n\t"                                        \
                     "strh   %[a00], [%[wa]], #2\n\t"                                           \
                     "str    %[wa], %[o]\n\t"                                                   \
                     "ldr    %[wa], %[pairs]\n\t"                                               \
                     "subs   %[wa], %[wa], #1\n\t"                                              \
                     "str    %[wa], %[pairs]\n\t"                                               \
                     "bne    0b\n\t"                                                            \
                     : [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), [c] "=&r"(c), \
                       [w] "+r"(wp), [n] "=&r"(n), [x0a] "=&r"(x0a), [x0b] "=&r"(x0b), [x1a] "=&r"(x1a), \
                       [x1b] "=&r"(x1b), [wa] "=&r"(wa), [wb] "=&r"(wb), [q] "+m"(q), [o] "+m"(o), \
                       [pairs] "+m"(pairs)                                                      \
                     : [cols] "m"(cols), [g4] "m"(g4), [g1] "m"(g1), [k] "m"(k), [lo4] "m"(lo4), [hi4] "m"(hi4), \
                       [o1] "m"(out1_off)                                                       \
                     : "cc", "memory");
    if (lo4 != 0x80808080u || hi4 != 0x7F7F7F7Fu) {
        KILN_DSP_GPI_ASM(KILN_DSP_CLAMP("a00", "wa", "wb"));
    } else {
        KILN_DSP_GPI_ASM("");
    }
#undef KILN_DSP_GPI_ASM
#undef KILN_DSP_GPI_GROUP
#undef KILN_DSP_GPI_RQ
#endif
}

/* Four channels of `pixels` output pixels of a 3x3 depthwise row (dilation 1) whose channels
 * all shift right by 2 or more, from input rows widened to int16 in the order
 * [group][pixel][(c0, c2), (c1, c3)] (8 bytes a pixel, so the three taps of a row are at x,
 * x + 8, x + 16): row 0 at x, rows 1 and 2 d1 and d2 bytes further; the next output pixel
 * xs bytes on. Per tap one LDRD of the input, one of the weights (repack.dsp_depthwise_taps,
 * w the group's 18 words) and four multiply-accumulates; then kiln_dsp_requant_r2 of the four
 * accumulators with the records at q (k = 1 + 2 zp), the clamp to lo4 / hi4, one word stored
 * at out, the next out_step bytes on. One loop in assembly, its counter and constants on the
 * stack; two copies of it, with and without the clamp, unless `one_loop` (a constant where
 * inlined: --optimize size keeps the clamping copy only, 6 instructions per 4 outputs more
 * for about 400 bytes less code). */
KILN_DSP_INLINE void kiln_dsp_dw_3x3_r2_row(const int16_t *x, int32_t xs, int32_t d1, int32_t d2, const int32_t *w,
                                            const int32_t *q, int8_t *out, int32_t out_step, int32_t pixels,
                                            int32_t k, uint32_t lo4, uint32_t hi4, int one_loop)
{
#if !defined(__OPTIMIZE__)
    (void)one_loop;
    int32_t i, ky, kx;  /* -O0 (r7 the frame pointer): the same arithmetic in C */
    for (i = 0; i < pixels; ++i, x += xs / 2, out += out_step) {
        int32_t acc[4];
        const int32_t *t = w;
        acc[0] = q[0];
        acc[1] = q[KILN_DSP_RQ];
        acc[2] = q[2 * KILN_DSP_RQ];
        acc[3] = q[3 * KILN_DSP_RQ];
        for (ky = 0; ky < 3; ++ky) {
            const int16_t *r = x + (ky == 0 ? 0 : (ky == 1 ? d1 : d2) / 2);
            for (kx = 0; kx < 3; ++kx, t += 2) {
                const int32_t e = kiln_dsp_ld32(r + 4 * kx), o = kiln_dsp_ld32(r + 4 * kx + 2);
                acc[0] = __smlabb(e, t[0], acc[0]);
                acc[2] = __smlatt(e, t[0], acc[2]);
                acc[1] = __smlabb(o, t[1], acc[1]);
                acc[3] = __smlatt(o, t[1], acc[3]);
            }
        }
        kiln_dsp_st32(out, (int32_t)kiln_dsp_out4(acc, q + 1, q + KILN_DSP_RQ + 1, q + 2 * KILN_DSP_RQ + 1,
                                                  q + 3 * KILN_DSP_RQ + 1, 1, 0, k, lo4, hi4));
    }
#else
    int32_t a0, a1, a2, a3, y, v, e, w0, w1;
    int8_t *o = out;
    int32_t n = pixels;
#define KILN_DSP_DWR_TAP(r, off)                                                                \
    "ldrd   %[v], %[e], [%[" r "], #" off "]\n\t"                                             \
    "ldrd   %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "smlabb %[a0], %[v], %[w0], %[a0]\n\t"                                                    \
    "smlatt %[a2], %[v], %[w0], %[a2]\n\t"                                                    \
    "smlabb %[a1], %[e], %[w1], %[a1]\n\t"                                                    \
    "smlatt %[a3], %[e], %[w1], %[a3]\n\t"
#define KILN_DSP_DWR_ROW(r) KILN_DSP_DWR_TAP(r, "0") KILN_DSP_DWR_TAP(r, "8") KILN_DSP_DWR_TAP(r, "16")
#define KILN_DSP_DWR_RQ(a, off)                                                                 \
    "ldrd   %[w0], %[w1], [%[q], #" off "]\n\t"                                               \
    "ldr    %[e], [%[q], #" off " + 8]\n\t"                                                   \
    "and    %[w1], %[w1], %[" a "], asr #31\n\t"                                              \
    "umull  %[v], %[" a "], %[" a "], %[w0]\n\t"                                              \
    "add    %[" a "], %[" a "], %[v], lsr #31\n\t"                                            \
    "add    %[" a "], %[" a "], %[w1]\n\t"                                                    \
    "asr    %[" a "], %[" a "], %[e]\n\t"                                                     \
    "add    %[" a "], %[" a "], %[y]\n\t"                                                     \
    "ssat   %[" a "], #8, %[" a "], asr #1\n\t"
    /* the loop, with or without the clamp of the packed results (a0) */
#define KILN_DSP_DWR_ASM(clamp) \
    __asm__ volatile("1:\n\t"                                                                       \
                     "ldr    %[a0], [%[q]]\n\t"                                                 \
                     "ldr    %[a1], [%[q], #16]\n\t"                                            \
                     "ldr    %[a2], [%[q], #32]\n\t"                                            \
                     "ldr    %[a3], [%[q], #48]\n\t"                                            \
                     KILN_DSP_DWR_ROW("x")                                                      \
                     "add    %[y], %[x], %[d1]\n\t" KILN_DSP_DWR_ROW("y")                       \
                     "ldr    %[y], %[d2]\n\t"                                                   \
                     "add    %[y], %[x], %[y]\n\t" KILN_DSP_DWR_ROW("y")                        \
                     "sub    %[w], %[w], #72\n\t"                                               \
                     "ldr    %[y], %[k]\n\t"                                                    \
                     KILN_DSP_DWR_RQ("a0", "4") KILN_DSP_DWR_RQ("a1", "20")                     \
                     KILN_DSP_DWR_RQ("a2", "36") KILN_DSP_DWR_RQ("a3", "52")                    \
                     "bfi    %[a0], %[a1], #8, #8\n\t"                                          \
                     "bfi    %[a2], %[a3], #8, #8\n\t"                                          \
                     "bfi    %[a0], %[a2], #16, #16\n\t"                                        \
                     clamp                                                                      \
                     "ldr    %[v], %[o]\n\t"                                                    \
                     "ldr    %[e], %[step]\n\t"                                                 \
                     "str    %[a0], [%[v]]\n\t"                                                 \
                     "add    %[v], %[v], %[e]\n\t"                                              \
                     "str    %[v], %[o]\n\t"                                                    \
                     "add    %[x], %[x], %[xs]\n\t"                                             \
                     "ldr    %[v], %[n]\n\t"                                                    \
                     "subs   %[v], %[v], #1\n\t"                                                \
                     "str    %[v], %[n]\n\t"                                                    \
                     "bne    1b\n\t"                                                            \
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [x] "+r"(x), [w] "+r"(w), \
                       [y] "=&r"(y), [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1), [o] "+m"(o), \
                       [n] "+m"(n)                                                              \
                     : [q] "r"(q), [xs] "r"(xs), [d1] "r"(d1), [d2] "m"(d2), [k] "m"(k), [lo4] "m"(lo4), \
                       [hi4] "m"(hi4), [step] "m"(out_step)                                     \
                     : "cc", "memory");
    if (one_loop || lo4 != 0x80808080u || hi4 != 0x7F7F7F7Fu) {
        KILN_DSP_DWR_ASM(KILN_DSP_CLAMP("a0", "v", "e"));
    } else {
        KILN_DSP_DWR_ASM("");
    }
#undef KILN_DSP_DWR_ASM
#undef KILN_DSP_DWR_TAP
#undef KILN_DSP_DWR_ROW
#undef KILN_DSP_DWR_RQ
#endif
}

/* kiln_dsp_dw_3x3_r2_pixel for a k_h x 1 window (the 1-D depthwise layers of streaming
 * models): k_h taps ystride bytes apart, one loop turn per tap. */
KILN_DSP_INLINE void kiln_dsp_dw_col_r2_pixel(const int8_t *x, int32_t ystride, int32_t k_h, const int32_t *w,
                                              const int32_t *q, int8_t *out, int32_t groups, int32_t k,
                                              uint32_t lo4, uint32_t hi4)
{
#if !defined(__OPTIMIZE__)
    int32_t g;  /* -O0 (r7 the frame pointer): the same arithmetic from the C helpers */
    for (g = 0; g < groups; ++g, x += 4, w += 2 * k_h, q += 4 * KILN_DSP_RQ, out += 4) {
        int32_t acc[4];
        acc[0] = q[0];
        acc[1] = q[KILN_DSP_RQ];
        acc[2] = q[2 * KILN_DSP_RQ];
        acc[3] = q[3 * KILN_DSP_RQ];
        kiln_dsp_dw_taps(x, ystride, 0, k_h, 1, w, acc);
        kiln_dsp_st32(out, (int32_t)kiln_dsp_out4(acc, q + 1, q + KILN_DSP_RQ + 1, q + 2 * KILN_DSP_RQ + 1,
                                                  q + 3 * KILN_DSP_RQ + 1, 1, 0, k, lo4, hi4));
    }
#else
    int32_t a0, a1, a2, a3, y, v, e, w0, w1, t;
    int8_t *o = out;
    int32_t n = groups;
    __asm__ volatile("1:\n\t"
                     "ldr    %[a0], [%[q]]\n\t"
                     "ldr    %[a1], [%[q], #16]\n\t"
                     "ldr    %[a2], [%[q], #32]\n\t"
                     "ldr    %[a3], [%[q], #48]\n\t"
                     "mov    %[y], %[x]\n\t"
                     "ldr    %[t], %[kh]\n\t"
                     "2:\n\t"
                     "ldr    %[v], [%[y]]\n\t"
                     "add    %[y], %[y], %[ys]\n\t"
                     "ldrd   %[w0], %[w1], [%[w]], #8\n\t"
                     "sxtb16 %[e], %[v]\n\t"
                     "sxtb16 %[v], %[v], ror #8\n\t"
                     "smlabb %[a0], %[e], %[w0], %[a0]\n\t"
                     "smlatt %[a2], %[e], %[w0], %[a2]\n\t"
                     "smlabb %[a1], %[v], %[w1], %[a1]\n\t"
                     "smlatt %[a3], %[v], %[w1], %[a3]\n\t"
                     "subs   %[t], %[t], #1\n\t"
                     "bne    2b\n\t"
                     "ldr    %[y], %[k]\n\t"
                     KILN_DSP_DWP_RQ("a0", "4") KILN_DSP_DWP_RQ("a1", "20")
                     KILN_DSP_DWP_RQ("a2", "36") KILN_DSP_DWP_RQ("a3", "52")
                     KILN_DSP_DWP_STORE
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [x] "+r"(x), [w] "+r"(w),
                       [q] "+r"(q), [y] "=&r"(y), [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1),
                       [t] "=&r"(t), [o] "+m"(o), [n] "+m"(n)
                     : [ys] "r"(ystride), [kh] "m"(k_h), [k] "m"(k), [lo4] "m"(lo4), [hi4] "m"(hi4)
                     : "cc", "memory");
#endif
}
#undef KILN_DSP_DWP_RQ
#undef KILN_DSP_DWP_STORE

#endif /* KILN_DSP_LOOPS_H */
