/* Board support for the Arm MPS2 boards under QEMU (mps2-an385/386/500): start-up and the
 * vector table, the CMSDK UART0 console and timers, SysTick, and an exit through
 * semihosting. Small on purpose: each firmware in examples/ and tests/ links startup.c
 * and uses what it needs; no vendor SDK.
 *
 * The vector table names its handlers as CMSIS does (HardFault_Handler, SysTick_Handler,
 * ...) and defines each as a weak default, so a firmware or the Cortex-M port overrides
 * one by defining it: the port defines the four fault handlers and SysTick_Handler. The
 * external interrupts this board support names are TIMER0_Handler (IRQ 8),
 * TIMER1_Handler (IRQ 9) and DUALTIMER_Handler (IRQ 10). */
#ifndef EMB_MPS2_H
#define EMB_MPS2_H

#include <stdint.h>

/* The core clock of the MPS2 FPGA images QEMU models. */
#define MPS2_CPU_HZ 25000000u

/* Writes text to UART0 (QEMU's standard output). */
void mps2_uart_init(void);
void mps2_uart_putc(char c);
void mps2_uart_puts(const char *s);
void mps2_uart_hex32(uint32_t v);
void mps2_uart_dec(uint32_t v);

/* CMSDK UART `n` (0 to 2; QEMU connects its n-th -serial option) for binary data:
 * transmit and receive enabled. mps2_uart_write() waits while the transmit buffer is full
 * (so only a consumer, never a producer, calls it); mps2_uart_getc() returns a received
 * byte or -1. */
void mps2_uart_open(unsigned n);
void mps2_uart_write(unsigned n, const uint8_t *bytes, uint32_t len);
int mps2_uart_getc(unsigned n);

/* SysTick as a free-running 24-bit down-counter at the core clock, no interrupt (for
 * firmware that does not use the Cortex-M port's clock). */
void mps2_systick_start(void);
uint32_t mps2_systick_value(void);

/* CMSDK APB timer `timer` (0 or 1): interrupt every `reload` + 1 core cycles, enabled at
 * the NVIC; its handler calls mps2_timer_clear(). */
#define MPS2_TIMER0_IRQ 8u
#define MPS2_TIMER1_IRQ 9u
void mps2_timer_start(unsigned timer, uint32_t reload);
void mps2_timer_stop(unsigned timer);
void mps2_timer_clear(unsigned timer);
/* The count down to the timer's next interrupt (core cycles), setting it (the reload
 * value stays: a tickless kernel stretches one period), and whether its interrupt is
 * raised and not yet cleared. */
uint32_t mps2_timer_value(unsigned timer);
void mps2_timer_set_value(unsigned timer, uint32_t value);
int mps2_timer_pending(unsigned timer);

/* The lowest address and the size of the main stack (the linker script's .stack). */
uintptr_t mps2_stack_low(void);
uint32_t mps2_stack_size(void);

/* Ends the QEMU run with `code` (semihosting SYS_EXIT_EXTENDED; needs
 * -semihosting-config enable=on,target=native). */
void mps2_exit(int code) __attribute__((noreturn));

/* The application's entry, called by the reset handler once .data and .bss are ready. */
int main(void);

#endif /* EMB_MPS2_H */
