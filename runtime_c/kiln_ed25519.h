/*
 * kiln_ed25519.h - Ed25519 signature verification (RFC 8032, section 5.1.7), dependency-free C99,
 * for signed weights blobs (`kiln build --weights blob --sign-key KEY`).
 *
 * Verification only: the signer is Kiln (codegen/emit/ed25519.py). Everything it reads is public
 * (key, message, signature), so nothing here needs to run in constant time. Field elements mod
 * p = 2^255 - 19 are 16 signed 64-bit limbs of 16 bits; points use extended coordinates
 * (X:Y:Z:T), x = X/Z, y = Y/Z, xy = T/Z, with the unified addition of RFC 8032, 5.1.4. The
 * constants (d, 2d, sqrt(-1), the base point, the group order L) are derived from the curve's
 * definition; SHA-512's from the cube and square roots of the first primes (FIPS 180-4).
 * Tested with the RFC 8032 vectors (tests/ota/test_crypto_h.py). Only stdint.h, stddef.h, string.h.
 * About 2 KiB of stack; a few million cycles per verification on a Cortex-M4.
 */
#ifndef KILN_ED25519_H
#define KILN_ED25519_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- SHA-512 (FIPS 180-4), which Ed25519 hashes with ---- */

typedef struct {
    uint64_t state[8];
    uint8_t block[128];
    uint64_t bytes;
    size_t used;
} kiln_sha512_ctx;

static inline uint64_t kiln_sha512_rotr(uint64_t x, unsigned n)
{
    return (x >> n) | (x << (64u - n));
}

static inline void kiln_sha512_compress(uint64_t state[8], const uint8_t block[128])
{
    static const uint64_t k[80] = {
        0x428a2f98d728ae22u, 0x7137449123ef65cdu, 0xb5c0fbcfec4d3b2fu, 0xe9b5dba58189dbbcu,
        0x3956c25bf348b538u, 0x59f111f1b605d019u, 0x923f82a4af194f9bu, 0xab1c5ed5da6d8118u,
        0xd807aa98a3030242u, 0x12835b0145706fbeu, 0x243185be4ee4b28cu, 0x550c7dc3d5ffb4e2u,
        0x72be5d74f27b896fu, 0x80deb1fe3b1696b1u, 0x9bdc06a725c71235u, 0xc19bf174cf692694u,
        0xe49b69c19ef14ad2u, 0xefbe4786384f25e3u, 0x0fc19dc68b8cd5b5u, 0x240ca1cc77ac9c65u,
        0x2de92c6f592b0275u, 0x4a7484aa6ea6e483u, 0x5cb0a9dcbd41fbd4u, 0x76f988da831153b5u,
        0x983e5152ee66dfabu, 0xa831c66d2db43210u, 0xb00327c898fb213fu, 0xbf597fc7beef0ee4u,
        0xc6e00bf33da88fc2u, 0xd5a79147930aa725u, 0x06ca6351e003826fu, 0x142929670a0e6e70u,
        0x27b70a8546d22ffcu, 0x2e1b21385c26c926u, 0x4d2c6dfc5ac42aedu, 0x53380d139d95b3dfu,
        0x650a73548baf63deu, 0x766a0abb3c77b2a8u, 0x81c2c92e47edaee6u, 0x92722c851482353bu,
        0xa2bfe8a14cf10364u, 0xa81a664bbc423001u, 0xc24b8b70d0f89791u, 0xc76c51a30654be30u,
        0xd192e819d6ef5218u, 0xd69906245565a910u, 0xf40e35855771202au, 0x106aa07032bbd1b8u,
        0x19a4c116b8d2d0c8u, 0x1e376c085141ab53u, 0x2748774cdf8eeb99u, 0x34b0bcb5e19b48a8u,
        0x391c0cb3c5c95a63u, 0x4ed8aa4ae3418acbu, 0x5b9cca4f7763e373u, 0x682e6ff3d6b2b8a3u,
        0x748f82ee5defb2fcu, 0x78a5636f43172f60u, 0x84c87814a1f0ab72u, 0x8cc702081a6439ecu,
        0x90befffa23631e28u, 0xa4506cebde82bde9u, 0xbef9a3f7b2c67915u, 0xc67178f2e372532bu,
        0xca273eceea26619cu, 0xd186b8c721c0c207u, 0xeada7dd6cde0eb1eu, 0xf57d4f7fee6ed178u,
        0x06f067aa72176fbau, 0x0a637dc5a2c898a6u, 0x113f9804bef90daeu, 0x1b710b35131c471bu,
        0x28db77f523047d84u, 0x32caab7b40c72493u, 0x3c9ebe0a15c9bebcu, 0x431d67c49c100d4cu,
        0x4cc5d4becb3e42b6u, 0x597f299cfc657e2au, 0x5fcb6fab3ad6faecu, 0x6c44198c4a475817u,
    };
    uint64_t w[80], v[8], t1, t2;
    unsigned i, j;
    for (i = 0; i < 16u; ++i) {
        w[i] = 0u;
        for (j = 0; j < 8u; ++j) {
            w[i] = (w[i] << 8) | block[8u * i + j];
        }
    }
    for (i = 16; i < 80u; ++i) {
        uint64_t s0 = kiln_sha512_rotr(w[i - 15u], 1) ^ kiln_sha512_rotr(w[i - 15u], 8) ^ (w[i - 15u] >> 7);
        uint64_t s1 = kiln_sha512_rotr(w[i - 2u], 19) ^ kiln_sha512_rotr(w[i - 2u], 61) ^ (w[i - 2u] >> 6);
        w[i] = w[i - 16u] + s0 + w[i - 7u] + s1;
    }
    memcpy(v, state, sizeof(v));
    for (i = 0; i < 80u; ++i) {
        t1 = v[7] + (kiln_sha512_rotr(v[4], 14) ^ kiln_sha512_rotr(v[4], 18) ^ kiln_sha512_rotr(v[4], 41)) +
             ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
        t2 = (kiln_sha512_rotr(v[0], 28) ^ kiln_sha512_rotr(v[0], 34) ^ kiln_sha512_rotr(v[0], 39)) +
             ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7u * sizeof(v[0]));
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (i = 0; i < 8u; ++i) {
        state[i] += v[i];
    }
}

