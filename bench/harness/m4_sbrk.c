/* Heap of the benchmark's Cortex-M firmware for generated code that calls malloc (newlib's
 * malloc grows its heap through _sbrk): the region harness/m4_heap.ld reserves outside the
 * board's RAM, and its high-water mark, which is what the code needs in RAM for its heap,
 * newlib's bookkeeping included. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern uint8_t __bench_heap_start[];
extern uint8_t __bench_heap_end[];

void *_sbrk(ptrdiff_t increment);
size_t bench_heap_peak(void);
int bench_heap_failed(void);

static size_t brk_offset;
static size_t high_water;
static int failed;

void *_sbrk(ptrdiff_t increment)
{
    size_t capacity = (size_t)(__bench_heap_end - __bench_heap_start);
    void *base = &__bench_heap_start[brk_offset];
    if (increment < 0 ? (size_t)-increment > brk_offset : (size_t)increment > capacity - brk_offset) {
        failed = 1;
        errno = ENOMEM;
        return (void *)-1;
    }
    brk_offset = (size_t)((ptrdiff_t)brk_offset + increment);
    if (brk_offset > high_water) {
        high_water = brk_offset;
    }
    return base;
}

size_t bench_heap_peak(void)
{
    return high_water;
}

int bench_heap_failed(void)
{
    return failed;
}
