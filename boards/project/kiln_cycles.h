/* kiln_cycles.h: cycles per kernel call on a real board, from the core's cycle counter (DWT
 * CYCCNT), for `make PROFILE=1`. Forced into every source of that build (-include) so that the
 * generated code's KILN_PROFILE_MARK(call), empty by default, stores the cycles since the
 * previous mark; main.c prints them after the run. The counter exists on Armv7-M and Armv8-M
 * Mainline (Cortex-M3, M4, M7, M33, M55), not on Armv6-M (M0, M0+). QEMU does not model the DWT:
 * there the counter reads 0 and every count is 0. Freestanding: needs only stdint.h. */
#ifndef KILN_CYCLES_H
#define KILN_CYCLES_H

#include <stdint.h>

#if !defined(__ARM_ARCH_7M__) && !defined(__ARM_ARCH_7EM__) && !defined(__ARM_ARCH_8M_MAIN__) && \
    !defined(__ARM_ARCH_8_1M_MAIN__)
#error "make PROFILE=1 needs the DWT cycle counter of Armv7-M or Armv8-M Mainline; this core has none"
#endif

#define KILN_DEMCR (*(volatile uint32_t *)0xE000EDFCu)     /* bit 24 TRCENA: DWT on */
#define KILN_DWT_CTRL (*(volatile uint32_t *)0xE0001000u)  /* bit 0 CYCCNTENA */
#define KILN_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define KILN_DWT_LAR (*(volatile uint32_t *)0xE0001FB0u)   /* lock access (Cortex-M7): 0xC5ACCE55 unlocks */

extern uint32_t kiln_cycles[];   /* one per kernel call, defined by main.c */
extern uint32_t kiln_cycles_last; /* the counter at the previous mark */

static inline void kiln_cycles_start(void)
{
    KILN_DEMCR |= 1u << 24;
#if defined(__ARM_ARCH_7EM__)
    KILN_DWT_LAR = 0xC5ACCE55u;
#endif
    KILN_DWT_CYCCNT = 0u;
    KILN_DWT_CTRL |= 1u;
    kiln_cycles_last = KILN_DWT_CYCCNT;
}

/* After kernel call `call` (the harness's own marks pass -1): the cycles it took. */
static inline void kiln_cycles_mark(int call)
{
    uint32_t now = KILN_DWT_CYCCNT;
    if (call >= 0) {
        kiln_cycles[call] = now - kiln_cycles_last;
    }
    kiln_cycles_last = now;
}

#define KILN_PROFILE_MARK(call) kiln_cycles_mark(call)

#endif /* KILN_CYCLES_H */