static inline void kiln_sha512_init(kiln_sha512_ctx *ctx)
{
    static const uint64_t initial[8] = {
        0x6a09e667f3bcc908u, 0xbb67ae8584caa73bu, 0x3c6ef372fe94f82bu, 0xa54ff53a5f1d36f1u,
        0x510e527fade682d1u, 0x9b05688c2b3e6c1fu, 0x1f83d9abfb41bd6bu, 0x5be0cd19137e2179u,
    };
    memcpy(ctx->state, initial, sizeof(initial));
    ctx->bytes = 0u;
    ctx->used = 0u;
}

static inline void kiln_sha512_update(kiln_sha512_ctx *ctx, const uint8_t *data, size_t n)
{
    ctx->bytes += (uint64_t)n;
    while (n > 0u) {
        size_t take = 128u - ctx->used < n ? 128u - ctx->used : n;
        memcpy(ctx->block + ctx->used, data, take);
        ctx->used += take;
        data += take;
        n -= take;
        if (ctx->used == 128u) {
            kiln_sha512_compress(ctx->state, ctx->block);
            ctx->used = 0u;
        }
    }
}

static inline void kiln_sha512_final(kiln_sha512_ctx *ctx, uint8_t digest[64])
{
    uint64_t bits = ctx->bytes * 8u;
    unsigned i;
    ctx->block[ctx->used++] = 0x80u;
    if (ctx->used > 112u) {
        memset(ctx->block + ctx->used, 0, 128u - ctx->used);
        kiln_sha512_compress(ctx->state, ctx->block);
        ctx->used = 0u;
    }
    memset(ctx->block + ctx->used, 0, 120u - ctx->used); /* message length below 2^64 bits */
    for (i = 0; i < 8u; ++i) {
        ctx->block[127u - i] = (uint8_t)(bits >> (8u * i));
    }
    kiln_sha512_compress(ctx->state, ctx->block);
    for (i = 0; i < 64u; ++i) {
        digest[i] = (uint8_t)(ctx->state[i / 8u] >> (56u - 8u * (i % 8u)));
    }
}

/* ---- the field GF(2^255 - 19) ---- */

typedef int64_t kiln_fe[16];

