/*
 * kiln_canary.h - canary bytes of debug builds (`kiln build --debug-canaries`).
 *
 * A canary is a run of bytes with a known pattern placed where no kernel may write: around
 * the activation arena and right after every buffer in it. The generated run function fills
 * a buffer's canary just before the call that first writes the buffer and checks every
 * canary in use after each call; a changed byte means a kernel (or the application) wrote
 * outside its buffer. The pattern depends on the position, so that a run of equal bytes (a
 * memset, a stray zero fill) never looks intact. Only stdint.h.
 */
#ifndef KILN_CANARY_H
#define KILN_CANARY_H

#include <stdint.h>

static inline uint8_t kiln_canary_byte(int32_t i)
{
    return (uint8_t)(0xA5u ^ (uint8_t)((uint32_t)i * 29u));
}

/* Write the pattern at base + offsets[k], `bytes` bytes each, for k < count. */
static inline void kiln_canary_fill(uint8_t *base, const uint32_t *offsets, int32_t count, int32_t bytes)
{
    int32_t k;
    int32_t i;
    for (k = 0; k < count; ++k) {
        uint8_t *p = base + offsets[k];
        for (i = 0; i < bytes; ++i) {
            p[i] = kiln_canary_byte(i);
        }
    }
}

/* 1 when every canary at base + offsets[k] still holds the pattern, 0 otherwise. */
static inline int kiln_canary_intact(const uint8_t *base, const uint32_t *offsets, int32_t count, int32_t bytes)
{
    int32_t k;
    int32_t i;
    for (k = 0; k < count; ++k) {
        const uint8_t *p = base + offsets[k];
        for (i = 0; i < bytes; ++i) {
            if (p[i] != kiln_canary_byte(i)) {
                return 0;
            }
        }
    }
    return 1;
}

#endif /* KILN_CANARY_H */
