/*
 * kiln_sha256.h - SHA-256 (FIPS 180-4), dependency-free C99, for the weights blob's payload digest.
 *
 * The round constants are the first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes, the initial hash those of the square roots of the first 8 (FIPS 180-4,
 * 4.2.2 and 5.3.3). Tested against the FIPS 180-4 / NIST example vectors and Python's hashlib
 * (tests/ota/test_crypto_h.py). Only stdint.h, stddef.h and string.h.
 */
#ifndef KILN_SHA256_H
#define KILN_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KILN_SHA256_SIZE 32u

typedef struct {
    uint32_t state[8];
    uint8_t block[64];
    uint64_t bytes; /* message bytes so far */
    size_t used;    /* bytes waiting in block */
} kiln_sha256_ctx;

static inline uint32_t kiln_sha256_rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32u - n));
}

static inline void kiln_sha256_compress(uint32_t state[8], const uint8_t block[64])
{
    static const uint32_t k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
    };
    uint32_t w[64], v[8], t1, t2;
    unsigned i;
    for (i = 0; i < 16u; ++i) {
        w[i] = ((uint32_t)block[4u * i] << 24) | ((uint32_t)block[4u * i + 1u] << 16) |
               ((uint32_t)block[4u * i + 2u] << 8) | (uint32_t)block[4u * i + 3u];
    }
    for (i = 16; i < 64u; ++i) {
        uint32_t s0 = kiln_sha256_rotr(w[i - 15u], 7) ^ kiln_sha256_rotr(w[i - 15u], 18) ^ (w[i - 15u] >> 3);
        uint32_t s1 = kiln_sha256_rotr(w[i - 2u], 17) ^ kiln_sha256_rotr(w[i - 2u], 19) ^ (w[i - 2u] >> 10);
        w[i] = w[i - 16u] + s0 + w[i - 7u] + s1;
    }
    memcpy(v, state, sizeof(v));
    for (i = 0; i < 64u; ++i) {
        t1 = v[7] + (kiln_sha256_rotr(v[4], 6) ^ kiln_sha256_rotr(v[4], 11) ^ kiln_sha256_rotr(v[4], 25)) +
             ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
        t2 = (kiln_sha256_rotr(v[0], 2) ^ kiln_sha256_rotr(v[0], 13) ^ kiln_sha256_rotr(v[0], 22)) +
             ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7u * sizeof(v[0]));
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (i = 0; i < 8u; ++i) {
        state[i] += v[i];
    }
}

static inline void kiln_sha256_init(kiln_sha256_ctx *ctx)
{
    static const uint32_t initial[8] = {
    0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u,
    };
    memcpy(ctx->state, initial, sizeof(initial));
    ctx->bytes = 0u;
    ctx->used = 0u;
}

static inline void kiln_sha256_update(kiln_sha256_ctx *ctx, const uint8_t *data, size_t n)
{
    ctx->bytes += (uint64_t)n;
    while (n > 0u) {
        size_t take = 64u - ctx->used < n ? 64u - ctx->used : n;
        if (ctx->used == 0u && n >= 64u) { /* whole blocks straight from the input */
            kiln_sha256_compress(ctx->state, data);
            data += 64;
            n -= 64u;
            continue;
        }
        memcpy(ctx->block + ctx->used, data, take);
        ctx->used += take;
        data += take;
        n -= take;
        if (ctx->used == 64u) {
            kiln_sha256_compress(ctx->state, ctx->block);
            ctx->used = 0u;
        }
    }
}

static inline void kiln_sha256_final(kiln_sha256_ctx *ctx, uint8_t digest[KILN_SHA256_SIZE])
{
    uint64_t bits = ctx->bytes * 8u;
    unsigned i;
    ctx->block[ctx->used++] = 0x80u;
    if (ctx->used > 56u) {
        memset(ctx->block + ctx->used, 0, 64u - ctx->used);
        kiln_sha256_compress(ctx->state, ctx->block);
        ctx->used = 0u;
    }
    memset(ctx->block + ctx->used, 0, 56u - ctx->used);
    for (i = 0; i < 8u; ++i) {
        ctx->block[63u - i] = (uint8_t)(bits >> (8u * i));
    }
    kiln_sha256_compress(ctx->state, ctx->block);
    for (i = 0; i < 32u; ++i) {
        digest[i] = (uint8_t)(ctx->state[i / 4u] >> (24u - 8u * (i % 4u)));
    }
}

/* The SHA-256 of n bytes at data. */
static inline void kiln_sha256(const uint8_t *data, size_t n, uint8_t digest[KILN_SHA256_SIZE])
{
    kiln_sha256_ctx ctx;
    kiln_sha256_init(&ctx);
    kiln_sha256_update(&ctx, data, n);
    kiln_sha256_final(&ctx, digest);
}

#endif /* KILN_SHA256_H */
