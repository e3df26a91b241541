/* Host driver of the benchmark, shared by every C code generator measured (Kiln, emx-onnx-cgen):
 * the model is reached through bench_run() of an adapter (bench/harness/*_adapter.c.j2), so both
 * are run, timed and counted by the same code.
 *
 *   prog run INPUTS OUTPUTS COUNT        run COUNT samples (raw input bytes, back to back), write
 *                                        the outputs, print the stack and heap high-water marks
 *   prog callgrind INPUTS OUTPUTS 1      run the first sample once to warm up, then once more with
 *                                        callgrind collecting that call only (valgrind
 *                                        --collect-atstart=no --instr-atstart=no)
 *
 * Stack: the stack below main's frame is painted right before each call and scanned right
 * after it (the driver's own file I/O stays out of the figure); heap: malloc and friends are wrapped (heap_wrap.c, -Wl,--wrap=...) and the peak of
 * requested bytes kept. Not part of any product: test scaffolding of bench/. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

extern const size_t bench_input_bytes;
extern const size_t bench_output_bytes;
int bench_run(const void *in, void *out);
size_t bench_heap_peak(void);

#define STACK_PAINT_BYTES ((size_t)2 * 1024 * 1024)
#define STACK_PAINT 0xA5u

static uintptr_t paint_base;

/* Paint the stack the model's call will use; remember where the painted block starts. */
static __attribute__((noinline)) void paint_stack(void)
{
    volatile unsigned char block[STACK_PAINT_BYTES];
    size_t i;
    for (i = 0; i < STACK_PAINT_BYTES; ++i) {
        block[i] = STACK_PAINT;
    }
    paint_base = (uintptr_t)&block[0];
}

/* Bytes from the top of the painted block down to the deepest byte that lost its paint. */
static __attribute__((noinline)) size_t stack_used(void)
{
    const volatile unsigned char *p = (const volatile unsigned char *)paint_base;
    size_t i = 0;
    while (i < STACK_PAINT_BYTES && p[i] == STACK_PAINT) {
        ++i;
    }
    return STACK_PAINT_BYTES - i;
}

static void *buffer(size_t bytes)
{
    void *p = NULL;
    /* posix_memalign is not wrapped: the harness's buffers stay out of the heap figure. */
    if (posix_memalign(&p, 64, bytes + 64) != 0) {
        return NULL;
    }
    return p;
}

int main(int argc, char **argv)
{
    FILE *fin;
    FILE *fout;
    long count;
    long s;
    int callgrind;
    size_t stack_max = 0;
    void *in = buffer(bench_input_bytes);
    void *out = buffer(bench_output_bytes);
    if (argc != 5 || in == NULL || out == NULL) {
        fprintf(stderr, "usage: %s run|callgrind INPUTS OUTPUTS COUNT\n", argv[0]);
        return 2;
    }
    callgrind = strcmp(argv[1], "callgrind") == 0;
    fin = fopen(argv[2], "rb");
    fout = fopen(argv[3], "wb");
    count = callgrind ? 1 : strtol(argv[4], NULL, 10);
    if (fin == NULL || fout == NULL) {
        fprintf(stderr, "cannot open the sample files\n");
        return 2;
    }
    for (s = 0; s < count; ++s) {
        int status;
        size_t used;
        if (fread(in, bench_input_bytes, 1, fin) != 1) {
            fprintf(stderr, "short input file\n");
            return 2;
        }
        paint_stack();
        status = bench_run(in, out);
        used = stack_used();
        if (used > stack_max) {
            stack_max = used;
        }
        if (callgrind) {
            CALLGRIND_START_INSTRUMENTATION;
            CALLGRIND_TOGGLE_COLLECT;
            status = bench_run(in, out);
            CALLGRIND_TOGGLE_COLLECT;
            CALLGRIND_STOP_INSTRUMENTATION;
        }
        if (status != 0) {
            fprintf(stderr, "the model returned %d\n", status);
            return 3;
        }
        fwrite(out, bench_output_bytes, 1, fout);
    }
    fclose(fin);
    fclose(fout);
    printf("bench-stack-bytes %zu\nbench-heap-bytes %zu\n", stack_max, bench_heap_peak());
    return 0;
}
