/* Driver for tests/ops/test_hybrid_conv2d.py: runs runtime_c/kiln_hybrid.h on batches read
 * from stdin, one per line: "s|a n x0 x1 ..." (values as C99 hex floats). Prints one line
 * per batch: the scale (hex float), the zero point and the n codes. */
#include <stdio.h>
#include <stdlib.h>

#include "kiln_hybrid.h"

#define MAX_N 4096

int main(void)
{
    static float x[MAX_N];
    static int8_t q[MAX_N];
    char mode;
    int n;
    while (scanf(" %c %d", &mode, &n) == 2) {
        int32_t i;
        int32_t zp = 0;
        float scale;
        if (n < 0 || n > MAX_N) {
            return 2;
        }
        for (i = 0; i < n; ++i) {
            char buf[64];
            if (scanf("%63s", buf) != 1) {
                return 3;
            }
            x[i] = strtof(buf, NULL);
        }
        scale = mode == 'a' ? kiln_hybrid_quantize_asymmetric(x, n, q, &zp)
                            : kiln_hybrid_quantize_symmetric(x, n, q);
        printf("%a %d", (double)scale, (int)zp);
        for (i = 0; i < n; ++i) {
            printf(" %d", (int)q[i]);
        }
        printf("\n");
    }
    return 0;
}
