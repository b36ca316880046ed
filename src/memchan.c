/* The memory channel (docs/formats/memchan.md). */
#include <emb/memchan.h>

#include <string.h>

#include <emb/frame.h>
#include <emb/port.h>
#include <emb/shell.h>

#if CONFIG_EMB_MEMCHAN

EMB_USED struct emb_memchan emb_memchan;

#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
/* The same block under the name SEGGER's tools look it up by (J-Link's RTT viewer, a
 * J-Link GDB server's RTT, pyOCD's `rtt`), and that OpenOCD's `rtt setup` is given from
 * the map file: an alias, not a copy (docs/live.md). The assembler name is set apart
 * because a C identifier may not begin with an underscore and a capital. */
extern struct emb_memchan emb_memchan_segger_rtt __asm__("_SEGGER_RTT")
    __attribute__((alias("emb_memchan"), used));

static uint32_t emb__drops;
#define EMB__DROPS emb__drops
#define EMB__BUF(r) ((r)->buf)
#else
#define EMB__DROPS emb_memchan.drops
#define EMB__BUF(r) ((uint8_t *)(uintptr_t)(r)->buf)
#endif

/* The other side reads and writes the block through a probe: loads of what it writes are
 * acquires, stores of what we publish are releases. */
static inline uint32_t emb__load(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void emb__store(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void emb__setup(struct emb_memchan_ring *r, const struct emb_memchan_buffer *b)
{
    if (b == NULL || b->buf == NULL || b->size < 16u)
        return;
#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
    r->name = b->name;
    r->buf = b->buf;
#else
    r->name = (uint64_t)(uintptr_t)b->name;
    r->buf = (uint64_t)(uintptr_t)b->buf;
#endif
    r->size = b->size;
    r->flags = EMB_MEMCHAN_MODE_SKIP | EMB_MEMCHAN_FLAG_FRAMED;
}

emb_status emb_memchan_init(const struct emb_memchan_buffer *up, unsigned n_up,
                            const struct emb_memchan_buffer *down, unsigned n_down)
{
    if (n_up > CONFIG_EMB_MEMCHAN_UP || n_down > CONFIG_EMB_MEMCHAN_DOWN ||
        (n_up > 0u && up == NULL) || (n_down > 0u && down == NULL))
        return EMB_E_INVALID;
    emb_port_irq_state s = emb_port_irq_save();
    struct emb_memchan *cb = &emb_memchan;
#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
    /* Unpublish first: a tool that finds the old identifier must not read half-new rings. */
    __atomic_store_n(&cb->id[0], '\0', __ATOMIC_RELEASE);
    memset(cb, 0, sizeof *cb);
    cb->max_up = CONFIG_EMB_MEMCHAN_UP;
    cb->max_down = CONFIG_EMB_MEMCHAN_DOWN;
#else
    uint32_t generation = cb->generation;
    __atomic_store_n(&cb->magic, 0u, __ATOMIC_RELEASE);
    memset(cb, 0, sizeof *cb);
    cb->version = EMB_MEMCHAN_VERSION;
    cb->header_size = (uint16_t)offsetof(struct emb_memchan, up);
    cb->up_count = CONFIG_EMB_MEMCHAN_UP;
    cb->down_count = CONFIG_EMB_MEMCHAN_DOWN;
    cb->pointer_size = (uint8_t)sizeof(void *);
    cb->ring_size = (uint8_t)sizeof(struct emb_memchan_ring);
    cb->generation = generation + 1u;
#endif
    for (unsigned i = 0; i < n_up; i++)
        emb__setup(&cb->up[i], &up[i]);
    for (unsigned i = 0; i < n_down; i++)
        emb__setup(&cb->down[i], &down[i]);
    /* Published last, after everything it describes: the release stores below order
     * every write above before them (a barrier on the target: dmb on Cortex-M). */
#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
    /* Back to front: the identifier is whole only once its first byte is written. */
    static const char id[] = EMB_MEMCHAN_RTT_ID;
    for (size_t i = sizeof id - 1u; i > 0u; i--)
        __atomic_store_n(&cb->id[i - 1u], id[i - 1u], __ATOMIC_RELEASE);
#else
    __atomic_store_n(&cb->magic, EMB_MEMCHAN_MAGIC, __ATOMIC_RELEASE);
#endif
    emb_port_irq_restore(s);
    return EMB_OK;
}

static uint32_t emb__space(const struct emb_memchan_ring *r)
{
    if (r->size == 0u)
        return 0;
    uint32_t rd = emb__load(&r->rd);
    uint32_t wr = r->wr;
    if (rd >= r->size)
        return 0; /* the host wrote nonsense: write nothing until it stops */
    return rd > wr ? rd - wr - 1u : r->size - (wr - rd) - 1u;
}

size_t emb_memchan_space(unsigned ring)
{
    return ring < CONFIG_EMB_MEMCHAN_UP ? emb__space(&emb_memchan.up[ring]) : 0u;
}

/* Copies into the ring at `*wr` without publishing. */
static void emb__put(struct emb_memchan_ring *r, uint32_t *wr, const uint8_t *p, size_t n)
{
    uint8_t *buf = EMB__BUF(r);
    while (n > 0u) {
        size_t chunk = r->size - *wr;
        if (chunk > n)
            chunk = n;
        memcpy(buf + *wr, p, chunk);
        p += chunk;
        n -= chunk;
        *wr += (uint32_t)chunk;
        if (*wr == r->size)
            *wr = 0;
    }
}

size_t emb_memchan_write(unsigned ring, const void *data, size_t len)
{
    if (ring >= CONFIG_EMB_MEMCHAN_UP || len == 0u)
        return 0;
    struct emb_memchan_ring *r = &emb_memchan.up[ring];
    emb_port_irq_state s = emb_port_irq_save();
    size_t done = 0;
    if (emb__space(r) >= len) {
        uint32_t wr = r->wr;
        emb__put(r, &wr, (const uint8_t *)data, len);
        emb__store(&r->wr, wr);
        done = len;
    } else {
        EMB__DROPS++;
    }
    emb_port_irq_restore(s);
    return done;
}

struct emb__frame_sink {
    struct emb_memchan_ring *r;
    uint32_t wr;
};

static emb_status emb__frame_put(void *arg, const uint8_t *bytes, uint32_t n)
{
    struct emb__frame_sink *k = arg;
    emb__put(k->r, &k->wr, bytes, n);
    return EMB_OK;
}

emb_status emb_memchan_send_frame(unsigned ring, uint8_t channel, const void *payload,
                                  size_t len)
{
    if (ring >= CONFIG_EMB_MEMCHAN_UP || channel >= EMB_FRAME_CHANNELS)
        return EMB_E_INVALID;
    struct emb_memchan_ring *r = &emb_memchan.up[ring];
    emb_port_irq_state s = emb_port_irq_save();
    emb_status st = EMB_E_NOSPACE;
    /* Room for the longest encoding is checked first, so the frame is never cut. */
    if (emb__space(r) >= EMB_FRAME_WIRE_MAX(len)) {
        struct emb__frame_sink k = {r, r->wr};
        struct emb_frame_encoder e;
        emb_frame_encode_begin(&e, emb__frame_put, &k, channel);
        emb_frame_encode_put(&e, payload, len);
        emb_frame_encode_end(&e);
        emb__store(&r->wr, k.wr);
        st = EMB_OK;
    } else {
        EMB__DROPS++;
    }
    emb_port_irq_restore(s);
    return st;
}

size_t emb_memchan_read(unsigned ring, void *buf, size_t cap)
{
    if (ring >= CONFIG_EMB_MEMCHAN_DOWN)
        return 0;
    struct emb_memchan_ring *r = &emb_memchan.down[ring];
    if (r->size == 0u)
        return 0;
    uint32_t wr = emb__load(&r->wr);
    uint32_t rd = r->rd;
    if (wr >= r->size)
        return 0;
    const uint8_t *src = EMB__BUF(r);
    uint8_t *dst = (uint8_t *)buf;
    size_t n = 0;
    while (rd != wr && n < cap) {
        dst[n++] = src[rd];
        if (++rd == r->size)
            rd = 0;
    }
    emb__store(&r->rd, rd);
    return n;
}

uint32_t emb_memchan_drops(void)
{
    return EMB__DROPS;
}

/* ---- Commands on the down ring ---- */

#define EMB__CMD_MAX 64u

static struct {
    uint8_t in[EMB__CMD_MAX];
    uint8_t out[EMB__CMD_MAX];
    uint8_t n;
    uint8_t discarding; /* a frame longer than EMB__CMD_MAX: skip to its delimiter */
} emb__cmd;

unsigned emb_memchan_poll_shell(unsigned down, unsigned up)
{
    unsigned handled = 0;
    uint8_t chunk[32];
    size_t got;
    while ((got = emb_memchan_read(down, chunk, sizeof chunk)) > 0u) {
        for (size_t i = 0; i < got; i++) {
            uint8_t b = chunk[i];
            if (b != EMB_FRAME_DELIMITER) {
                if (emb__cmd.n < EMB__CMD_MAX)
                    emb__cmd.in[emb__cmd.n++] = b;
                else
                    emb__cmd.discarding = 1u;
                continue;
            }
            uint8_t channel;
            size_t len;
            if (!emb__cmd.discarding && emb__cmd.n > 0u &&
                emb_frame_decode_one(emb__cmd.in, emb__cmd.n, emb__cmd.out, &channel, &len) ==
                    EMB_FRAME_OK &&
                channel == EMB_FRAME_CH_SHELL) {
                uint8_t reply[EMB_SHELL_REPLY_MAX];
                size_t rn = emb_shell_handle(emb__cmd.out + 1, len, reply, sizeof reply);
                if (rn > 0u)
                    emb_memchan_send_frame(up, EMB_FRAME_CH_SHELL, reply, rn);
                handled++;
            }
            emb__cmd.n = 0;
            emb__cmd.discarding = 0;
        }
    }
    return handled;
}

#endif /* CONFIG_EMB_MEMCHAN */
