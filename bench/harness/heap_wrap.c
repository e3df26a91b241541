/* Heap accounting of the host driver: the model's objects are linked with
 * -Wl,--wrap=malloc,--wrap=free,--wrap=calloc,--wrap=realloc, so their calls land here. Each
 * block carries its requested size in a header; the peak of live requested bytes is kept. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void __wrap_free(void *p);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t n);
size_t bench_heap_peak(void);

#define HEADER 16u

static size_t live;
static size_t peak;

void *__wrap_malloc(size_t n)
{
    unsigned char *block = __real_malloc(n + HEADER);
    if (block == NULL) {
        return NULL;
    }
    memcpy(block, &n, sizeof n);
    live += n;
    if (live > peak) {
        peak = live;
    }
    return block + HEADER;
}

void __wrap_free(void *p)
{
    size_t n;
    unsigned char *block;
    if (p == NULL) {
        return;
    }
    block = (unsigned char *)p - HEADER;
    memcpy(&n, block, sizeof n);
    live -= n;
    __real_free(block);
}

void *__wrap_calloc(size_t count, size_t size)
{
    void *p;
    if (size != 0 && count > (size_t)-1 / size) {
        return NULL;
    }
    p = __wrap_malloc(count * size);
    if (p != NULL) {
        memset(p, 0, count * size);
    }
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    size_t old;
    void *q;
    if (p == NULL) {
        return __wrap_malloc(n);
    }
    memcpy(&old, (unsigned char *)p - HEADER, sizeof old);
    q = __wrap_malloc(n);
    if (q != NULL) {
        memcpy(q, p, old < n ? old : n);
        __wrap_free(p);
    }
    return q;
}

size_t bench_heap_peak(void)
{
    return peak;
}
