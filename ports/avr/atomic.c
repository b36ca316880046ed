/* GCC's out-of-line atomics (the libatomic interface: __atomic_load_4 and the rest) for
 * the AVR, which has neither atomic instructions nor a libatomic in avr-libc. One core:
 * masking interrupts (SREG's I bit) around the plain access makes it atomic, and every
 * memory order holds (the AVR executes in order and has no cache). */
#include <stdbool.h>
#include <stdint.h>

#include <emb_port_impl.h>

uint32_t __atomic_load_4(const volatile void *p, int order);
void __atomic_store_4(volatile void *p, uint32_t v, int order);
uint32_t __atomic_exchange_4(volatile void *p, uint32_t v, int order);
bool __atomic_compare_exchange_4(volatile void *p, void *expected, uint32_t desired, bool weak,
                                 int success, int failure);
uint32_t __atomic_fetch_add_4(volatile void *p, uint32_t v, int order);
uint32_t __atomic_fetch_sub_4(volatile void *p, uint32_t v, int order);
uint32_t __atomic_fetch_or_4(volatile void *p, uint32_t v, int order);
uint32_t __atomic_fetch_and_4(volatile void *p, uint32_t v, int order);

uint32_t __atomic_load_4(const volatile void *p, int order)
{
    (void)order;
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t v = *(const volatile uint32_t *)p;
    emb_port_irq_restore(s);
    return v;
}

void __atomic_store_4(volatile void *p, uint32_t v, int order)
{
    (void)order;
    emb_port_irq_state s = emb_port_irq_save();
    *(volatile uint32_t *)p = v;
    emb_port_irq_restore(s);
}

uint32_t __atomic_exchange_4(volatile void *p, uint32_t v, int order)
{
    (void)order;
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t old = *(volatile uint32_t *)p;
    *(volatile uint32_t *)p = v;
    emb_port_irq_restore(s);
    return old;
}

bool __atomic_compare_exchange_4(volatile void *p, void *expected, uint32_t desired, bool weak,
                                 int success, int failure)
{
    (void)weak;
    (void)success;
    (void)failure;
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t old = *(volatile uint32_t *)p;
    bool ok = old == *(uint32_t *)expected;
    if (ok)
        *(volatile uint32_t *)p = desired;
    else
        *(uint32_t *)expected = old;
    emb_port_irq_restore(s);
    return ok;
}

/* One read-modify-write with interrupts masked; op 0 add, 1 subtract, 2 or, 3 and. */
static uint32_t emb__avr_fetch_op(volatile void *p, uint32_t v, uint8_t op)
{
    emb_port_irq_state s = emb_port_irq_save();
    uint32_t old = *(volatile uint32_t *)p;
    uint32_t now = op == 0u ? old + v : op == 1u ? old - v : op == 2u ? (old | v) : (old & v);
    *(volatile uint32_t *)p = now;
    emb_port_irq_restore(s);
    return old;
}

uint32_t __atomic_fetch_add_4(volatile void *p, uint32_t v, int order)
{
    (void)order;
    return emb__avr_fetch_op(p, v, 0u);
}

uint32_t __atomic_fetch_sub_4(volatile void *p, uint32_t v, int order)
{
    (void)order;
    return emb__avr_fetch_op(p, v, 1u);
}

uint32_t __atomic_fetch_or_4(volatile void *p, uint32_t v, int order)
{
    (void)order;
    return emb__avr_fetch_op(p, v, 2u);
}

uint32_t __atomic_fetch_and_4(volatile void *p, uint32_t v, int order)
{
    (void)order;
    return emb__avr_fetch_op(p, v, 3u);
}
