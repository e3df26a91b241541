/* kiln_profile.h: the profiling marker of Kiln's Cortex-M firmware (`kiln profile`).
 *
 * Forced into the build of the generated code (-include) so that KILN_PROFILE_MARK, empty by
 * default in the generated C, becomes one marker instruction after each kernel call. The
 * marker is the 16-bit hint 0xBF70, an unallocated hint that every M-profile core executes
 * as a NOP; the counting plugin (codegen/verify/plugin/insn_count.c) records the number of
 * instructions executed each time one runs. The "memory" clobber keeps the kernels' loads
 * and stores on their side of the marker. */
#ifndef KILN_PROFILE_H
#define KILN_PROFILE_H

#define KILN_PROFILE_MARK(call) __asm__ volatile(".inst.n 0xbf70" : : : "memory")

#endif /* KILN_PROFILE_H */
