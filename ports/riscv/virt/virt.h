/* QEMU's RISC-V `virt` machine as the example firmware and the tests use it: the 16550
 * UART, the CLINT (software interrupts, the machine timer of each hart), the SiFive test
 * device that ends or resets the run (QEMU 7.2, hw/riscv/virt.c memory map). */
#ifndef EMB_VIRT_H
#define EMB_VIRT_H

#include <stdint.h>

#define VIRT_UART0 ((volatile uint8_t *)0x10000000u)
#define VIRT_UART_THR 0u
#define VIRT_UART_LSR 5u
#define VIRT_UART_LSR_THRE 0x20u

#define VIRT_CLINT_MSIP ((volatile uint32_t *)0x02000000u) /* one word per hart */
#define VIRT_CLINT_MTIMECMP(h) ((volatile uint32_t *)(0x02004000u + 8u * (h)))
#define VIRT_CLINT_MTIME ((volatile uint32_t *)0x0200BFF8u)
#define VIRT_TIMEBASE_HZ 10000000u /* the time CSR and mtime */

#define VIRT_TEST ((volatile uint32_t *)0x00100000u)
#define VIRT_TEST_PASS 0x5555u
#define VIRT_TEST_FAIL 0x3333u /* | exit code << 16 */
#define VIRT_TEST_RESET 0x7777u

/* mie / mip bits. */
#define VIRT_MIE_MSIE (1u << 3)
#define VIRT_MIE_MTIE (1u << 7)
#define VIRT_IRQ_MTIMER 7u

/* Per hart: the start-up code (startup.S) gives each hart below VIRT_HARTS a stack of
 * VIRT_STACK_SIZE bytes (virt.ld), tp at its emb_rv_harts entry, mtvec at the port's trap
 * entry; hart 0 zeroes .bss and calls virt_main() with the device tree QEMU passed; the
 * others wait for virt_release() and call virt_hart_main(hart). A hart at or above
 * VIRT_HARTS parks. */
void virt_main(const void *fdt);
/* The harts the device tree lists (its /cpus/cpu@N nodes); 1 when it is unreadable. */
uint32_t virt_fdt_harts(const void *fdt);
void virt_hart_main(uint32_t hart);
void virt_release(void);
uintptr_t virt_stack_low(uint32_t hart);
uint32_t virt_stack_size(void);

void virt_uart_putc(char c);
void virt_uart_puts(const char *s);
void virt_uart_dec(uint32_t v);

/* The machine timer of the calling hart: the next interrupt `ticks` of the time base
 * after the last one (or now, the first time); 0 stops it. */
void virt_timer_next(uint32_t hart, uint32_t ticks);
void virt_timer_stop(uint32_t hart);

void virt_exit(uint32_t code) __attribute__((noreturn));
void virt_reset(void) __attribute__((noreturn));

#endif /* EMB_VIRT_H */
