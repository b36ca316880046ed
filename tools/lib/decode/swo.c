/* The ITM/DWT packet protocol, byte by byte (docs/formats/swo.md). */
#include "swo.h"

#include <string.h>

enum {
    STATE_HEADER,   /* expecting a packet header */
    STATE_PAYLOAD,  /* fixed-size payload of a source packet (or GTS2) */
    STATE_CONTINUATION,     /* continuation-coded payload: timestamps, extensions */
    STATE_ZEROS,    /* inside a synchronisation packet */
};

/* A synchronisation packet is at least 47 zero bits then a one: five zero bytes (and
 * seven zero bits of the sixth) before the 0x80. */
#define SYNC_ZEROS 5u

void emb_swo_init(struct emb_swo *s, emb_swo_fn fn, void *arg)
{
    memset(s, 0, sizeof *s);
    s->fn = fn;
    s->arg = arg;
}

static void emit(struct emb_swo *s)
{
    struct emb_swo_stats *st = &s->stats;
    st->packets++;
    switch (s->cur.type) {
    case EMB_SWO_SYNC: st->syncs++; break;
    case EMB_SWO_OVERFLOW: st->overflows++; break;
    case EMB_SWO_STIMULUS: st->stimulus[s->cur.port & 31u]++; break;
    case EMB_SWO_HARDWARE: st->hardware++; break;
    case EMB_SWO_LOCAL_TS:
        s->time += s->cur.value;
        st->timestamps++;
        break;
    case EMB_SWO_GLOBAL_TS1:
    case EMB_SWO_GLOBAL_TS2: st->timestamps++; break;
    case EMB_SWO_EXTENSION: st->extensions++; break;
    default: st->reserved++; break;
    }
    s->cur.time = s->time;
    if (s->fn != NULL)
        s->fn(s->arg, &s->cur);
    s->state = STATE_HEADER;
}

static void begin(struct emb_swo *s, uint8_t type, uint64_t offset)
{
    memset(&s->cur, 0, sizeof s->cur);
    s->cur.type = type;
    s->cur.offset = offset;
    s->got = 0;
    s->shift = 0;
}

/* The protocol packets a header byte selects (ARMv7-M ARM D4.2), first match wins: the
 * header under `mask` equals `value`; `need` continuation bytes may follow (0: the header
 * is the whole packet). */
static const struct {
    uint8_t mask, value, type, need;
} PROTOCOL[] = {
    {0xFFu, 0x00u, EMB_SWO_SYNC, 0},       /* then zeros up to the final 0x80 */
    {0xFFu, 0x70u, EMB_SWO_OVERFLOW, 0},
    {0x8Fu, 0x00u, EMB_SWO_LOCAL_TS, 0},   /* format 2: the delta (1..6) in bits[6:4] */
    {0xCFu, 0xC0u, EMB_SWO_LOCAL_TS, 4},   /* format 1: control in bits[5:4], 7-bit groups */
    {0xFFu, 0x94u, EMB_SWO_GLOBAL_TS1, 4},
    {0xFFu, 0xB4u, EMB_SWO_GLOBAL_TS2, 6}, /* 4 bytes for a 48-bit timer, 6 for 64 bits */
    {0x0Bu, 0x08u, EMB_SWO_EXTENSION, 4},  /* EX[2:0] in bits[6:4], SH in bit 2; more: bit 7 */
};

/* A protocol packet's header byte: the fields it carries itself, then its continuation
 * bytes or its end. */
static void read_protocol_header(struct emb_swo *s, uint8_t b, uint64_t offset)
{
    size_t k = 0;
    while (k < sizeof PROTOCOL / sizeof PROTOCOL[0] && (b & PROTOCOL[k].mask) != PROTOCOL[k].value)
        k++;
    if (k == sizeof PROTOCOL / sizeof PROTOCOL[0]) {
        begin(s, EMB_SWO_RESERVED, offset);
        s->cur.value = b;
        emit(s);
        return;
    }
    begin(s, PROTOCOL[k].type, offset);
    s->need = PROTOCOL[k].need;
    switch (PROTOCOL[k].type) {
    case EMB_SWO_SYNC:
        s->zeros = 1;
        s->state = STATE_ZEROS;
        return;
    case EMB_SWO_LOCAL_TS:
        if (s->need == 0)
            s->cur.value = (b >> 4) & 0x07u;
        else
            s->cur.tc = (uint8_t)((b >> 4) & 0x03u);
        break;
    case EMB_SWO_EXTENSION:
        s->cur.port = (uint8_t)((b >> 2) & 1u);
        s->cur.value = (b >> 4) & 0x07u;
        s->shift = 3;
        s->need = (b & 0x80u) ? 4u : 0u;
        break;
    default: break;
    }
    if (s->need > 0)
        s->state = STATE_CONTINUATION;
    else
        emit(s);
}