static const kiln_fe kiln_fe_d = {0x78a3, 0x1359, 0x4dca, 0x75eb, 0xd8ab, 0x4141, 0x0a4d, 0x0070, 0xe898, 0x7779, 0x4079, 0x8cc7, 0xfe73, 0x2b6f, 0x6cee, 0x5203};
static const kiln_fe kiln_fe_d2 = {0xf159, 0x26b2, 0x9b94, 0xebd6, 0xb156, 0x8283, 0x149a, 0x00e0, 0xd130, 0xeef3, 0x80f2, 0x198e, 0xfce7, 0x56df, 0xd9dc, 0x2406};
static const kiln_fe kiln_fe_sqrtm1 = {0xa0b0, 0x4a0e, 0x1b27, 0xc4ee, 0xe478, 0xad2f, 0x1806, 0x2f43, 0xd7a7, 0x3dfb, 0x0099, 0x2b4d, 0xdf0b, 0x4fc1, 0x2480, 0x2b83};
static const kiln_fe kiln_fe_bx = {0xd51a, 0x8f25, 0x2d60, 0xc956, 0xa7b2, 0x9525, 0xc760, 0x692c, 0xdc5c, 0xfdd6, 0xe231, 0xc0a4, 0x53fe, 0xcd6e, 0x36d3, 0x2169};
static const kiln_fe kiln_fe_by = {0x6658, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666};

static inline void kiln_fe_set(kiln_fe o, const kiln_fe a)
{
    memcpy(o, a, sizeof(kiln_fe));
}

static inline void kiln_fe_small(kiln_fe o, int64_t v)
{
    memset(o, 0, sizeof(kiln_fe));
    o[0] = v;
}

/* Carry each limb into the next (2^256 = 38 mod p from the top one), leaving 16-bit limbs. */
static inline void kiln_fe_carry(kiln_fe o)
{
    int i;
    for (i = 0; i < 16; ++i) {
        int64_t c;
        o[i] += 65536;
        c = o[i] >> 16; /* floor division: o[i] is not negative here */
        if (i < 15) {
            o[i + 1] += c - 1;
        } else {
            o[0] += 38 * (c - 1);
        }
        o[i] -= c * 65536;
    }
}

static inline void kiln_fe_add(kiln_fe o, const kiln_fe a, const kiln_fe b)
{
    int i;
    for (i = 0; i < 16; ++i) {
        o[i] = a[i] + b[i];
    }
}

static inline void kiln_fe_sub(kiln_fe o, const kiln_fe a, const kiln_fe b)
{
    int i;
    for (i = 0; i < 16; ++i) {
        o[i] = a[i] - b[i];
    }
}

static inline void kiln_fe_mul(kiln_fe o, const kiln_fe a, const kiln_fe b)
{
    int64_t t[31];
    int i, j;
    memset(t, 0, sizeof(t));
    for (i = 0; i < 16; ++i) {
        for (j = 0; j < 16; ++j) {
            t[i + j] += a[i] * b[j];
        }
    }
    for (i = 0; i < 15; ++i) {
        t[i] += 38 * t[i + 16];
    }
    memcpy(o, t, sizeof(kiln_fe));
    kiln_fe_carry(o);
    kiln_fe_carry(o);
}

/* a^e for the two exponents needed: p - 2 (inverse) and (p - 5) / 8 (square roots), both
 * all ones in binary but for a few bits: the squarings of bits 0..254 with those skipped. */
static inline void kiln_fe_pow(kiln_fe o, const kiln_fe a, int top, int skip1, int skip2)
{
    kiln_fe c;
    int i;
    kiln_fe_set(c, a);
    for (i = top; i >= 0; --i) {
        kiln_fe_mul(c, c, c);
        if (i != skip1 && i != skip2) {
            kiln_fe_mul(c, c, a);
        }
    }
    kiln_fe_set(o, c);
}

static inline void kiln_fe_invert(kiln_fe o, const kiln_fe a)
{
    kiln_fe_pow(o, a, 253, 2, 4); /* a^(p-2) */
}

/* The canonical 32 little-endian bytes of a (fully reduced mod p). */
static inline void kiln_fe_pack(uint8_t out[32], const kiln_fe a)
{
    kiln_fe t, m;
    int i, pass;
    kiln_fe_set(t, a);
    kiln_fe_carry(t);
    kiln_fe_carry(t);
    kiln_fe_carry(t);
    for (pass = 0; pass < 2; ++pass) { /* subtract p while the result stays non-negative */
        int64_t borrow;
        m[0] = t[0] - 0xffed;
        for (i = 1; i < 15; ++i) {
            m[i] = t[i] - 0xffff - ((m[i - 1] >> 16) & 1);
            m[i - 1] &= 0xffff;
        }
        m[15] = t[15] - 0x7fff - ((m[14] >> 16) & 1);
        borrow = (m[15] >> 16) & 1;
        m[14] &= 0xffff;
        if (borrow == 0) {
            kiln_fe_set(t, m);
        }
    }
    for (i = 0; i < 16; ++i) {
        out[2 * i] = (uint8_t)(t[i] & 0xff);
        out[2 * i + 1] = (uint8_t)((t[i] >> 8) & 0xff);
    }
}

