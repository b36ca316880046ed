/* Start-up for the MPS2 boards: the vector table, the reset handler (copy .data, zero
 * .bss, call main), and UART0 for a line of text. The four fault handlers and SysTick's
 * come from the library's Cortex-M port (HardFault_Handler ... UsageFault_Handler write a
 * crash record into the retained region and reset; SysTick_Handler extends the clock
 * when SysTick is the trace clock); every other exception spins where a debugger finds it. */
#include <stdint.h>
#include <string.h>

#include "board.h"

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);

void reset_handler(void) __attribute__((noreturn));
void HardFault_Handler(void);
void MemManage_Handler(void);
void BusFault_Handler(void);
void UsageFault_Handler(void);
void SysTick_Handler(void);

static void unhandled(void)
{
    for (;;)
        ;
}

/* Exceptions 1..15, then 32 external interrupts. */
__attribute__((section(".vectors"), used)) static void (*const vectors[48])(void) = {
    (void (*)(void))&__stack_top, reset_handler, unhandled, HardFault_Handler,
    MemManage_Handler, BusFault_Handler, UsageFault_Handler, 0, 0, 0, 0, unhandled,
    unhandled, 0, unhandled, SysTick_Handler,
    [16 ... 47] = unhandled,
};

void reset_handler(void)
{
    memcpy(&__data_start, &__data_load, (size_t)((char *)&__data_end - (char *)&__data_start));
    memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
    (void)main();
    for (;;)
        __asm__ __volatile__("wfi");
}

#define UART0_DATA (*(volatile uint32_t *)0x40004000u)
#define UART0_STATE (*(volatile uint32_t *)0x40004004u)
#define UART0_CTRL (*(volatile uint32_t *)0x40004008u)
#define UART0_BAUDDIV (*(volatile uint32_t *)0x40004010u)

void board_puts(const char *s)
{
    UART0_BAUDDIV = 16u;
    UART0_CTRL = 1u; /* transmit enable */
    for (; *s; s++) {
        while (UART0_STATE & 1u) /* transmit buffer full */
            ;
        UART0_DATA = (uint32_t)(unsigned char)*s;
    }
}
