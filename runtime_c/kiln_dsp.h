/*
 * kiln_dsp.h - building blocks of Kiln's int8 kernels for the Arm DSP extension (Cortex-M4,
 * M7, M33, M55): ACLE intrinsics from arm_acle.h and a few one-instruction helpers that
 * GCC 12's arm_acle.h lacks (SXTB16 with ROR #8, PKHBT, PKHTB, BFI, SSAT).
 *
 * Results are bit-exact with the portable kernels (TFLite Micro's integer arithmetic):
 * every sum is the same integer, and the requantization below is an exact rewriting of
 * kiln_mbqm (kiln_fixedpoint.h) whose constants codegen/lower/repack.py precomputes.
 * Weights arrive repacked at compile time as little-endian int32 words, so a kernel never
 * shuffles them at run time.
 *
 * Needs the DSP extension and a little-endian core; GCC or Clang (inline assembly,
 * may_alias types). `>>` of a negative int is arithmetic with these compilers.
 */
#ifndef KILN_DSP_H
#define KILN_DSP_H

#include <stdint.h>
#include <arm_acle.h>

#if !defined(__ARM_FEATURE_DSP) || !__ARM_FEATURE_DSP
#error "kiln_dsp.h: this target has no Arm DSP extension; build for the reference kernels"
#endif
#if defined(__ARM_BIG_ENDIAN)
#error "kiln_dsp.h: weights are packed for a little-endian core"
#endif

/* Small helpers are forced inline: GCC's size heuristics would otherwise call the unrolled
 * ones (and pass their accumulators through memory). */
#define KILN_DSP_INLINE static inline __attribute__((always_inline))

/* Words per output channel of the requantization records (repack.dsp_requant_records). */
#define KILN_DSP_RQ 4

/* ---- memory access ----
 * int8 activations read four at a time and int16 scratch written two at a time, at any
 * address (Armv7E-M and later load and store words unaligned), through types that may
 * alias anything, so the compiler never reorders them against byte accesses. */
typedef int32_t kiln_dsp_w32 __attribute__((may_alias, aligned(1)));
typedef int16_t kiln_dsp_w16 __attribute__((may_alias, aligned(1)));
/* Words of 4-byte aligned scratch (lets the compiler pair loads into LDRD). */
typedef int32_t kiln_dsp_a32 __attribute__((may_alias));

KILN_DSP_INLINE int32_t kiln_dsp_ld32(const void *p)
{
    return *(const kiln_dsp_w32 *)p;
}

KILN_DSP_INLINE void kiln_dsp_st32(void *p, int32_t v)
{
    *(kiln_dsp_w32 *)p = v;
}

KILN_DSP_INLINE void kiln_dsp_st16(void *p, int32_t v)
{
    *(kiln_dsp_w16 *)p = (int16_t)v;
}

/* ---- one-instruction helpers ---- */

/* Bytes 1 and 3 of x sign-extended into two int16 lanes (SXTB16 x, ROR #8); __sxtb16(x)
 * gives bytes 0 and 2. */
KILN_DSP_INLINE int32_t kiln_dsp_sxtb16_ror8(int32_t x)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