static inline void kiln_fe_unpack(kiln_fe o, const uint8_t in[32])
{
    int i;
    for (i = 0; i < 16; ++i) {
        o[i] = (int64_t)in[2 * i] + ((int64_t)in[2 * i + 1] << 8);
    }
    o[15] &= 0x7fff;
}

static inline int kiln_fe_equal(const kiln_fe a, const kiln_fe b)
{
    uint8_t x[32], y[32];
    kiln_fe_pack(x, a);
    kiln_fe_pack(y, b);
    return memcmp(x, y, 32) == 0;
}

static inline int kiln_fe_odd(const kiln_fe a)
{
    uint8_t x[32];
    kiln_fe_pack(x, a);
    return x[0] & 1;
}

/* ---- the curve: points (X:Y:Z:T) ---- */

typedef kiln_fe kiln_ge[4];

static inline void kiln_ge_add(kiln_ge p, kiln_ge q) /* p += q (RFC 8032, 5.1.4) */
{
    kiln_fe a, b, c, d, t, e, f, g, h;
    kiln_fe_sub(a, p[1], p[0]);
    kiln_fe_sub(t, q[1], q[0]);
    kiln_fe_mul(a, a, t);
    kiln_fe_add(b, p[0], p[1]);
    kiln_fe_add(t, q[0], q[1]);
    kiln_fe_mul(b, b, t);
    kiln_fe_mul(c, p[3], q[3]);
    kiln_fe_mul(c, c, kiln_fe_d2);
    kiln_fe_mul(d, p[2], q[2]);
    kiln_fe_add(d, d, d);
    kiln_fe_sub(e, b, a);
    kiln_fe_sub(f, d, c);
    kiln_fe_add(g, d, c);
    kiln_fe_add(h, b, a);
    kiln_fe_mul(p[0], e, f);
    kiln_fe_mul(p[1], h, g);
    kiln_fe_mul(p[2], g, f);
    kiln_fe_mul(p[3], e, h);
}

static inline void kiln_ge_copy(kiln_ge o, kiln_ge p)
{
    memcpy(o, p, sizeof(kiln_ge));
}

/* p = [s]q for a 32-byte little-endian scalar (double and add, from the top bit). */
static inline void kiln_ge_scalarmult(kiln_ge p, kiln_ge q, const uint8_t s[32])
{
    kiln_ge t;
    int i;
    kiln_fe_small(p[0], 0);
    kiln_fe_small(p[1], 1);
    kiln_fe_small(p[2], 1);
    kiln_fe_small(p[3], 0);
    for (i = 255; i >= 0; --i) {
        kiln_ge_copy(t, p);
        kiln_ge_add(p, t);
        if ((s[i / 8] >> (i & 7)) & 1) {
            kiln_ge_add(p, q);
        }
    }
}

static inline void kiln_ge_pack(uint8_t out[32], kiln_ge p)
{
    kiln_fe zi, x, y;
    kiln_fe_invert(zi, p[2]);
    kiln_fe_mul(x, p[0], zi);
    kiln_fe_mul(y, p[1], zi);
    kiln_fe_pack(out, y);
    out[31] = (uint8_t)(out[31] ^ (kiln_fe_odd(x) << 7));
}

/* r = -A for the encoded point A; 0 on success, -1 when it is not a canonical curve point. */
static inline int kiln_ge_unpack_negated(kiln_ge r, const uint8_t in[32])
{
    kiln_fe num, den, den2, den4, den6, t, chk, one, zero;
    uint8_t canonical[32];
    kiln_fe_small(one, 1);
    kiln_fe_small(zero, 0);
    kiln_fe_set(r[2], one);
    kiln_fe_unpack(r[1], in);
    kiln_fe_pack(canonical, r[1]);
    canonical[31] = (uint8_t)(canonical[31] | (in[31] & 0x80));
    if (memcmp(canonical, in, 32) != 0) {
        return -1; /* y >= p */
    }
    kiln_fe_mul(num, r[1], r[1]);       /* y^2 */
    kiln_fe_mul(den, num, kiln_fe_d);   /* d y^2 */
    kiln_fe_sub(num, num, r[2]);        /* u = y^2 - 1 */
    kiln_fe_add(den, r[2], den);        /* v = d y^2 + 1 */
    kiln_fe_mul(den2, den, den);
    kiln_fe_mul(den4, den2, den2);
    kiln_fe_mul(den6, den4, den2);
    kiln_fe_mul(t, den6, num);
    kiln_fe_mul(t, t, den);             /* u v^7 */
    kiln_fe_pow(t, t, 250, 1, -1);      /* (u v^7)^((p-5)/8) */
    kiln_fe_mul(t, t, num);
    kiln_fe_mul(t, t, den);
    kiln_fe_mul(t, t, den);
    kiln_fe_mul(r[0], t, den);          /* x = u v^3 (u v^7)^((p-5)/8) */
    kiln_fe_mul(chk, r[0], r[0]);
    kiln_fe_mul(chk, chk, den);
    if (!kiln_fe_equal(chk, num)) {
        kiln_fe_mul(r[0], r[0], kiln_fe_sqrtm1);
    }
    kiln_fe_mul(chk, r[0], r[0]);
    kiln_fe_mul(chk, chk, den);
    if (!kiln_fe_equal(chk, num)) {
        return -1; /* no square root: not on the curve */
    }
    if (kiln_fe_odd(r[0]) == (in[31] >> 7)) { /* negated: the other root */
        kiln_fe_sub(r[0], zero, r[0]);
    }
    kiln_fe_mul(r[3], r[0], r[1]);
    return 0;
}

