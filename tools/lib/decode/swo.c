/* The ITM/DWT packet protocol, byte by byte (docs/formats/swo.md). */
#include "swo.h"

#include <string.h>

enum {
    EMB__HEADER,   /* expecting a packet header */
    EMB__PAYLOAD,  /* fixed-size payload of a source packet (or GTS2) */
    EMB__CONT,     /* continuation-coded payload: timestamps, extensions */
    EMB__ZEROS,    /* inside a synchronisation packet */
};

/* A synchronisation packet is at least 47 zero bits then a one: five zero bytes (and
 * seven zero bits of the sixth) before the 0x80. */
#define EMB__SYNC_ZEROS 5u

void emb_swo_init(struct emb_swo *s, emb_swo_fn fn, void *arg)
{
    memset(s, 0, sizeof *s);
    s->fn = fn;
    s->arg = arg;
}

static void emb__emit(struct emb_swo *s)
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
    s->state = EMB__HEADER;
}

static void emb__begin(struct emb_swo *s, uint8_t type, uint64_t offset)
{
    memset(&s->cur, 0, sizeof s->cur);
    s->cur.type = type;
    s->cur.offset = offset;
    s->got = 0;
    s->shift = 0;
}

/* Header byte (ARMv7-M ARM D4.2): bits[1:0] non-zero is a source packet of 1, 2 or 4
 * bytes (bit 2: hardware); otherwise the byte selects a protocol packet. */
static void emb__header(struct emb_swo *s, uint8_t b, uint64_t offset)
{
    static const uint8_t sizes[4] = {0, 1, 2, 4};
    if ((b & 0x03u) != 0u) {
        emb__begin(s, (b & 0x04u) ? EMB_SWO_HARDWARE : EMB_SWO_STIMULUS, offset);
        s->cur.port = (uint8_t)(b >> 3);
        s->cur.size = sizes[b & 0x03u];
        s->need = s->cur.size;
        s->state = EMB__PAYLOAD;
        return;
    }
    if (b == 0x00u) {
        emb__begin(s, EMB_SWO_SYNC, offset);
        s->zeros = 1;
        s->state = EMB__ZEROS;
        return;
    }
    if (b == 0x70u) {
        emb__begin(s, EMB_SWO_OVERFLOW, offset);
        emb__emit(s);
        return;
    }
    if ((b & 0x8Fu) == 0x00u) {
        /* Local timestamp, format 2: the delta (1..6) is in the header. */
        emb__begin(s, EMB_SWO_LOCAL_TS, offset);
        s->cur.value = (b >> 4) & 0x07u;
        emb__emit(s);
        return;
    }
    if ((b & 0xCFu) == 0xC0u) {
        /* Local timestamp, format 1: control in bits[5:4], up to four 7-bit groups. */
        emb__begin(s, EMB_SWO_LOCAL_TS, offset);
        s->cur.tc = (uint8_t)((b >> 4) & 0x03u);
        s->need = 4;
        s->state = EMB__CONT;
        return;
    }
    if (b == 0x94u) {
        emb__begin(s, EMB_SWO_GLOBAL_TS1, offset);
        s->need = 4;
        s->state = EMB__CONT;
        return;
    }
    if (b == 0xB4u) {
        emb__begin(s, EMB_SWO_GLOBAL_TS2, offset);
        s->need = 6; /* 4 bytes for a 48-bit timer, 6 for 64 bits */
        s->state = EMB__CONT;
        return;
    }
    if ((b & 0x0Bu) == 0x08u) {
        /* Extension: EX[2:0] in bits[6:4], SH in bit 2, more bytes when bit 7 is set. */
        emb__begin(s, EMB_SWO_EXTENSION, offset);
        s->cur.port = (uint8_t)((b >> 2) & 1u);
        s->cur.value = (b >> 4) & 0x07u;
        s->shift = 3;
        if (b & 0x80u) {
            s->need = 4;
            s->state = EMB__CONT;
        } else {
            emb__emit(s);
        }
        return;
    }
    emb__begin(s, EMB_SWO_RESERVED, offset);
    s->cur.value = b;
    emb__emit(s);
}

static void emb__cont(struct emb_swo *s, uint8_t b)
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
        emb__emit(s);
}

void emb_swo_feed(struct emb_swo *s, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[i];
        uint64_t offset = s->stats.bytes++;
        switch (s->state) {
        case EMB__HEADER:
            emb__header(s, b, offset);
            break;
        case EMB__PAYLOAD:
            s->cur.value |= (uint64_t)b << (8u * s->got);
            if (++s->got == s->need)
                emb__emit(s);
            break;
        case EMB__CONT:
            emb__cont(s, b);
            break;
        case EMB__ZEROS:
            if (b == 0x00u) {
                s->zeros++;
            } else if (b == 0x80u && s->zeros >= EMB__SYNC_ZEROS) {
                emb__emit(s);
            } else {
                /* Zeros that end without 0x80, or too few of them: not a synchronisation
                 * packet. Counted; the byte after them is read as a header. */
                s->stats.bad_sync++;
                s->state = EMB__HEADER;
                emb__header(s, b, offset);
            }
            break;
        }
    }
}

void emb_swo_finish(struct emb_swo *s)
{
    if (s->state == EMB__PAYLOAD || s->state == EMB__CONT ||
        (s->state == EMB__ZEROS && s->zeros < EMB__SYNC_ZEROS))
        s->stats.truncated = true;
    s->state = EMB__HEADER;
}

/* ---- Stimulus port streams ---- */

static void emb__demux_packet(void *arg, const struct emb_swo_packet *p)
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
    emb_swo_init(&d->swo, emb__demux_packet, d);
}

void emb_swo_demux_feed(struct emb_swo_demux *d, const void *buf, size_t n)
{
    emb_swo_feed(&d->swo, buf, n);
}

void emb_swo_demux_finish(struct emb_swo_demux *d)
{
    emb_swo_finish(&d->swo);
}
