/* Board support for the Arm MPS2 boards under QEMU (mps2-an385/386/500): start-up, the
 * CMSDK UART0 console, SysTick, and an exit through semihosting. Small on purpose: each
 * firmware in examples/ and tests/ links startup.c and uses what it needs. */
#ifndef EMB_MPS2_H
#define EMB_MPS2_H

#include <stdint.h>

/* Writes text to UART0 (QEMU's standard output). */
void mps2_uart_init(void);
void mps2_uart_putc(char c);
void mps2_uart_puts(const char *s);
void mps2_uart_hex32(uint32_t v);

/* SysTick as a free-running 24-bit down-counter at the core clock (25 MHz on QEMU). */
void mps2_systick_start(void);
uint32_t mps2_systick_value(void);

/* Ends the QEMU run with `code` (semihosting SYS_EXIT_EXTENDED; needs
 * -semihosting-config enable=on,target=native). */
void mps2_exit(int code) __attribute__((noreturn));

/* The application's entry, called by the reset handler once .data and .bss are ready. */
int main(void);

#endif /* EMB_MPS2_H */
