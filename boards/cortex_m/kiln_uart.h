/* kiln_uart.h: the console UART of a Kiln board project, polled, transmit only. The board's data
 * file ([console] of boards/<board>.toml) names the peripheral; Kiln writes its kind, base
 * address and divisor into kiln_board.h (KILN_UART_<KIND>, KILN_UART_BASE, KILN_UART_DIVISOR,
 * KILN_UART_TX_PIN). The clock and the pins are set up before by kiln_board_init (kiln_board.c).
 *
 * Kinds: the Arm CMSDK APB UART (MPS2/MPS3), the STM32 USART with the F1/F2/F4 register map
 * (SR, DR, BRR, CR1), the STM32 USART/LPUART with the F0/F7/L4/G4/H7 map (CR1, BRR, ISR, TDR),
 * the Nordic nRF51/nRF52 UART and the Arm PrimeCell PL011 (RP2040, Stellaris). Freestanding:
 * needs only stdint.h. */
#ifndef KILN_UART_H
#define KILN_UART_H

#include <stdint.h>

#include "kiln_board.h"

#define KILN_UART_REG(offset) (*(volatile uint32_t *)(uintptr_t)(KILN_UART_BASE + (offset)))

#if defined(KILN_UART_CMSDK_UART)
/* DATA 0x00, STATE 0x04 (bit 0 TX buffer full), CTRL 0x08 (bit 0 TX enable), BAUDDIV 0x10. */
static inline void kiln_uart_init(void)
{
    KILN_UART_REG(0x10u) = KILN_UART_DIVISOR;
    KILN_UART_REG(0x08u) = 1u;
}
static inline void kiln_uart_putc(char c)
{
    while ((KILN_UART_REG(0x04u) & 1u) != 0u) {
    }
    KILN_UART_REG(0x00u) = (uint8_t)c;
}
static inline void kiln_uart_flush(void)
{
    while ((KILN_UART_REG(0x04u) & 1u) != 0u) {
    }
}
#elif defined(KILN_UART_STM32_USART)
/* SR 0x00 (bit 7 TXE, bit 6 TC), DR 0x04, BRR 0x08, CR1 0x0C (bit 13 UE, bit 3 TE). */
static inline void kiln_uart_init(void)
{
    KILN_UART_REG(0x0Cu) = 0u;
    KILN_UART_REG(0x08u) = KILN_UART_DIVISOR;
    KILN_UART_REG(0x0Cu) = (1u << 13) | (1u << 3);
}
static inline void kiln_uart_putc(char c)
{
    while ((KILN_UART_REG(0x00u) & (1u << 7)) == 0u) {
    }
    KILN_UART_REG(0x04u) = (uint8_t)c;
}
static inline void kiln_uart_flush(void)
{
    while ((KILN_UART_REG(0x00u) & (1u << 6)) == 0u) {
    }
}
#elif defined(KILN_UART_STM32_USART_V2) || defined(KILN_UART_STM32_LPUART)
/* CR1 0x00 (bit 0 UE, bit 3 TE), BRR 0x0C, ISR 0x1C (bit 7 TXE, bit 6 TC), TDR 0x28; the
 * LPUART has the same map, its BRR is 256 x clock / baud (Kiln computes the divisor). */
static inline void kiln_uart_init(void)
{
    KILN_UART_REG(0x00u) = 0u;
    KILN_UART_REG(0x0Cu) = KILN_UART_DIVISOR;
    KILN_UART_REG(0x00u) = (1u << 3) | 1u;
}
static inline void kiln_uart_putc(char c)
{
    while ((KILN_UART_REG(0x1Cu) & (1u << 7)) == 0u) {
    }
    KILN_UART_REG(0x28u) = (uint8_t)c;
}
static inline void kiln_uart_flush(void)
{
    while ((KILN_UART_REG(0x1Cu) & (1u << 6)) == 0u) {
    }
}
#elif defined(KILN_UART_NRF_UART)
/* TASKS_STARTTX 0x008, EVENTS_TXDRDY 0x11C, ENABLE 0x500 (4: UART), PSELTXD 0x50C, TXD 0x51C,
 * BAUDRATE 0x524 (the data sheet's table value, not a divisor). */
static inline void kiln_uart_init(void)
{
    KILN_UART_REG(0x50Cu) = KILN_UART_TX_PIN;
    KILN_UART_REG(0x524u) = KILN_UART_DIVISOR;
    KILN_UART_REG(0x500u) = 4u;
    KILN_UART_REG(0x008u) = 1u;
}
static inline void kiln_uart_putc(char c)
{
    KILN_UART_REG(0x11Cu) = 0u;
    KILN_UART_REG(0x51Cu) = (uint8_t)c;
    while (KILN_UART_REG(0x11Cu) == 0u) {
    }
}
static inline void kiln_uart_flush(void)
{
}
#elif defined(KILN_UART_PL011)
/* UARTDR 0x000, UARTFR 0x018 (bit 5 TXFF, bit 3 BUSY), UARTIBRD 0x024, UARTFBRD 0x028, UARTLCR_H
 * 0x02C (8 bits, FIFOs on; writing it latches the divisors), UARTCR 0x030 (UARTEN, TXE). The
 * divisor is IBRD << 6 | FBRD. */
static inline void kiln_uart_init(void)
{
    KILN_UART_REG(0x030u) = 0u;
    KILN_UART_REG(0x024u) = KILN_UART_DIVISOR >> 6;
    KILN_UART_REG(0x028u) = KILN_UART_DIVISOR & 0x3Fu;
    KILN_UART_REG(0x02Cu) = (3u << 5) | (1u << 4);
    KILN_UART_REG(0x030u) = (1u << 8) | 1u;
}
static inline void kiln_uart_putc(char c)
{
    while ((KILN_UART_REG(0x018u) & (1u << 5)) != 0u) {
    }
    KILN_UART_REG(0x000u) = (uint8_t)c;
}
static inline void kiln_uart_flush(void)
{
    while ((KILN_UART_REG(0x018u) & (1u << 3)) != 0u) {
    }
}
#else
#error "kiln_board.h names no UART kind this header knows"
#endif

/* A NUL-terminated string; "\n" goes out as "\r\n" for terminal programs. */
static inline void kiln_uart_write(const char *text)
{
    for (; *text != '\0'; ++text) {
        if (*text == '\n') {
            kiln_uart_putc('\r');
        }
        kiln_uart_putc(*text);
    }
}

#endif /* KILN_UART_H */
