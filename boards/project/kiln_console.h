/* kiln_console.h: text output of a Kiln board project. On bare-metal Cortex-M it is the board's
 * UART when the build defines KILN_CONSOLE_UART (make CONSOLE=uart; kiln_uart.h, set up by the
 * startup code), else semihosting (QEMU's console, or a debugger with semihosting enabled on a
 * real board); on Linux, stdout. Freestanding on Cortex-M: needs only stdint.h and
 * kiln_uart.h or kiln_semihost.h. */
#ifndef KILN_CONSOLE_H
#define KILN_CONSOLE_H

#include <stdint.h>

#if defined(__linux__)
#include <stdio.h>
static inline void kiln_console_write(const char *text)
{
    (void)fputs(text, stdout);
}
#elif defined(KILN_CONSOLE_UART)
#include "kiln_uart.h"
static inline void kiln_console_write(const char *text)
{
    kiln_uart_write(text);
}
#else
#include "kiln_semihost.h"
static inline void kiln_console_write(const char *text)
{
    kiln_sh_write0(text);
}
#endif

/* A signed decimal number, without printf. */
static inline void kiln_console_int(int32_t value)
{
    char buf[12];
    int32_t pos = 11;
    uint32_t magnitude = value < 0 ? 0u - (uint32_t)value : (uint32_t)value;
    buf[pos] = '\0';
    do {
        buf[--pos] = (char)('0' + (char)(magnitude % 10u));
        magnitude /= 10u;
    } while (magnitude != 0u);
    if (value < 0) {
        buf[--pos] = '-';
    }
    kiln_console_write(&buf[pos]);
}

#endif /* KILN_CONSOLE_H */
