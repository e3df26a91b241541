/* kiln_crc32 (runtime_c/kiln_blob.h) over stdin: prints the CRC of every prefix of the input,
 * one hexadecimal number a line, to be checked against zlib by test_kiln_blob_h.py. */
#include <stdio.h>
#include "kiln_blob.h"

int main(void)
{
    static uint8_t data[1 << 16];
    size_t n = fread(data, 1, sizeof(data), stdin);
    size_t k;
    for (k = 0; k <= n; ++k) {
        printf("%08lx\n", (unsigned long)kiln_crc32(0u, data, k));
    }
    /* chained over two parts, as the blob check runs it over header and payload */
    printf("%08lx\n", (unsigned long)kiln_crc32(kiln_crc32(0u, data, n / 3u), data + n / 3u, n - n / 3u));
    return 0;
}
