/* Start-up for the MPS2 boards: the vector table, the reset handler that copies .data
 * and zeroes .bss before main(), a fault handler that reports and exits, UART0, SysTick
 * and semihosting exit. */
#include "mps2.h"

#include <string.h>

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;

void mps2_reset(void) __attribute__((noreturn));
void mps2_fault(void);
void mps2_default(void);

/* Exceptions 1..15 and 32 external interrupts; unused ones spin in mps2_default. */
__attribute__((section(".vectors"), used)) static void (*const mps2_vectors[48])(void) = {
    (void (*)(void))&__stack_top, mps2_reset, mps2_fault, mps2_fault, mps2_fault, mps2_fault,
    mps2_fault, 0, 0, 0, 0, mps2_default, mps2_default, 0, mps2_default, mps2_default,
    [16 ... 47] = mps2_default,
};

void mps2_reset(void)
{
    memcpy(&__data_start, &__data_load, (size_t)((char *)&__data_end - (char *)&__data_start));
    memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
    mps2_exit(main());
}

void mps2_fault(void)
{
    mps2_uart_puts("mps2: fault\n");
    mps2_exit(3);
}

void mps2_default(void)
{
    for (;;)
        ;
}

/* ---- CMSDK UART0 ---- */
#define UART0_DATA (*(volatile uint32_t *)0x40004000u)
#define UART0_STATE (*(volatile uint32_t *)0x40004004u)
#define UART0_CTRL (*(volatile uint32_t *)0x40004008u)
#define UART0_BAUDDIV (*(volatile uint32_t *)0x40004010u)

void mps2_uart_init(void)
{
    UART0_BAUDDIV = 16u;
    UART0_CTRL = 1u; /* transmit enable */
}

void mps2_uart_putc(char c)
{
    while (UART0_STATE & 1u) /* transmit buffer full */
        ;
    UART0_DATA = (uint32_t)(unsigned char)c;
}

void mps2_uart_puts(const char *s)
{
    while (*s)
        mps2_uart_putc(*s++);
}

void mps2_uart_hex32(uint32_t v)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 28; i >= 0; i -= 4)
        mps2_uart_putc(hex[(v >> i) & 0xFu]);
}

/* ---- SysTick ---- */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

void mps2_systick_start(void)
{
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0u;
    SYST_CSR = 5u; /* enable, core clock, no interrupt */
}

uint32_t mps2_systick_value(void)
{
    return SYST_CVR;
}

/* ---- Semihosting ---- */
void mps2_exit(int code)
{
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit and the code, any value. */
    static uint32_t block[2];
    block[0] = 0x20026u;
    block[1] = (uint32_t)code;
    register uint32_t r0 __asm__("r0") = 0x20u;
    register uint32_t *r1 __asm__("r1") = block;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    for (;;)
        ;
}
