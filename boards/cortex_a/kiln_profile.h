/* kiln_profile.h: the profiling marker of Kiln's AArch64 (Cortex-A) executables (`kiln profile`).
 *
 * Forced into the build of the generated code and the harness (-include) so that
 * KILN_PROFILE_MARK, empty by default, becomes one marker instruction before and after each
 * inference and after each kernel call. The marker is the A64 hint 0xD5032FFF ("hint #127"),
 * unallocated, so every Armv8-A core (and QEMU) executes it as a NOP; the counting plugin
 * (codegen/verify/plugin/insn_count.c) records the instructions executed each time one runs.
 * The "memory" clobber keeps the kernels' loads and stores on their side of the marker. */
#ifndef KILN_PROFILE_H
#define KILN_PROFILE_H

#define KILN_PROFILE_MARK(call) __asm__ volatile("hint #127" : : : "memory")

#endif /* KILN_PROFILE_H */
