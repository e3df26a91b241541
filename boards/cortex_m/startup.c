/* startup.c: reset and exception handling for Kiln's Cortex-M test firmware, on every board
 * of boards/ (one file for Armv6-M to Armv8.1-M; the linker script places it).
 *
 * Reset: enable the FPU (and Helium, which shares CP10/CP11) when the build uses one, set the
 * stack limit on Armv8-M, copy .data from flash, zero .bss, paint the stack so that its high
 * water mark can be measured, run main() and hand its status to the host via semihosting.
 * Any exception is unexpected here: it is reported on the console and ends the run with
 * KILN_EXIT_FAULT, so that a crash is an exit code and never a hang.
 *
 * A board project (`kiln build --board`) defines KILN_BOARD: before main, kiln_board_init
 * (kiln_board.c, generated from the board's data file) sets up the clock and the console
 * UART's clock and pins. With KILN_CONSOLE_UART the console is that UART and the end of the
 * run is a line "kiln-exit <status>" on it: then the core sleeps, or with KILN_EXIT_RESET (QEMU's
 * boards, run with -no-reboot) requests a system reset, which ends QEMU. No semihosting call
 * is made then, so the firmware runs on a board without a debugger attached. */
#include <stdint.h>

#if defined(KILN_BOARD)
#include "kiln_board.h"
#endif
#if defined(KILN_CONSOLE_UART)
#include "kiln_uart.h"
#else
#include "kiln_semihost.h"
#endif

#define KILN_EXIT_FAULT 4
#define KILN_STACK_PAINT 0x57a5c0deu

/* Provided by the linker script. */
extern uint32_t __data_load[];
extern uint32_t __data_start[];
extern uint32_t __data_end[];
extern uint32_t __bss_start[];
extern uint32_t __bss_end[];
extern uint32_t __stack_limit[];
extern uint32_t __stack_top[];

int main(void);
void Reset_Handler(void) __attribute__((noreturn));
void Kiln_Fault_Handler(void) __attribute__((noreturn));
uint32_t kiln_stack_high_water(void);

static void enable_fpu(void)
{
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* CPACR: full access to CP10 and CP11 (the FPU and the M-profile vector extension). */
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    *cpacr |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
}

static void console_u32(uint32_t value);

#if defined(KILN_CONSOLE_UART)
static void console_write(const char *text)
{
    kiln_uart_write(text);
}

static void kiln_exit(int32_t status) __attribute__((noreturn));
static void kiln_exit(int32_t status)
{
    console_write("kiln-exit ");
    console_u32((uint32_t)status);
    console_write("\n");
    kiln_uart_flush();
#if defined(KILN_EXIT_RESET)
    /* AIRCR: VECTKEY and SYSRESETREQ; QEMU started with -no-reboot exits. */
    *(volatile uint32_t *)0xE000ED0Cu = (0x05FAu << 16) | (1u << 2);
    __asm__ volatile("dsb" ::: "memory");
#endif
    for (;;) {
        __asm__ volatile("wfi");
    }
}
#else
static void console_write(const char *text)
{
    kiln_sh_write0(text);
}

#define kiln_exit kiln_sh_exit
#endif

static void console_u32(uint32_t value)
{
    char buf[12];
    int32_t pos = 11;
    buf[pos] = '\0';
    do {
        buf[--pos] = (char)('0' + (char)(value % 10u));
        value /= 10u;
    } while (value != 0u);
    console_write(&buf[pos]);
}

void Reset_Handler(void)
{
    uint32_t *src;
    uint32_t *dst;
    uint32_t *sp;
    enable_fpu();
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    __asm__ volatile("msr msplim, %0" : : "r"(__stack_limit));
#endif
    for (src = __data_load, dst = __data_start; dst < __data_end; ++src, ++dst) {
        *dst = *src;
    }
    for (dst = __bss_start; dst < __bss_end; ++dst) {
        *dst = 0u;
    }
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (dst = __stack_limit; dst < sp - 16; ++dst) {
        *dst = KILN_STACK_PAINT;
    }
#if defined(KILN_BOARD)
    kiln_board_init();
#endif
#if defined(KILN_CONSOLE_UART)
    kiln_uart_init();
#endif
    kiln_exit(main());
}

/* Bytes of stack used so far: from the top down to the deepest word that lost its paint. */
uint32_t kiln_stack_high_water(void)
{
    const uint32_t *p = __stack_limit;
    while (p < __stack_top && *p == KILN_STACK_PAINT) {
        ++p;
    }
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

void Kiln_Fault_Handler(void)
{
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    console_write("kiln firmware: unexpected exception ");
    console_u32(ipsr & 0x1FFu);
    console_write("\n");
    kiln_exit(KILN_EXIT_FAULT);
}

/* The system exceptions of the vector table; external interrupts are never enabled. */
__attribute__((section(".vectors"), used)) static void (*const kiln_vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top, /* initial main stack pointer */
    Reset_Handler,
    Kiln_Fault_Handler, /* NMI */
    Kiln_Fault_Handler, /* HardFault */
    Kiln_Fault_Handler, /* MemManage */
    Kiln_Fault_Handler, /* BusFault */
    Kiln_Fault_Handler, /* UsageFault */
    Kiln_Fault_Handler, /* SecureFault (Armv8-M) */
    0, 0, 0,
    Kiln_Fault_Handler, /* SVCall */
    Kiln_Fault_Handler, /* DebugMonitor */
    0,
    Kiln_Fault_Handler, /* PendSV */
    Kiln_Fault_Handler, /* SysTick */
};
