/* runtime_c/kiln_sha256.h and kiln_ed25519.h over stdin, one request a line, one answer a line:
 *   s HEX            -> the SHA-256 of the bytes, in hex
 *   c HEX            -> the same, fed to the streaming interface in pieces of 1, 63 and 64 bytes
 *   v PK MSG SIG     -> 1 when SIG is a valid Ed25519 signature of MSG by PK, else 0 ("-" = empty MSG)
 * Checked against FIPS 180-4 / RFC 8032 vectors and hashlib by tests/ota/test_crypto_h.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kiln_ed25519.h"
#include "kiln_sha256.h"

static uint8_t buffer[1 << 20];
static char line[3 << 20];

static size_t unhex(const char *text, uint8_t *out, size_t room)
{
    size_t n = 0;
    unsigned v;
    if (text[0] == '-') {
        return 0;
    }
    while (n < room && sscanf(text + 2 * n, "%2x", &v) == 1) {
        out[n++] = (uint8_t)v;
    }
    return n;
}

static void print_hex(const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        printf("%02x", p[i]);
    }
    printf("\n");
}

int main(void)
{
    static char a[3 << 20], b[3 << 20], c[256];
    uint8_t digest[32], pk[32], sig[64];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (line[0] == 's' || line[0] == 'c') {
            size_t n = sscanf(line + 2, "%s", a) == 1 ? unhex(a, buffer, sizeof(buffer)) : 0;
            if (line[0] == 's') {
                kiln_sha256(buffer, n, digest);
            } else {
                static const size_t pieces[3] = {1, 63, 64};
                kiln_sha256_ctx ctx;
                size_t at = 0, k = 0;
                kiln_sha256_init(&ctx);
                while (at < n) {
                    size_t take = pieces[k++ % 3] < n - at ? pieces[(k - 1) % 3] : n - at;
                    kiln_sha256_update(&ctx, buffer + at, take);
                    at += take;
                }
                kiln_sha256_final(&ctx, digest);
            }
            print_hex(digest, 32);
        } else if (line[0] == 'v' && sscanf(line + 2, "%255s %s %255s", c, a, b) == 3) {
            size_t n = unhex(a, buffer, sizeof(buffer));
            unhex(c, pk, 32);
            unhex(b, sig, 64);
            printf("%d\n", kiln_ed25519_verify(sig, buffer, n, pk));
        }
    }
    return 0;
}