/* ---- scalars mod L = 2^252 + 27742317777372353535851937790883648493 ---- */

static const uint8_t kiln_ed25519_order[32] = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
};

/* r = x mod L for a 64-limb little-endian number of 8-bit limbs (x is consumed). */
static inline void kiln_sc_reduce(uint8_t r[32], int64_t x[64])
{
    int64_t carry;
    int i, j;
    for (i = 63; i >= 32; --i) { /* fold limb i down: 2^(8i) = 2^(8(i-32)) * 2^256, 2^256 = -16 (L - 2^252) */
        carry = 0;
        for (j = i - 32; j < i - 12; ++j) {
            x[j] += carry - 16 * x[i] * kiln_ed25519_order[j - (i - 32)];
            carry = (x[j] + 128) >> 8;
            x[j] -= carry * 256;
        }
        x[j] += carry;
        x[i] = 0;
    }
    carry = 0;
    for (j = 0; j < 32; ++j) {
        x[j] += carry - (x[31] >> 4) * kiln_ed25519_order[j];
        carry = x[j] >> 8;
        x[j] &= 255;
    }
    for (j = 0; j < 32; ++j) {
        x[j] -= carry * kiln_ed25519_order[j];
    }
    for (i = 0; i < 32; ++i) {
        x[i + 1] += x[i] >> 8;
        r[i] = (uint8_t)(x[i] & 255);
    }
}

/* 1 when the 32-byte little-endian scalar s is below L (RFC 8032 refuses s >= L). */
static inline int kiln_sc_canonical(const uint8_t s[32])
{
    int i;
    for (i = 31; i >= 0; --i) {
        if (s[i] != kiln_ed25519_order[i]) {
            return s[i] < kiln_ed25519_order[i];
        }
    }
    return 0;
}

/* 1 when sig (64 bytes: R, S) is a valid Ed25519 signature of msg (n bytes) by the public key
 * pk (32 bytes), 0 otherwise: the check [S]B = R + [SHA-512(R || A || msg)]A. */
static inline int kiln_ed25519_verify(const uint8_t sig[64], const uint8_t *msg, size_t n, const uint8_t pk[32])
{
    kiln_sha512_ctx ctx;
    uint8_t h[64], k[32], check[32];
    int64_t wide[64];
    kiln_ge minus_a, base, p, q;
    int i;
    if (!kiln_sc_canonical(sig + 32) || kiln_ge_unpack_negated(minus_a, pk) != 0) {
        return 0;
    }
    kiln_sha512_init(&ctx);
    kiln_sha512_update(&ctx, sig, 32);
    kiln_sha512_update(&ctx, pk, 32);
    kiln_sha512_update(&ctx, msg, n);
    kiln_sha512_final(&ctx, h);
    for (i = 0; i < 64; ++i) {
        wide[i] = h[i];
    }
    kiln_sc_reduce(k, wide);
    kiln_ge_scalarmult(p, minus_a, k); /* -[k]A */
    kiln_fe_set(base[0], kiln_fe_bx);
    kiln_fe_set(base[1], kiln_fe_by);
    kiln_fe_small(base[2], 1);
    kiln_fe_mul(base[3], kiln_fe_bx, kiln_fe_by);
    kiln_ge_scalarmult(q, base, sig + 32); /* [S]B */
    kiln_ge_add(p, q);
    kiln_ge_pack(check, p);
    return memcmp(check, sig, 32) == 0;
}

#endif /* KILN_ED25519_H */
