/* Start-up for the MPS2 boards: the vector table, the reset handler that copies .data
 * and zeroes .bss before main(), weak default handlers, UART0, the CMSDK timers, SysTick
 * and semihosting exit. */
#include "mps2.h"

#include <string.h>

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end;
extern uint32_t __stack_low, __stack_top;

void mps2_reset(void) __attribute__((noreturn));
void mps2_fault(void);
void mps2_default(void);

/* Weak defaults: a fault without the Cortex-M port's handlers reports and exits; any other
 * exception or interrupt nobody handles spins, where a debugger finds it. */
#define MPS2_WEAK(name, fallback) void name(void) __attribute__((weak, alias(#fallback)))
MPS2_WEAK(NMI_Handler, mps2_default);
MPS2_WEAK(HardFault_Handler, mps2_fault);
MPS2_WEAK(MemManage_Handler, mps2_fault);
MPS2_WEAK(BusFault_Handler, mps2_fault);
MPS2_WEAK(UsageFault_Handler, mps2_fault);
MPS2_WEAK(SVC_Handler, mps2_default);
MPS2_WEAK(DebugMon_Handler, mps2_default);
MPS2_WEAK(PendSV_Handler, mps2_default);
MPS2_WEAK(SysTick_Handler, mps2_default);
MPS2_WEAK(TIMER0_Handler, mps2_default);
MPS2_WEAK(TIMER1_Handler, mps2_default);
MPS2_WEAK(DUALTIMER_Handler, mps2_default);

/* Exceptions 1..15 and 32 external interrupts. */
__attribute__((section(".vectors"), used)) static void (*const mps2_vectors[48])(void) = {
    (void (*)(void))&__stack_top, mps2_reset, NMI_Handler, HardFault_Handler, MemManage_Handler,
    BusFault_Handler, UsageFault_Handler, 0, 0, 0, 0, SVC_Handler, DebugMon_Handler, 0,
    PendSV_Handler, SysTick_Handler,
    [16 ... 23] = mps2_default,
    [16 + 8] = TIMER0_Handler,
    [16 + 9] = TIMER1_Handler,
    [16 + 10] = DUALTIMER_Handler,
    [27 ... 47] = mps2_default,
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

uintptr_t mps2_stack_low(void)
{
    return (uintptr_t)&__stack_low;
}

uint32_t mps2_stack_size(void)
{
    return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)&__stack_low);
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

void mps2_uart_dec(uint32_t v)
{
    char buf[11];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0)
        mps2_uart_putc(buf[--n]);
}

#define UART_BASE(n) (0x40004000u + 0x1000u * (n))
#define UART_DATA(n) (*(volatile uint32_t *)(UART_BASE(n) + 0x00u))
#define UART_STATE(n) (*(volatile uint32_t *)(UART_BASE(n) + 0x04u))
#define UART_CTRL(n) (*(volatile uint32_t *)(UART_BASE(n) + 0x08u))
#define UART_BAUDDIV(n) (*(volatile uint32_t *)(UART_BASE(n) + 0x10u))

void mps2_uart_open(unsigned n)
{
    UART_BAUDDIV(n) = 16u;
    UART_CTRL(n) = 3u; /* transmit and receive enable */
}

void mps2_uart_write(unsigned n, const uint8_t *bytes, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        while (UART_STATE(n) & 1u) /* transmit buffer full */
            ;
        UART_DATA(n) = bytes[i];
    }
}

int mps2_uart_getc(unsigned n)
{
    if ((UART_STATE(n) & 2u) == 0u) /* receive buffer empty */
        return -1;
    return (int)(UART_DATA(n) & 0xFFu);
}

/* ---- CMSDK APB timers ---- */
#define TIMER_BASE(t) (0x40000000u + 0x1000u * (t))
#define TIMER_CTRL(t) (*(volatile uint32_t *)(TIMER_BASE(t) + 0x00u))
#define TIMER_VALUE(t) (*(volatile uint32_t *)(TIMER_BASE(t) + 0x04u))
#define TIMER_RELOAD(t) (*(volatile uint32_t *)(TIMER_BASE(t) + 0x08u))
#define TIMER_INTCLEAR(t) (*(volatile uint32_t *)(TIMER_BASE(t) + 0x0Cu))
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)

void mps2_timer_start(unsigned timer, uint32_t reload)
{
    TIMER_CTRL(timer) = 0u;
    TIMER_RELOAD(timer) = reload;
    TIMER_VALUE(timer) = reload;
    TIMER_INTCLEAR(timer) = 1u;
    NVIC_ISER0 = 1u << (MPS2_TIMER0_IRQ + timer);
    TIMER_CTRL(timer) = 1u | 8u; /* enable, interrupt enable */
}

void mps2_timer_stop(unsigned timer)
{
    TIMER_CTRL(timer) = 0u;
    NVIC_ICER0 = 1u << (MPS2_TIMER0_IRQ + timer);
    TIMER_INTCLEAR(timer) = 1u;
}

void mps2_timer_clear(unsigned timer)
{
    TIMER_INTCLEAR(timer) = 1u;
}

uint32_t mps2_timer_value(unsigned timer)
{
    return TIMER_VALUE(timer);
}

void mps2_timer_set_value(unsigned timer, uint32_t value)
{
    TIMER_VALUE(timer) = value;
}

int mps2_timer_pending(unsigned timer)
{
    return (int)(TIMER_INTCLEAR(timer) & 1u); /* read: INTSTATUS */
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
