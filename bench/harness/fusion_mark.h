/* fusion_mark.h: per-kernel instruction counts on the host (bench/fusion.py).
 *
 * Forced into the build of the generated code (-include) so that KILN_PROFILE_MARK, empty by
 * default, calls a function that is never inlined after each kernel call; callgrind started
 * with --dump-before=kiln_bench_mark writes one profile part per call, whose total is the
 * instructions since the previous mark. */
#ifndef FUSION_MARK_H
#define FUSION_MARK_H

__attribute__((noinline, unused)) static void kiln_bench_mark(int call)
{
    __asm__ volatile("" : : "r"(call) : "memory");
}

#define KILN_PROFILE_MARK(call) kiln_bench_mark(call)

#endif /* FUSION_MARK_H */