/* Header byte (ARMv7-M ARM D4.2): bits[1:0] non-zero is a source packet of 1, 2 or 4
 * bytes (bit 2: hardware); otherwise the byte selects a protocol packet. */
static void read_header_byte(struct emb_swo *s, uint8_t b, uint64_t offset)
{
    static const uint8_t sizes[4] = {0, 1, 2, 4};
    if ((b & 0x03u) == 0u) {
        read_protocol_header(s, b, offset);
        return;
    }
    begin(s, (b & 0x04u) ? EMB_SWO_HARDWARE : EMB_SWO_STIMULUS, offset);
    s->cur.port = (uint8_t)(b >> 3);
    s->cur.size = sizes[b & 0x03u];
    s->need = s->cur.size;
    s->state = STATE_PAYLOAD;
}

static void read_continuation(struct emb_swo *s, uint8_t b)
{
    /* Seven bits per byte, least significant group first; bit 7 says more follow. The
     * fourth byte of a GTS1 carries TS[25:21] with ClkCh (bit 5) and Wrap (bit 6). */
    bool more = (b & 0x80u) != 0u;
    s->got++;
    if (s->cur.type == EMB_SWO_GLOBAL_TS1 && s->got == 4u) {
        s->cur.value |= (uint64_t)(b & 0x1Fu) << 21;
        s->cur.tc = (uint8_t)(((b >> 5) & 1u) | (((b >> 6) & 1u) << 1));
        more = false;
    } else {
        s->cur.value |= (uint64_t)(b & 0x7Fu) << s->shift;
        s->shift = (uint8_t)(s->shift + 7u);
    }
    if (!more || s->got == s->need)
        emit(s);
}

void emb_swo_feed(struct emb_swo *s, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[i];
        uint64_t offset = s->stats.bytes++;
        switch (s->state) {
        case STATE_HEADER:
            read_header_byte(s, b, offset);
            break;
        case STATE_PAYLOAD:
            s->cur.value |= (uint64_t)b << (8u * s->got);
            if (++s->got == s->need)
                emit(s);
            break;
        case STATE_CONTINUATION:
            read_continuation(s, b);
            break;
        case STATE_ZEROS:
            if (b == 0x00u) {
                s->zeros++;
            } else if (b == 0x80u && s->zeros >= SYNC_ZEROS) {
                emit(s);
            } else {
                /* Zeros that end without 0x80, or too few of them: not a synchronisation
                 * packet. Counted; the byte after them is read as a header. */
                s->stats.bad_sync++;
                s->state = STATE_HEADER;
                read_header_byte(s, b, offset);
            }
            break;
        }
    }
}

void emb_swo_finish(struct emb_swo *s)
{
    if (s->state == STATE_PAYLOAD || s->state == STATE_CONTINUATION ||
        (s->state == STATE_ZEROS && s->zeros < SYNC_ZEROS))
        s->stats.truncated = true;
    s->state = STATE_HEADER;
}

/* ---- Stimulus port streams ---- */

static void demux_packet(void *arg, const struct emb_swo_packet *p)
{
    struct emb_swo_demux *d = arg;
    if (p->type == EMB_SWO_OVERFLOW) {
        d->lost_pending = d->ports;
        return;
    }
    if (p->type != EMB_SWO_STIMULUS || !((d->ports >> p->port) & 1u))
        return;
    uint8_t bytes[4];
    for (unsigned i = 0; i < p->size; i++)
        bytes[i] = (uint8_t)(p->value >> (8u * i));
    bool lost = (d->lost_pending >> p->port) & 1u;
    d->lost_pending &= ~(UINT32_C(1) << p->port);
    d->fn(d->arg, p->port, bytes, p->size, lost, p->time);
}

void emb_swo_demux_init(struct emb_swo_demux *d, uint32_t ports, emb_swo_bytes_fn fn, void *arg)
{
    memset(d, 0, sizeof *d);
    d->fn = fn;
    d->arg = arg;
    d->ports = ports;
    emb_swo_init(&d->swo, demux_packet, d);
}

void emb_swo_demux_feed(struct emb_swo_demux *d, const void *buf, size_t n)
{
    emb_swo_feed(&d->swo, buf, n);
}

void emb_swo_demux_finish(struct emb_swo_demux *d)
{
    emb_swo_finish(&d->swo);
}
