/*
 * kiln_blob.h - checks of an external weights blob (`kiln build --weights blob`).
 *
 * A blob is a 192-byte header followed by the payload (every constant of the model at a
 * 16-byte aligned offset). Header, format 2, little-endian:
 *
 *   offset size field
 *        0    4 magic "KLNB"
 *        4    4 format version (2)
 *        8    4 oldest code ABI that may read this payload
 *       12    4 newest code ABI that may read this payload
 *       16   32 model id: SHA-256 of what the generated code expects from the payload
 *       48    4 payload bytes
 *       52    4 flags: bit 0 = signed; every other bit zero
 *       56    8 reserved, zero
 *       64   32 SHA-256 of the payload
 *       96   64 Ed25519 signature of bytes 0..95 (which hold the digest), zero when unsigned
 *      160   28 reserved, zero
 *      188    4 CRC-32 (zlib's) of header bytes 0..187, then of the payload
 *
 * kiln_blob_check runs the checks in a fixed order, so that a single damaged field yields
 * one known code: a short buffer, the address, magic, version, reserved bits and bytes, model
 * id, ABI range, the declared size, the CRC (which catches every other accident), then the
 * payload's SHA-256 (which catches a payload edited on purpose with its CRC recomputed). The
 * signature is the generated code's to check (templates/weights_blob/load.c.j2), with
 * kiln_ed25519.h or the bootloader's own crypto. It only reads.
 * Only stdint.h, stddef.h and string.h.
 */
#ifndef KILN_BLOB_H
#define KILN_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kiln_ed25519.h"
#include "kiln_sha256.h"

#define KILN_BLOB_OK 0
#define KILN_BLOB_ERR_TRUNCATED 21 /* fewer bytes than the header says (or than a header) */
#define KILN_BLOB_ERR_ALIGN 22     /* the blob does not start at a KILN_BLOB_ALIGN boundary */
#define KILN_BLOB_ERR_MAGIC 23     /* not a Kiln weights blob */
#define KILN_BLOB_ERR_VERSION 24   /* a header format this code does not read */
#define KILN_BLOB_ERR_MODEL 25     /* the weights of another model (or another build of it) */
#define KILN_BLOB_ERR_ABI 26       /* the blob does not accept this code's ABI version */
#define KILN_BLOB_ERR_SIZE 27      /* more bytes than the header says, or a payload of the wrong size */
#define KILN_BLOB_ERR_CRC 28       /* damaged: the checksum does not match */
#define KILN_BLOB_ERR_RESERVED 29  /* a reserved header byte or flag bit is not zero */
#define KILN_BLOB_ERR_DIGEST 30    /* the payload is not the one the header's SHA-256 names */
#define KILN_BLOB_ERR_SIGNATURE 31 /* signed, but the signature does not verify */
#define KILN_BLOB_ERR_UNSIGNED 32  /* not signed, and this code accepts signed blobs only */

#define KILN_BLOB_HEADER_SIZE 192u
#define KILN_BLOB_ALIGN 16u
#define KILN_BLOB_FORMAT_VERSION 2u
#define KILN_BLOB_MODEL_ID_SIZE 32u
#define KILN_BLOB_FLAG_SIGNED 1u
#define KILN_BLOB_DIGEST_OFFSET 64u
#define KILN_BLOB_SIGNATURE_OFFSET 96u
#define KILN_BLOB_SIGNED_BYTES 96u /* the signature covers header bytes 0..95 */
#define KILN_BLOB_CRC_OFFSET 188u

static inline uint32_t kiln_blob_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* zlib's CRC-32 (reflected polynomial 0xEDB88320), four bits at a time: a 64-byte table
 * instead of 1 KiB, twice the table lookups of the byte-wise version. Start with crc = 0. */
static inline uint32_t kiln_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    static const uint32_t nibble[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
        0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
    };
    size_t i;
    crc = ~crc;
    for (i = 0; i < n; ++i) {
        crc ^= p[i];
        crc = (crc >> 4) ^ nibble[crc & 15u];
        crc = (crc >> 4) ^ nibble[crc & 15u];
    }
    return ~crc;
}

static inline int kiln_blob_zero(const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        if (p[i] != 0u) {
            return 0;
        }
    }
    return 1;
}

/* 1 when the header says the blob is signed (after kiln_blob_check accepted it). */
static inline int kiln_blob_is_signed(const void *blob)
{
    return (kiln_blob_u32((const uint8_t *)blob + 52) & KILN_BLOB_FLAG_SIGNED) != 0u;
}

/* KILN_BLOB_OK when `blob` (`size` bytes) is a sound blob for code with this model id,
 * payload size and ABI version; otherwise the first failed check's KILN_BLOB_ERR_ code.
 * The signature, if any, is not checked here. */
static inline int kiln_blob_check(const void *blob, size_t size, const uint8_t *model_id,
                                  uint32_t payload_size, uint32_t code_abi)
{
    const uint8_t *b = (const uint8_t *)blob;
    uint8_t digest[KILN_SHA256_SIZE];
    uint32_t declared;
    if (b == NULL || size < KILN_BLOB_HEADER_SIZE) {
        return KILN_BLOB_ERR_TRUNCATED;
    }
    if ((uintptr_t)b % KILN_BLOB_ALIGN != 0u) {
        return KILN_BLOB_ERR_ALIGN;
    }
    if (b[0] != 'K' || b[1] != 'L' || b[2] != 'N' || b[3] != 'B') {
        return KILN_BLOB_ERR_MAGIC;
    }
    if (kiln_blob_u32(b + 4) != KILN_BLOB_FORMAT_VERSION) {
        return KILN_BLOB_ERR_VERSION;
    }
    if ((kiln_blob_u32(b + 52) & ~KILN_BLOB_FLAG_SIGNED) != 0u || !kiln_blob_zero(b + 56, 8u) ||
        !kiln_blob_zero(b + 160, 28u)) {
        return KILN_BLOB_ERR_RESERVED;
    }
    if (memcmp(b + 16, model_id, KILN_BLOB_MODEL_ID_SIZE) != 0) {
        return KILN_BLOB_ERR_MODEL;
    }
    if (code_abi < kiln_blob_u32(b + 8) || code_abi > kiln_blob_u32(b + 12)) {
        return KILN_BLOB_ERR_ABI;
    }
    declared = kiln_blob_u32(b + 48);
    if (declared > size - KILN_BLOB_HEADER_SIZE) {
        return KILN_BLOB_ERR_TRUNCATED;
    }
    if (declared < size - KILN_BLOB_HEADER_SIZE || declared != payload_size) {
        return KILN_BLOB_ERR_SIZE;
    }
    if (kiln_crc32(kiln_crc32(0u, b, KILN_BLOB_CRC_OFFSET), b + KILN_BLOB_HEADER_SIZE, declared) !=
        kiln_blob_u32(b + KILN_BLOB_CRC_OFFSET)) {
        return KILN_BLOB_ERR_CRC;
    }
    kiln_sha256(b + KILN_BLOB_HEADER_SIZE, declared, digest);
    if (memcmp(digest, b + KILN_BLOB_DIGEST_OFFSET, KILN_SHA256_SIZE) != 0) {
        return KILN_BLOB_ERR_DIGEST;
    }
    return KILN_BLOB_OK;
}

#endif /* KILN_BLOB_H */
