/* The ITM model (itm_model.h). */
#define _GNU_SOURCE
#include "itm_model.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../ports/cortex-m/itm_regs.h"

static struct {
    pthread_mutex_t lock;
    struct itm_model_config c;
    struct itm_model_counts n;
    uint8_t *swo;
    size_t len, cap;
    uint64_t packets;          /* instrumentation packets emitted, every port */
    uint32_t writes_left;      /* until ITMENA goes off */
    uint32_t off_left;         /* reads until it comes back on */
    int full[32];              /* the port's last poll said full */
} m = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void put(const void *p, size_t n)
{
    if (m.len + n > m.cap) {
        size_t cap = m.cap ? m.cap * 2u : 65536u;
        while (cap < m.len + n)
            cap *= 2u;
        uint8_t *q = realloc(m.swo, cap);
        if (q == NULL)
            abort();
        m.swo = q;
        m.cap = cap;
    }
    memcpy(m.swo + m.len, p, n);
    m.len += n;
}

static void sync_packet(void)
{
    static const uint8_t sync[6] = {0, 0, 0, 0, 0, 0x80};
    put(sync, sizeof sync);
    m.n.syncs++;
}

/* Local timestamps, alternately format 2 (one byte, delta 1..6) and format 1 (TC = 0, a
 * delta in continuation bytes, 7 bits each). */
static void timestamp(void)
{
    if (m.n.timestamps++ % 2u == 0u) {
        uint8_t h = (uint8_t)((1u + m.packets % 6u) << 4);
        put(&h, 1);
    } else {
        uint32_t delta = 200u + (uint32_t)(m.packets % 50000u);
        uint8_t b[5] = {0xC0};
        size_t n = 1;
        do {
            b[n] = (uint8_t)(delta & 0x7Fu);
            delta >>= 7;
            if (delta != 0u)
                b[n] |= 0x80u;
            n++;
        } while (delta != 0u && n < 5u);
        put(b, n);
    }
}

void itm_model_init(const struct itm_model_config *config)
{
    pthread_mutex_lock(&m.lock);
    m.c = *config;
    memset(&m.n, 0, sizeof m.n);
    m.len = 0;
    m.packets = 0;
    m.writes_left = config->off_after_writes;
    m.off_left = 0;
    memset(m.full, 0, sizeof m.full);
    if (m.c.tcr & EMB_ITM_TCR_ITMENA)
        sync_packet(); /* what a probe sees first once the ITM runs */
    pthread_mutex_unlock(&m.lock);
}

const uint8_t *itm_model_stream(size_t *len)
{
    *len = m.len;
    return m.swo;
}

void itm_model_counts(struct itm_model_counts *out)
{
    pthread_mutex_lock(&m.lock);
    *out = m.n;
    pthread_mutex_unlock(&m.lock);
}

static int enabled(void)
{
    return (m.c.tcr & EMB_ITM_TCR_ITMENA) != 0u;
}

uint32_t emb_itm_model_read32(uint32_t addr)
{
    pthread_mutex_lock(&m.lock);
    uint32_t v = 0;
    int was_off = !enabled();
    if (addr == EMB_ITM_TCR) {
        v = m.c.tcr;
    } else if (addr == EMB_ITM_TER) {
        v = m.c.ter;
    } else if (addr >= EMB_ITM_STIM(0) && addr <= EMB_ITM_STIM(31) && (addr & 3u) == 0u) {
        uint32_t port = (addr - EMB_ITM_STIM(0)) / 4u;
        m.n.polls++;
        if (!enabled()) {
            /* A disabled ITM never says ready: a writer that only polls hangs here. */
            m.n.busy++;
            m.full[port] = 1;
        } else if (m.c.busy_every != 0u && m.n.polls % m.c.busy_every == 0u) {
            m.n.busy++;
            m.full[port] = 1;
        } else {
            m.full[port] = 0;
            v = EMB_ITM_STIM_FIFOREADY;
        }
    }
    /* Switched off for a while (a debugger that stops the trace and starts it again):
     * on again after so many reads. */
    if (was_off && m.off_left > 0u && --m.off_left == 0u) {
        m.c.tcr |= EMB_ITM_TCR_ITMENA;
        m.writes_left = m.c.off_after_writes; /* and off again later */
    }
    pthread_mutex_unlock(&m.lock);
    return v;
}

void emb_itm_model_write(uint32_t addr, uint32_t value, unsigned size)
{
    pthread_mutex_lock(&m.lock);
    uint32_t port = (addr - EMB_ITM_STIM(0)) / 4u;
    if (addr < EMB_ITM_STIM(0) || port > 31u || (addr & 3u) != 0u ||
        (size != 1u && size != 2u && size != 4u)) {
        m.n.ignored++; /* no register the writer should write */
    } else if (!enabled() || (m.c.ter & (1u << port)) == 0u) {
        m.n.ignored++;
        m.n.ignored_port[port]++;
    } else {
        if (m.full[port])
            m.n.violations++; /* the FIFO was full: the hardware would lose this */
        uint8_t pkt[5] = {(uint8_t)(port << 3 | (size == 4u ? 3u : size))};
        for (unsigned i = 0; i < size; i++)
            pkt[1 + i] = (uint8_t)(value >> (8u * i));
        put(pkt, 1u + size);
        m.n.packets[port][size == 4u ? 4 : size]++;
        m.n.bytes[port] += size;
        m.packets++;
        if (m.c.ts_every != 0u && m.packets % m.c.ts_every == 0u)
            timestamp();
        if (m.c.sync_every != 0u && m.packets % m.c.sync_every == 0u)
            sync_packet();
        if ((m.c.off_port < 0 || (uint32_t)m.c.off_port == port) && m.writes_left > 0u &&
            --m.writes_left == 0u &&
            (m.c.off_times == 0u || m.n.switched_off < m.c.off_times)) {
            m.c.tcr &= ~EMB_ITM_TCR_ITMENA;
            m.off_left = m.c.off_reads;
            m.n.switched_off++;
        }
    }
    pthread_mutex_unlock(&m.lock);
}
