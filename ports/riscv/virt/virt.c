/* The virt machine's devices for the example firmware: UART, machine timer, test device,
 * the release of the secondary harts (virt.h). */
#include "virt.h"

#include <stddef.h>

extern uint32_t virt_go;
extern char __stacks_low[], __stacks_top[];
extern char VIRT_STACK_SIZE[];

void virt_release(void)
{
    __atomic_store_n(&virt_go, 1u, __ATOMIC_RELEASE);
}

uint32_t virt_stack_size(void)
{
    return (uint32_t)(uintptr_t)VIRT_STACK_SIZE;
}

uintptr_t virt_stack_low(uint32_t hart)
{
    return (uintptr_t)__stacks_top - (uintptr_t)(hart + 1u) * virt_stack_size();
}

void virt_uart_putc(char c)
{
    while ((VIRT_UART0[VIRT_UART_LSR] & VIRT_UART_LSR_THRE) == 0u) {
    }
    VIRT_UART0[VIRT_UART_THR] = (uint8_t)c;
}

void virt_uart_puts(const char *s)
{
    while (*s != '\0')
        virt_uart_putc(*s++);
}

void virt_uart_dec(uint32_t v)
{
    char buf[11];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0)
        virt_uart_putc(buf[--n]);
}

static uint64_t virt_mtime(void)
{
    uint32_t hi, lo;
    do {
        hi = VIRT_CLINT_MTIME[1];
        lo = VIRT_CLINT_MTIME[0];
    } while (hi != VIRT_CLINT_MTIME[1]);
    return ((uint64_t)hi << 32) | lo;
}

/* The compare register written high word first, at its maximum, so that no half-written
 * value in between raises a spurious interrupt (the privileged specification's advice). */
static void virt_timecmp(uint32_t hart, uint64_t when)
{
    volatile uint32_t *cmp = VIRT_CLINT_MTIMECMP(hart);
    cmp[0] = 0xFFFFFFFFu;
    cmp[1] = (uint32_t)(when >> 32);
    cmp[0] = (uint32_t)when;
}

void virt_timer_next(uint32_t hart, uint32_t ticks)
{
    volatile uint32_t *cmp = VIRT_CLINT_MTIMECMP(hart);
    uint64_t last = ((uint64_t)cmp[1] << 32) | cmp[0];
    uint64_t now = virt_mtime();
    uint64_t next = last + ticks;
    /* Behind (the first time, or a host that held the machine): from now on. */
    if (last == UINT64_MAX || next <= now)
        next = now + ticks;
    virt_timecmp(hart, next);
    __asm__ __volatile__("csrs mie, %0" ::"r"(VIRT_MIE_MTIE));
}

void virt_timer_stop(uint32_t hart)
{
    __asm__ __volatile__("csrc mie, %0" ::"r"(VIRT_MIE_MTIE));
    virt_timecmp(hart, UINT64_MAX);
}

void virt_exit(uint32_t code)
{
    *VIRT_TEST = code == 0u ? VIRT_TEST_PASS : (VIRT_TEST_FAIL | (code << 16));
    for (;;) {
    }
}

void virt_reset(void)
{
    *VIRT_TEST = VIRT_TEST_RESET;
    for (;;) {
    }
}

static uint32_t virt_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The structure block's tokens (the devicetree specification, 5.4): BEGIN_NODE 1 and its
 * name, END_NODE 2, PROP 3 (length, name offset, value), NOP 4, END 9. */
uint32_t virt_fdt_harts(const void *fdt)
{
    const uint8_t *h = fdt;
    if (h == NULL || virt_be32(h) != 0xD00DFEEDu)
        return 1u;
    const uint8_t *p = h + virt_be32(h + 8), *end = p + virt_be32(h + 36);
    uint32_t cpus = 0;
    while (p + 4 <= end) {
        uint32_t token = virt_be32(p);
        p += 4;
        if (token == 1u) {
            const char *name = (const char *)p;
            uint32_t n = 0;
            while (p + n < end && name[n] != '\0')
                n++;
            cpus += n > 4 && name[0] == 'c' && name[1] == 'p' && name[2] == 'u' && name[3] == '@';
            p += (n + 4u) & ~3u;
        } else if (token == 3u && p + 8 <= end) {
            p += 8 + ((virt_be32(p) + 3u) & ~3u);
        } else if (token == 9u) {
            break;
        }
    }
    return cpus > 0u ? cpus : 1u;
}