/* Low halfword of a, low halfword of b in the top (PKHBT a, b, LSL #16). */
KILN_DSP_INLINE int32_t kiln_dsp_pack_lo(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* High halfword of a in the bottom, high halfword of b on top (PKHTB b, a, ASR #16). */
KILN_DSP_INLINE int32_t kiln_dsp_pack_hi(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
    return r;
}

/* a with bits 8..15 replaced by the low byte of b (BFI a, b, #8, #8). */
KILN_DSP_INLINE int32_t kiln_dsp_insert_byte1(int32_t a, int32_t b)
{
    __asm__("bfi %0, %1, #8, #8" : "+r"(a) : "r"(b));
    return a;
}

/* a with bits 16..31 replaced by the low halfword of b (BFI a, b, #16, #16). */
KILN_DSP_INLINE int32_t kiln_dsp_insert_half1(int32_t a, int32_t b)
{
    __asm__("bfi %0, %1, #16, #16" : "+r"(a) : "r"(b));
    return a;
}

/* An int8 value in all four byte lanes. */
KILN_DSP_INLINE uint32_t kiln_dsp_splat4(int32_t v)
{
    return (uint32_t)(v & 0xFF) * 0x01010101UL;
}

/* Four values in [-128, 127] as the bytes of a word, a in byte 0. */
KILN_DSP_INLINE uint32_t kiln_dsp_pack4(int32_t a, int32_t b, int32_t c, int32_t d)
{
    return (uint32_t)kiln_dsp_insert_half1(kiln_dsp_insert_byte1(a, b), kiln_dsp_insert_byte1(c, d));
}

/* x saturated to [-128, 127] (SSAT #8; GCC 12's __ssat trips -Wsign-conversion). */
KILN_DSP_INLINE int32_t kiln_dsp_ssat8(int32_t x)
{
    int32_t r;
    __asm__("ssat %0, #8, %1" : "=r"(r) : "r"(x));
    return r;
}

/* ---- int8 -> int16 ---- */

/* n int8 values from src into int16 at dst (natural order; any addresses). */
KILN_DSP_INLINE void kiln_dsp_s8_to_s16(const int8_t *src, int16_t *dst, int32_t n)
{
    const int32_t n4 = n - n % 4;
    int32_t i;
    for (i = 0; i < n4; i += 4) {
        const int32_t x = kiln_dsp_ld32(src + i);
        const int32_t even = __sxtb16(x);              /* x0, x2 */
        const int32_t odd = kiln_dsp_sxtb16_ror8(x);   /* x1, x3 */
        kiln_dsp_st32(dst + i, kiln_dsp_pack_lo(even, odd));
        kiln_dsp_st32(dst + i + 2, kiln_dsp_pack_hi(even, odd));
    }
    for (; i < n; ++i) {
        kiln_dsp_st16(dst + i, src[i]);
    }
}

/* n copies of the int16 value v at dst (any even address). */
KILN_DSP_INLINE void kiln_dsp_fill_s16(int16_t *dst, int32_t v, int32_t n)
{
    const int32_t pair = kiln_dsp_pack_lo(v, v);
    const int32_t n2 = n - n % 2;
    int32_t i;
    for (i = 0; i < n2; i += 2) {
        kiln_dsp_st32(dst + i, pair);
    }
    if (i < n) {
        kiln_dsp_st16(dst + i, v);
    }
}

/* ---- dot products ---- */

/* The 2x2 tile of the GEMM kernels: rows r0, r1 of the packed weights (the pair at w, see
 * repack.dsp_gemm_rows) times two int16 columns (4-byte aligned), over `groups` groups of
 * four: acc[0] += r0.c0, acc[1] += r0.c1, acc[2] += r1.c0, acc[3] += r1.c1. Each weight word
 * unpacks once into the two pairs SMLAD multiplies with both columns: per group two LDRD,
 * two LDR, four SXTB16 and eight SMLAD for 16 multiply-accumulates. Written in assembly
 * because GCC 12 spills one of its 14 live registers (and loses the LDRDs) in this loop.
 * Returns w past the pair of rows. */
KILN_DSP_INLINE const int32_t *kiln_dsp_dot_2x2(const int32_t *w, const int16_t *col0,
                                                const int16_t *col1, int32_t groups, int32_t acc[4])
{
    const int16_t *c0 = col0, *c1 = col1;
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
#if !defined(__OPTIMIZE__)
    /* -O0 keeps r7 as the frame pointer: the 14 registers of the assembly below do not fit.
     * The same instructions as intrinsics, one group at a time (debug builds only). */
    int32_t g;
    (void)c0;
    (void)c1;
    for (g = 0; g < groups; ++g, col0 += 4, col1 += 4, w += 2) {
        const int32_t x0a = kiln_dsp_ld32(col0), x0b = kiln_dsp_ld32(col0 + 2);
        const int32_t x1a = kiln_dsp_ld32(col1), x1b = kiln_dsp_ld32(col1 + 2);
        const int32_t u0 = __sxtb16(w[0]), t0 = kiln_dsp_sxtb16_ror8(w[0]);
        const int32_t u1 = __sxtb16(w[1]), t1 = kiln_dsp_sxtb16_ror8(w[1]);
        a00 = __smlad(t0, x0b, __smlad(u0, x0a, a00));
        a01 = __smlad(t0, x1b, __smlad(u0, x1a, a01));
        a10 = __smlad(t1, x0b, __smlad(u1, x0a, a10));
        a11 = __smlad(t1, x1b, __smlad(u1, x1a, a11));
    }
#else
    int32_t pairs = groups >> 1;
    int32_t x0a, x0b, x1a, x1b, t, u;
#define KILN_DSP_2X2_GROUP                                                                      \
    "ldrd   %[x0a], %[x0b], [%[c0]], #8\n\t"                                                  \
    "ldrd   %[x1a], %[x1b], [%[c1]], #8\n\t"                                                  \
    "ldr    %[t], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[u], %[t]\n\t"                                                                   \
    "sxtb16 %[t], %[t], ror #8\n\t"                                                           \
    "smlad  %[a00], %[u], %[x0a], %[a00]\n\t"                                                 \
    "smlad  %[a00], %[t], %[x0b], %[a00]\n\t"                                                 \
    "smlad  %[a01], %[u], %[x1a], %[a01]\n\t"                                                 \
    "smlad  %[a01], %[t], %[x1b], %[a01]\n\t"                                                 \
    "ldr    %[t], [%[w]], #4\n\t"                                                             \
    "sxtb16 %[u], %[t]\n\t"                                                                   \
    "sxtb16 %[t], %[t], ror #8\n\t"                                                           \
    "smlad  %[a10], %[u], %[x0a], %[a10]\n\t"                                                 \
    "smlad  %[a10], %[t], %[x0b], %[a10]\n\t"                                                 \
    "smlad  %[a11], %[u], %[x1a], %[a11]\n\t"                                                 \
    "smlad  %[a11], %[t], %[x1b], %[a11]\n\t"
#define KILN_DSP_2X2_OPERANDS                                                                   \
    : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [c0] "+r"(c0),      \
      [c1] "+r"(c1), [w] "+r"(w), [n] "+r"(pairs), [x0a] "=&r"(x0a), [x0b] "=&r"(x0b),        \
      [x1a] "=&r"(x1a), [x1b] "=&r"(x1b), [t] "=&r"(t), [u] "=&r"(u)                           \
    : : "cc", "memory"
    if (pairs > 0) {
        __asm__ volatile("1:\n\t" KILN_DSP_2X2_GROUP KILN_DSP_2X2_GROUP
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b\n\t" KILN_DSP_2X2_OPERANDS);
    }
    if (groups & 1) {
        __asm__ volatile(KILN_DSP_2X2_GROUP KILN_DSP_2X2_OPERANDS);
    }
#undef KILN_DSP_2X2_GROUP
#undef KILN_DSP_2X2_OPERANDS
#endif
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
    return w;
}

/* kiln_dsp_dot_2x2 over weights already widened to int16 lanes at compile time
 * (repack.dsp_gemm_pairs_wide: per group, row 0's two words then row 1's): no SXTB16, per
 * group two LDRD of the columns, two of the weights and eight SMLAD for 16 multiply-
 * accumulates, four groups per loop turn. The same 14 registers as kiln_dsp_dot_2x2 (the
 * weight pair takes the place of its unpacked lanes). Returns w past the pair of rows. */
KILN_DSP_INLINE const int32_t *kiln_dsp_dot_2x2_wide(const int32_t *w, const int16_t *col0,
                                                     const int16_t *col1, int32_t groups, int32_t acc[4])
{
    const int16_t *c0 = col0, *c1 = col1;
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
#if !defined(__OPTIMIZE__)
    int32_t g;  /* -O0: intrinsics instead of the assembly below (see kiln_dsp_dot_2x2) */
    (void)c0;
    (void)c1;
    for (g = 0; g < groups; ++g, col0 += 4, col1 += 4, w += 4) {
        const int32_t x0a = kiln_dsp_ld32(col0), x0b = kiln_dsp_ld32(col0 + 2);
        const int32_t x1a = kiln_dsp_ld32(col1), x1b = kiln_dsp_ld32(col1 + 2);
        a00 = __smlad(w[1], x0b, __smlad(w[0], x0a, a00));
        a01 = __smlad(w[1], x1b, __smlad(w[0], x1a, a01));
        a10 = __smlad(w[3], x0b, __smlad(w[2], x0a, a10));
        a11 = __smlad(w[3], x1b, __smlad(w[2], x1a, a11));
    }
#else
    int32_t n = groups >> 2;
    int32_t x0a, x0b, x1a, x1b, wa, wb;
#define KILN_DSP_2X2W_GROUP                                                                     \
    "ldrd   %[x0a], %[x0b], [%[c0]], #8\n\t"                                                  \
    "ldrd   %[x1a], %[x1b], [%[c1]], #8\n\t"                                                  \
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
#define KILN_DSP_2X2W_OPERANDS                                                                  \
    : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [c0] "+r"(c0),      \
      [c1] "+r"(c1), [w] "+r"(w), [n] "+r"(n), [x0a] "=&r"(x0a), [x0b] "=&r"(x0b),            \
      [x1a] "=&r"(x1a), [x1b] "=&r"(x1b), [wa] "=&r"(wa), [wb] "=&r"(wb)                       \
    : : "cc", "memory"
    if (n > 0) {
        __asm__ volatile("1:\n\t" KILN_DSP_2X2W_GROUP KILN_DSP_2X2W_GROUP KILN_DSP_2X2W_GROUP
                         KILN_DSP_2X2W_GROUP
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b\n\t" KILN_DSP_2X2W_OPERANDS);
    }
    n = groups & 3;
    if (n > 0) {
        __asm__ volatile("1:\n\t" KILN_DSP_2X2W_GROUP
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b\n\t" KILN_DSP_2X2W_OPERANDS);
    }
#undef KILN_DSP_2X2W_OPERANDS
#endif
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
    return w;
}

/* Four weight words of a group (one per row) times the group's input lanes xa, xb into
 * a0..a3: two LDRD, eight SXTB16, eight SMLAD. Shared by the two 4x1 kernels below. */
#define KILN_DSP_4X1_ROWS(ra, rb)                                                               \
    "ldrd   %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "sxtb16 %[t], %[w0]\n\t"                                                                  \
    "sxtb16 %[w0], %[w0], ror #8\n\t"                                                         \
    "smlad  %[" ra "], %[t], %[xa], %[" ra "]\n\t"                                            \
    "smlad  %[" ra "], %[w0], %[xb], %[" ra "]\n\t"                                           \
    "sxtb16 %[t], %[w1]\n\t"                                                                  \
    "sxtb16 %[w1], %[w1], ror #8\n\t"                                                         \
    "smlad  %[" rb "], %[t], %[xa], %[" rb "]\n\t"                                            \
    "smlad  %[" rb "], %[w1], %[xb], %[" rb "]\n\t"
#define KILN_DSP_4X1_OPERANDS                                                                   \
    : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [c] "+r"(c), [w] "+r"(w),   \
      [n] "+r"(pairs), [xa] "=&r"(xa), [xb] "=&r"(xb), [w0] "=&r"(w0), [w1] "=&r"(w1),          \
      [t] "=&r"(t)                                                                              \
    : : "cc", "memory"

/* Four rows of packed weights (repack.dsp_gemm_rows with rows=4: per group of four weights,
 * the word of each of the four rows in turn) times one int16 column (4-byte aligned):
 * acc[r] += row r . c. Per group one LDRD of the column, two of the weights, eight SXTB16 and
 * eight SMLAD for 16 multiply-accumulates (assembly, two groups per loop turn, for the same
 * reason as kiln_dsp_dot_2x2). Returns w past the block of rows. */
KILN_DSP_INLINE const int32_t *kiln_dsp_dot_4x1(const int32_t *w, const int16_t *col, int32_t groups,
                                                int32_t acc[4])
{
    const int16_t *c = col;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#if !defined(__OPTIMIZE__)
    int32_t g;  /* -O0: intrinsics instead of the assembly below (see kiln_dsp_dot_2x2) */
    (void)c;
    for (g = 0; g < groups; ++g, col += 4, w += 4) {
        const int32_t xa = kiln_dsp_ld32(col), xb = kiln_dsp_ld32(col + 2);
        a0 = __smlad(kiln_dsp_sxtb16_ror8(w[0]), xb, __smlad(__sxtb16(w[0]), xa, a0));
        a1 = __smlad(kiln_dsp_sxtb16_ror8(w[1]), xb, __smlad(__sxtb16(w[1]), xa, a1));
        a2 = __smlad(kiln_dsp_sxtb16_ror8(w[2]), xb, __smlad(__sxtb16(w[2]), xa, a2));
        a3 = __smlad(kiln_dsp_sxtb16_ror8(w[3]), xb, __smlad(__sxtb16(w[3]), xa, a3));
    }
#else
    int32_t pairs = groups >> 1;
    int32_t xa, xb, w0, w1, t;
#define KILN_DSP_4X1_GROUP                                                                      \
    "ldrd   %[xa], %[xb], [%[c]], #8\n\t" KILN_DSP_4X1_ROWS("a0", "a1") KILN_DSP_4X1_ROWS("a2", "a3")
    if (pairs > 0) {
        __asm__ volatile("1:\n\t" KILN_DSP_4X1_GROUP KILN_DSP_4X1_GROUP
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b\n\t" KILN_DSP_4X1_OPERANDS);
    }
    if (groups & 1) {
        __asm__ volatile(KILN_DSP_4X1_GROUP KILN_DSP_4X1_OPERANDS);
    }
#undef KILN_DSP_4X1_GROUP
#endif
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return w;
}

/* The same four rows, packed in the natural byte order (repack.dsp_gemm_rows with
 * natural=True), times int8 input read in place, `groups` whole words of it (any alignment):
 * SXTB16 splits each input word into (x0, x2) and (x1, x3), which meet the weight word's
 * (w0, w2) and (w1, w3). No int16 copy of the row, so no scratch; two SXTB16 more per group
 * than kiln_dsp_dot_4x1. Returns w past the groups read. */
KILN_DSP_INLINE const int32_t *kiln_dsp_dot_4x1_s8(const int32_t *w, const int8_t *x, int32_t groups,
                                                   int32_t acc[4])
{
    const int8_t *c = x;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
#if !defined(__OPTIMIZE__)
    int32_t g;
    (void)c;
    for (g = 0; g < groups; ++g, x += 4, w += 4) {
        const int32_t xa = __sxtb16(kiln_dsp_ld32(x)), xb = kiln_dsp_sxtb16_ror8(kiln_dsp_ld32(x));
        a0 = __smlad(kiln_dsp_sxtb16_ror8(w[0]), xb, __smlad(__sxtb16(w[0]), xa, a0));
        a1 = __smlad(kiln_dsp_sxtb16_ror8(w[1]), xb, __smlad(__sxtb16(w[1]), xa, a1));
        a2 = __smlad(kiln_dsp_sxtb16_ror8(w[2]), xb, __smlad(__sxtb16(w[2]), xa, a2));
        a3 = __smlad(kiln_dsp_sxtb16_ror8(w[3]), xb, __smlad(__sxtb16(w[3]), xa, a3));
    }
#else
    int32_t pairs = groups;
    int32_t xa, xb, w0, w1, t;
    if (pairs > 0) {
        __asm__ volatile("1:\n\t"
                         "ldr    %[xb], [%[c]], #4\n\t"
                         "sxtb16 %[xa], %[xb]\n\t"
                         "sxtb16 %[xb], %[xb], ror #8\n\t" KILN_DSP_4X1_ROWS("a0", "a1") KILN_DSP_4X1_ROWS("a2", "a3")
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b\n\t" KILN_DSP_4X1_OPERANDS);
    }
#endif
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return w;
}
#undef KILN_DSP_4X1_ROWS
#undef KILN_DSP_4X1_OPERANDS

/* ---- depthwise ---- */

/* One tap of four channels: the input word unpacked by SXTB16 into lanes (c0, c2), (c1, c3),
 * multiplied lane by lane with the two weight words of repack.dsp_depthwise_taps. */
KILN_DSP_INLINE void kiln_dsp_dw_tap(const int8_t *x, const int32_t *w, int32_t acc[4])
{
    const int32_t v = kiln_dsp_ld32(x);
    const int32_t even = __sxtb16(v), odd = kiln_dsp_sxtb16_ror8(v);
    acc[0] = __smlabb(even, w[0], acc[0]);
    acc[2] = __smlatt(even, w[0], acc[2]);
    acc[1] = __smlabb(odd, w[1], acc[1]);
    acc[3] = __smlatt(odd, w[1], acc[3]);
}

/* Four channels over a k_h x k_w window whose first tap is at x; taps ystride bytes apart
 * vertically and xstride horizontally; w the group's taps (two words each). */
KILN_DSP_INLINE void kiln_dsp_dw_taps(const int8_t *x, int32_t ystride, int32_t xstride, int32_t k_h,
                                      int32_t k_w, const int32_t *w, int32_t acc[4])
{
    int32_t ky, kx;
    for (ky = 0; ky < k_h; ++ky, x += ystride) {
        const int8_t *t = x;
        for (kx = 0; kx < k_w; ++kx, t += xstride, w += 2) {
            kiln_dsp_dw_tap(t, w, acc);
        }
    }
}

/* The same for a 3x3 window, unrolled, in assembly: per tap one LDR, one LDRD, two SXTB16
 * and four multiply-accumulates (GCC 12 reloads the row pointers from the stack instead).
 * Twelve registers, so that it also compiles at -O1 and -Os. */
KILN_DSP_INLINE void kiln_dsp_dw_3x3(const int8_t *x, int32_t ystride, int32_t xstride, const int32_t *w,
                                     int32_t acc[4])
{
#if !defined(__OPTIMIZE__)
    /* -O0 keeps r7 as the frame pointer: the same taps one call at a time (debug builds only) */
    kiln_dsp_dw_taps(x, ystride, xstride, 3, 3, w, acc);
#else
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t ystep = ystride - xstride;
    int32_t v, e, w0, w1;
#define KILN_DSP_DW_TAP(addr)                                                                   \
    "ldr    %[v], " addr "\n\t"                                                               \
    "ldrd   %[w0], %[w1], [%[w]], #8\n\t"                                                     \
    "sxtb16 %[e], %[v]\n\t"                                                                   \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                           \
    "smlabb %[a0], %[e], %[w0], %[a0]\n\t"                                                    \
    "smlatt %[a2], %[e], %[w0], %[a2]\n\t"                                                    \
    "smlabb %[a1], %[v], %[w1], %[a1]\n\t"                                                    \
    "smlatt %[a3], %[v], %[w1], %[a3]\n\t"
#define KILN_DSP_DW_ROW                                                                         \
    KILN_DSP_DW_TAP("[%[x]]") KILN_DSP_DW_TAP("[%[x], %[xs]]")                                  \
    "add    %[x], %[x], %[xs]\n\t" KILN_DSP_DW_TAP("[%[x], %[xs]]")
    __asm__ volatile(KILN_DSP_DW_ROW
                     "add    %[x], %[x], %[ys]\n\t" KILN_DSP_DW_ROW
                     "add    %[x], %[x], %[ys]\n\t" KILN_DSP_DW_ROW
                     : [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2), [a3] "+&r"(a3), [x] "+&r"(x), [w] "+&r"(w),
                       [v] "=&r"(v), [e] "=&r"(e), [w0] "=&r"(w0), [w1] "=&r"(w1)
                     : [xs] "r"(xstride), [ys] "r"(ystep)
                     : "memory");
#undef KILN_DSP_DW_TAP
#undef KILN_DSP_DW_ROW
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
#endif
}

/* n bytes (a multiple of 4) of v at dst / copied from src, a word at a time. */
KILN_DSP_INLINE void kiln_dsp_fill_s8(int8_t *dst, int32_t v, int32_t n)
{
    const int32_t word = (int32_t)kiln_dsp_splat4(v);
    int32_t i;
    for (i = 0; i < n; i += 4) {
        kiln_dsp_st32(dst + i, word);
    }
}

KILN_DSP_INLINE void kiln_dsp_copy_words(int8_t *dst, const int8_t *src, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i += 4) {
        kiln_dsp_st32(dst + i, kiln_dsp_ld32(src + i));
    }
}

/* ---- multipliers smaller than one (int8 Add) ----
 * TFLM's MultiplyByQuantizedMultiplier for a shift s <= 0 rewritten for SMMULR (one multiply,
 * a few adds and shifts, no branch): SMMULR of x2 = 2x and m is gemmlowp's rounding doubling
 * high multiply of x and m for |x2| < 2^31; less one for a negative value when s < 0, shifted
 * right by -s - 1, plus one, halved, it is the rounding right shift, ties away from zero. */
typedef struct {
    int32_t m;      /* the multiplier */
    int32_t shift;  /* max(-s - 1, 0) */
    int32_t round;  /* [s < 0] */
} kiln_dsp_scale;

KILN_DSP_INLINE kiln_dsp_scale kiln_dsp_scale_make(int32_t multiplier, int32_t shift)
{
    kiln_dsp_scale k;
    k.m = multiplier;
    k.round = (shift < 0) ? 1 : 0;
    k.shift = (shift < -1) ? -shift - 1 : 0;
    return k;
}

/* MultiplyByQuantizedMultiplier(x2 / 2, k's m, k's s), |x2| < 2^31. */
KILN_DSP_INLINE int32_t kiln_dsp_scale_x2(int32_t x2, const kiln_dsp_scale *k)
{
    int32_t y;
    __asm__("smmulr %0, %1, %2" : "=r"(y) : "r"(x2), "r"(k->m));
    y += (y >> 31) & k->round;
    return ((y >> k->shift) + k->round) >> k->round;
}

/* The same for a shift s < 0 (the common case; `sh` = -s - 1): the rounding step's constants
 * known, two registers fewer in a loop. */
KILN_DSP_INLINE int32_t kiln_dsp_scale_x2_neg(int32_t x2, int32_t m, int32_t sh)
{
    int32_t y;
    __asm__("smmulr %0, %1, %2" : "=r"(y) : "r"(x2), "r"(m));
    y += (int32_t)((uint32_t)y >> 31);
    return ((y >> sh) + 1) >> 1;
}

/* ---- requantization ---- */

/* x shifted by the low byte of n, as the core does (no masking: the shift words pack
 * several amounts, see below). */
KILN_DSP_INLINE int32_t kiln_dsp_asr(int32_t x, int32_t n)
{
    int32_t r;
    __asm__("asr %0, %1, %2" : "=r"(r) : "r"(x), "r"(n));
    return r;
}

KILN_DSP_INLINE uint32_t kiln_dsp_lsl(uint32_t x, int32_t n)
{
    uint32_t r;
    __asm__("lsl %0, %1, %2" : "=r"(r) : "r"(x), "r"(n));
    return r;
}

/* TFLM's int8 output stage, clamp(MultiplyByQuantizedMultiplier(acc, m, s) + zp), without a
 * branch, from three constant words per output channel that codegen/lower/repack.py
 * precomputes (dsp_requant_records), with r = max(-s, 0), R = min(r, 1):
 *   q[0] = M = 2m (as uint32)   q[1] = A = -(M + R)
 *   q[2] = p | l << 8 | R << 16,  p = max(r - 1, 0), l = max(s, 0).
 * With x = acc << l (wrapping, as TFLM), the high word of x * M + 2^31 with x read as
 * unsigned, corrected by A when x < 0, is TFLM's rounding doubling high multiply, less one
 * for a negative x when there is a right shift; shifting that right by r - 1, adding one and
 * halving is then the rounding right shift by r, ties away from zero. Exact for every int32
 * accumulator (the one saturating step, for r = 1, saturates the int8 output either way);
 * tests/core/test_repack.py checks it against codegen.quant. */
KILN_DSP_INLINE int32_t kiln_dsp_requant(int32_t acc, const int32_t *q, int32_t output_zp)
{
    const uint32_t x = kiln_dsp_lsl((uint32_t)acc, q[2] >> 8);
    const uint64_t prod = (uint64_t)x * (uint32_t)q[0];
    const uint32_t hi = (uint32_t)(prod >> 32) + ((uint32_t)prod >> 31) +
                        ((uint32_t)((int32_t)x >> 31) & (uint32_t)q[1]);
    const int32_t rnd = q[2] >> 16;
    const int32_t v = __qadd(kiln_dsp_asr((int32_t)hi, q[2]), rnd) >> rnd;
    return kiln_dsp_ssat8((int32_t)((uint32_t)v + (uint32_t)output_zp));
}

/* kiln_dsp_requant for a layer whose channels all shift right by r >= 2 (R = 1, l = 0, and
 * the rounding step cannot saturate), in seven instructions (UMULL, ADD, AND, ADD, ASR, ADD,
 * SSAT with ASR #1): `k` = 1 + 2 * zp adds the rounding one and the output zero point before
 * the final halving. */
KILN_DSP_INLINE int32_t kiln_dsp_requant_r2(int32_t acc, const int32_t *q, int32_t k)
{
    const uint64_t prod = (uint64_t)(uint32_t)acc * (uint32_t)q[0];
    const uint32_t hi = (uint32_t)(prod >> 32) + ((uint32_t)prod >> 31) + ((uint32_t)(acc >> 31) & (uint32_t)q[1]);
    int32_t r;
    const int32_t t = (int32_t)((uint32_t)kiln_dsp_asr((int32_t)hi, q[2]) + (uint32_t)k);
    __asm__("ssat %0, #8, %1, asr #1" : "=r"(r) : "r"(t));
    return r;
}

/* Four int8 lanes of v clamped to [lo, hi] (lanes of lo4 / hi4): SSUB8 sets the lane
 * flags that SEL reads. */
KILN_DSP_INLINE uint32_t kiln_dsp_clamp4(uint32_t v, uint32_t lo4, uint32_t hi4)
{
    (void)__ssub8((int32_t)v, (int32_t)lo4);
    v = __sel(v, lo4);
    (void)__ssub8((int32_t)hi4, (int32_t)v);
    return __sel(v, hi4);
}

/* Four requantized outputs as the bytes of a word: accumulator a[i] with the constants at
 * qi (a record past its bias), by kiln_dsp_requant_r2 when `r2` (k = 1 + 2 * zp) or else
 * kiln_dsp_requant (zp), then clamped to the lanes of lo4 / hi4. */
KILN_DSP_INLINE uint32_t kiln_dsp_out4(const int32_t *a, const int32_t *q0, const int32_t *q1,
                                       const int32_t *q2, const int32_t *q3, int r2, int32_t zp, int32_t k,
                                       uint32_t lo4, uint32_t hi4)
{
    uint32_t v;
    if (r2) {
        v = kiln_dsp_pack4(kiln_dsp_requant_r2(a[0], q0, k), kiln_dsp_requant_r2(a[1], q1, k),
                           kiln_dsp_requant_r2(a[2], q2, k), kiln_dsp_requant_r2(a[3], q3, k));
    } else {
        v = kiln_dsp_pack4(kiln_dsp_requant(a[0], q0, zp), kiln_dsp_requant(a[1], q1, zp),
                           kiln_dsp_requant(a[2], q2, zp), kiln_dsp_requant(a[3], q3, zp));
    }
    return kiln_dsp_clamp4(v, lo4, hi4);
}

/* Output stage of the GEMM kernels for a pair of pixels: acc holds, per pair of output
 * channels (c, c+1), the accumulators (pixel 0: c, c+1; pixel 1: c, c+1); rq the records
 * (KILN_DSP_RQ words per channel, the bias first). Writes channels [0, n) of out0, and of
 * out1 unless it is null. */
KILN_DSP_INLINE void kiln_dsp_store_pair(const int32_t *acc, const int32_t *rq, int32_t n, int r2, int32_t zp,
                                         int8_t *out0, int8_t *out1, uint32_t lo4, uint32_t hi4)
{
    const int32_t k = 1 + 2 * zp;
    int32_t c;
    for (c = 0; c < n; c += 2, acc += 4, rq += 2 * KILN_DSP_RQ) {
        const uint32_t v = kiln_dsp_out4(acc, rq + 1, rq + 1 + KILN_DSP_RQ, rq + 1, rq + 1 + KILN_DSP_RQ, r2,
                                          zp, k, lo4, hi4);
        if (c + 1 < n) {
            kiln_dsp_st16(out0 + c, (int32_t)v);
            if (out1) {
                kiln_dsp_st16(out1 + c, (int32_t)(v >> 16));
            }
        } else {
            out0[c] = (int8_t)v;
            if (out1) {
                out1[c] = (int8_t)(v >> 16);
            }
        }
    }
}

#undef KILN_DSP_2X2W_GROUP

#endif /* KILN_DSP_H */
