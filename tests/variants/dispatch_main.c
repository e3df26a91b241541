/* Test main for the shape-variant dispatcher of tests/variants/models.py: seq_classifier built
 * with variants seq = 32, 64, 128 under the name seqcls. Fills an input of each length (and of
 * length 48, which no variant was built for) from a fixed integer sequence that the test
 * repeats in numpy, runs seqcls_run and prints the selected variant, the status and the scores. */
#include <stdint.h>
#include <stdio.h>
#include "seqcls.h"

#define CHANNELS 8
#define MAX_LENGTH 128
#define CLASSES 4

static float input[CHANNELS * MAX_LENGTH];
static float scores[CLASSES];

/* Values k / 32768 for k in [-32768, 32767] from a linear congruential sequence: exact in float. */
static void fill(float *x, int32_t n, uint32_t seed)
{
    int32_t i;
    for (i = 0; i < n; ++i) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((int32_t)((seed >> 16) & 0xFFFFu) - 32768) / 32768.0f;
    }
}

int main(void)
{
    static const int32_t lengths[] = { 32, 64, 128, 48 };
    uint32_t k;
    for (k = 0u; k < sizeof(lengths) / sizeof(lengths[0]); ++k) {
        int32_t dims[3];
        const int32_t *dims_of[1];
        const void *inputs[1];
        void *outputs[1];
        int status, c;
        dims[0] = 1;
        dims[1] = CHANNELS;
        dims[2] = lengths[k];
        dims_of[0] = dims;
        inputs[0] = input;
        outputs[0] = scores;
        fill(input, CHANNELS * lengths[k], k + 1u);
        status = seqcls_run(dims_of, inputs, outputs);
        printf("%d %d", seqcls_select(dims_of, inputs), status);
        for (c = 0; c < CLASSES; ++c) {
            printf(" %.9g", (double)scores[c]);
        }
        printf("\n");
    }
    return 0;
}
