/* kiln_semihost.h: Arm semihosting for Kiln's Cortex-M test firmware: console text, host
 * files (the outputs of a run) and the exit status that becomes QEMU's exit code.
 *
 * A call is `bkpt 0xab` with the operation in r0 and a pointer to its argument block in r1
 * (M-profile Thumb); the result comes back in r0. QEMU serves the calls when started with
 * `-semihosting-config enable=on,target=native`. Freestanding: needs only stdint.h. */
#ifndef KILN_SEMIHOST_H
#define KILN_SEMIHOST_H

#include <stdint.h>

#define KILN_SH_SYS_OPEN 0x01
#define KILN_SH_SYS_CLOSE 0x02
#define KILN_SH_SYS_WRITE0 0x04
#define KILN_SH_SYS_WRITE 0x05
#define KILN_SH_SYS_EXIT_EXTENDED 0x20
/* angel_SWIreason_ReportException reason "the application exited": with SYS_EXIT_EXTENDED
 * the second word of the block is the exit status the host reports. */
#define KILN_SH_ADP_STOPPED_APPLICATION_EXIT 0x20026
#define KILN_SH_MODE_WB 5 /* ISO C fopen mode "wb" in the semihosting mode table */

static inline int32_t kiln_sh_call(int32_t op, const void *arg)
{
    register int32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline uint32_t kiln_sh_strlen(const char *s)
{
    uint32_t n = 0;
    while (s[n] != '\0') {
        ++n;
    }
    return n;
}

/* Open a host file (path relative to QEMU's working directory); a handle, or -1. */
static inline int32_t kiln_sh_open(const char *path, int32_t mode)
{
    uint32_t block[3];
    block[0] = (uint32_t)(uintptr_t)path;
    block[1] = (uint32_t)mode;
    block[2] = kiln_sh_strlen(path);
    return kiln_sh_call(KILN_SH_SYS_OPEN, block);
}

/* Write `len` bytes; returns the number of bytes NOT written (0 on success). */
static inline int32_t kiln_sh_write(int32_t handle, const void *data, uint32_t len)
{
    uint32_t block[3];
    block[0] = (uint32_t)handle;
    block[1] = (uint32_t)(uintptr_t)data;
    block[2] = len;
    return kiln_sh_call(KILN_SH_SYS_WRITE, block);
}

static inline int32_t kiln_sh_close(int32_t handle)
{
    uint32_t block[1];
    block[0] = (uint32_t)handle;
    return kiln_sh_call(KILN_SH_SYS_CLOSE, block);
}

/* A NUL-terminated string on the host console (QEMU's stdout). */
static inline void kiln_sh_write0(const char *text)
{
    (void)kiln_sh_call(KILN_SH_SYS_WRITE0, text);
}

/* "label value\n" on the console, without printf. */
static inline void kiln_sh_print_u32(const char *label, uint32_t value)
{
    char buf[16];
    int32_t pos = 15;
    buf[pos] = '\0';
    buf[--pos] = '\n';
    do {
        buf[--pos] = (char)('0' + (char)(value % 10u));
        value /= 10u;
    } while (value != 0u);
    kiln_sh_write0(label);
    kiln_sh_write0(&buf[pos]);
}

/* End the program: QEMU exits with `status`. */
static inline void kiln_sh_exit(int32_t status) __attribute__((noreturn));
static inline void kiln_sh_exit(int32_t status)
{
    uint32_t block[2];
    block[0] = KILN_SH_ADP_STOPPED_APPLICATION_EXIT;
    block[1] = (uint32_t)status;
    (void)kiln_sh_call(KILN_SH_SYS_EXIT_EXTENDED, block);
    for (;;) {
    }
}

#endif /* KILN_SEMIHOST_H */
