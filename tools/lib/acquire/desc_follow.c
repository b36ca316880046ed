/* Following the rings of a live target through its descriptor (desc_read.h): trace
 * packets by the snapshot reader's rules (docs/formats/trace.md), log ring bytes by the
 * consumer's (docs/formats/log.md), poll after poll. */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <emb/log_format.h>
#include <emb/ring_read.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "desc_read.h"
#include "desc_read_internal.h"

/* Room for n more bytes at the end of o, counted as written; NULL once memory ran out. */
static uint8_t *out_grow(struct emb_buf *o, size_t n)
{
    if (!emb_buf_reserve(o, n))
        return NULL;
    uint8_t *at = o->data + o->len;
    o->len += n;
    return at;
}

static emb_status out_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    uint8_t *dst = out_grow(arg, len);
    if (!dst)
        return EMB_E_NOSPACE;
    memcpy(dst, bytes, len);
    return EMB_OK;
}

/* Where the follower is in one trace ring. */
struct tring {
    const struct emb_desc_context *c;
    bool started;
    uint32_t next;            /* position of the next packet to take */
    uint32_t discarded;       /* the ring's count at the last poll */
    uint32_t write_pos;       /* at the last poll */
};

/* Where it is in one log ring. */
struct lring {
    const struct emb_desc_logring *l;
    bool started, announced;
    uint32_t next;            /* position of the next byte to take */
    uint32_t write_pos, dropped, pending;
    uint8_t *image;           /* mask + 1 + slack bytes, laid out as the ring */
};

struct emb_desc_follow {
    const struct emb_desc_image *d;
    const struct emb_desc_model *md;
    const struct emb_catalog *cat;
    bool consume, running;
    struct tring *t;
    size_t nt;
    struct lring *l;
    size_t nl;
    struct emb_buf packets;
    struct emb_buf log;
    uint8_t *scratch;         /* the largest trace ring's bytes */
    uint8_t *commits;
    struct emb_desc_follow_stats st;
};

struct emb_desc_follow *emb_desc_follow_new(const struct emb_desc_image *d, const struct emb_desc_model *md,
                                        const struct emb_desc_follow_options *o)
{
    struct emb_desc_follow *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->d = d;
    f->md = md;
    f->cat = o && o->cat ? o->cat : emb_catalog_builtin();
    f->consume = o && o->consume;
    f->running = o && o->running;
    f->t = calloc(md->ncontexts + 1, sizeof *f->t);
    f->l = calloc(md->nlogrings + 1, sizeof *f->l);
    if (!f->t || !f->l) {
        emb_desc_follow_free(f);
        return NULL;
    }
    uint64_t biggest = 0, slots = 0;
    for (size_t i = 0; i < md->ncontexts; i++) {
        const struct emb_desc_context *c = &md->contexts[i];
        if (!c->ring || !c->ring_ok)
            continue;
        f->t[f->nt++].c = c;
        if ((uint64_t)c->buf_mask + 1u > biggest)
            biggest = (uint64_t)c->buf_mask + 1u;
        if ((uint64_t)c->slot_mask + 1u > slots)
            slots = (uint64_t)c->slot_mask + 1u;
    }
    f->scratch = malloc(biggest ? biggest : 1);
    f->commits = malloc(slots ? 4 * slots : 4);
    for (size_t i = 0; i < md->nlogrings; i++) {
        const struct emb_desc_logring *l = &md->logrings[i];
        if (!l->ok)
            continue;
        struct lring *lr = &f->l[f->nl++];
        lr->l = l;
        lr->image = calloc((size_t)l->mask + 1u + md->log_slack, 1);
        if (!lr->image) {
            emb_desc_follow_free(f);
            return NULL;
        }
    }
    if (!f->scratch || !f->commits) {
        emb_desc_follow_free(f);
        return NULL;
    }
    if (f->nl > 0) {
        const struct emb_log_hello_info h = {
            .clock_hz = md->clock_hz,
            .clock_offset_ns = md->clock_offset_ns,
            .id_bytes = (uint8_t)md->log_id_bytes,
            .ts_bytes = (uint8_t)md->log_ts_bytes,
            .ptr_bytes = (uint8_t)d->ptr_size,
            .build_id = md->build_id,
            .build_id_len = (uint8_t)md->build_id_len,
            .port = md->port,
        };
        uint8_t hello[EMB_LOG_HELLO_SIZE];
        emb_log_encode_hello(hello, &h);
        struct emb_frame_encoder enc;
        emb_frame_encode_begin(&enc, out_write, &f->log, EMB_FRAME_CH_LOG);
        emb_frame_encode_put(&enc, hello, sizeof hello);
        emb_frame_encode_end(&enc);
    }
    return f;
}

void emb_desc_follow_free(struct emb_desc_follow *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nl; i++)
        free(f->l[i].image);
    free(f->t);
    free(f->l);
    emb_buf_free(&f->packets);
    emb_buf_free(&f->log);
    EMB_FREE_ALL(f->scratch, f->commits, f);
}

const struct emb_desc_follow_stats *emb_desc_follow_stats(const struct emb_desc_follow *f)
{
    return &f->st;
}

/* ---- Trace rings ---- */

static bool read_u32(struct emb_mem *m, const struct emb_desc_image *d, uint64_t addr, uint32_t *v)
{
    uint8_t b[4];
    if (emb_mem_read(m, addr, b, 4) != 4)
        return false;
    *v = (uint32_t)get_uint(b, 4, d->little);
    return true;
}

static bool write_u32(struct emb_mem *m, const struct emb_desc_image *d, uint64_t addr, uint32_t v)
{
    uint8_t b[4];
    put_uint(b, 4, d->little, v);
    return emb_mem_write(m, addr, b, 4) == 0;
}

static struct emb_ring_geometry geometry_of(const struct emb_desc_context *c)
{
    return (struct emb_ring_geometry){
        .base_pos = c->base_pos, .packet_shift = c->packet_shift, .slot_shift = c->slot_shift};
}

/* The commit word, as this poll read it, of the slot that holds `pos`. */
static uint32_t commit_of(const struct emb_desc_follow *f, const struct emb_ring_geometry *g, uint32_t pos)
{
    return (uint32_t)get_uint(f->commits + 4u * emb_ring_slot(g, pos), 4, f->d->little);
}

/* timestamp_end of an open packet: its last event's time, walking the events with the
 * catalogue's sizes (all events share the high word of the packet's timestamp_begin). */
static uint64_t last_event_ts(const uint8_t *pkt, uint32_t used, const struct emb_catalog *cat)
{
    uint64_t begin = emb_get_le64(pkt + EMB_PKT_OFF_TS_BEGIN), last = begin;
    for (uint32_t off = EMB_PKT_HEADER_SIZE; off + EMB_EVT_HEADER_SIZE <= used;) {
        const struct emb_catalog_event *ev = cat ? emb_catalog_event(cat, emb_get_le16(pkt + off + EMB_EVT_OFF_ID)) : NULL;
        if (!ev || ev->size == 0 || off + ev->size > used)
            return used == off ? last : (begin | 0xFFFFFFFFu);
        last = (begin & ~0xFFFFFFFFull) | emb_get_le32(pkt + off + EMB_EVT_OFF_TS);
        off += ev->size;
    }
    return last;
}

/* Reads ring bytes [from, to) (positions, to - from at most the ring) into the scratch. */
static bool read_positions(struct emb_mem *m, const struct emb_desc_context *c, uint8_t *scratch,
                           uint32_t from, uint32_t to)
{
    uint32_t n = to - from, off = from & c->buf_mask, first = c->buf_mask + 1u - off;
    if (first > n)
        first = n;
    return emb_mem_read(m, c->buf + off, scratch + off, first) == first &&
           (n == first || emb_mem_read(m, c->buf, scratch, n - first) == n - first);
}

/* Hands on the complete packets [from, end) copied into the scratch, each only if the
 * position read after the copy (`w2`) has not reached its slot's next use, raised to the
 * ring's `discarded` read before the copy (the target's readers do the same,
 * emb_trace_packet_raise_discarded). */
static int take_packets(struct emb_desc_follow *f, const struct emb_desc_context *c,
                        const struct emb_ring_geometry *g, uint32_t from, uint32_t end, uint32_t w2,
                        uint32_t discarded)
{
    const uint32_t p = emb_ring_packet_size(g);
    for (uint32_t start = from; start != end; start += p) {
        if (!emb_ring_copy_intact(g, start, w2)) {
            f->st.packets_lost++; /* reused while it was copied */
            continue;
        }
        uint8_t *dst = out_grow(&f->packets, p);
        if (!dst)
            return -1;
        memcpy(dst, f->scratch + (start & c->buf_mask), p);
        if (f->md->trace_mode != 1u /* a window never overwrites */ &&
            (int32_t)(discarded - emb_get_le32(dst + EMB_PKT_OFF_DISCARDED)) > 0)
            emb_put_le32(dst + EMB_PKT_OFF_DISCARDED, discarded);
        f->st.packets++;
    }
    return 0;
}

/* Hands on the committed prefix of the open packet, closed in the copy, if the position
 * read after the copy (`w2`) shows it intact. */
static int take_open_packet(struct emb_desc_follow *f, const struct emb_desc_context *c,
                            const struct emb_ring_geometry *g, const struct emb_ring_held *h,
                            uint32_t w2, uint32_t discarded)
{
    const uint32_t p = emb_ring_packet_size(g), off = h->open_used;
    if (!emb_ring_copy_intact(g, h->open_start, w2))
        return 0;
    uint8_t *dst = out_grow(&f->packets, p);
    if (!dst)
        return -1;
    memcpy(dst, f->scratch + (h->open_start & c->buf_mask), off);
    memset(dst + off, 0, p - off);
    emb_put_le64(dst + EMB_PKT_OFF_TS_END, last_event_ts(dst, off, f->cat));
    emb_put_le32(dst + EMB_PKT_OFF_CONTENT_SIZE, off * 8u);
    emb_put_le32(dst + EMB_PKT_OFF_DISCARDED, discarded);
    f->st.packets++;
    return 0;
}

/* Where the first poll starts: a consumer where the last one stopped (read_pos, when it
 * is a packet position within the ring), a reader at the oldest packet held. */
static uint32_t first_next(const struct emb_desc_follow *f, const struct emb_ring_geometry *g,
                           const struct emb_ring_held *h, uint32_t read_pos)
{
    uint32_t next = f->consume && f->md->trace_mode == 2u ? read_pos : h->oldest;
    if ((uint32_t)(h->open_start - next) > emb_ring_bytes(g) ||
        (next & (emb_ring_packet_size(g) - 1u)) != 0)
        next = h->oldest;
    return next;
}

/* A running target's streaming ring, claimed before it is read: read_pos with the claim
 * bit set, so that a producer that needs the oldest unread packet's slot drops its event
 * (counted) instead of taking the packet (trace.md, "Streaming when the consumer falls
 * behind"). The host cannot compare-and-swap, so the claim is a plain store: a push in
 * the moment between its load and its store is overwritten, but a pushed packet's slot
 * is reused right after, which the copy's check (write_pos against the slot's next use)
 * sees, so it is counted lost, never taken twice. 1: a producer is pushing, try again at
 * the next poll; 0 claimed (*at the position, without the claim bit); -1 unreadable. */
static int claim_ring(struct emb_desc_follow *f, const struct emb_desc_context *c, struct emb_mem *m,
                      struct field rp, uint32_t *at)
{
    if (!read_u32(m, f->d, c->ring + rp.off, at))
        return -1;
    if ((*at & EMB_TRACE_READ_PUSHING) != 0u) {
        f->st.claims_busy++;
        return 1;
    }
    /* A claim already there is a host's that died holding it (the probe is the only
     * consumer): taken over, or the ring would stay claimed for good. */
    *at &= ~(uint32_t)EMB_TRACE_READ_CLAIMED;
    return write_u32(m, f->d, c->ring + rp.off, *at | EMB_TRACE_READ_CLAIMED) ? 0 : -1;
}

/* Frees what was taken: a streaming ring's producers wait for nobody but this; a claim
 * is given back even when nothing was taken. */
static int release_ring(struct emb_desc_follow *f, struct tring *tr, struct emb_mem *m,
                        struct emb_problems *is, uint32_t read_pos, bool claimed)
{
    const struct emb_desc_context *c = tr->c;
    const struct emb_desc_image_section *s = emb_desc_image_section(f->d, EMB_DESC_RINGS);
    const struct emb_ring_geometry g = geometry_of(c);
    uint32_t to = read_pos;
    if (f->consume && f->md->trace_mode == 2u && (uint32_t)(tr->next - read_pos) <= emb_ring_bytes(&g))
        to = tr->next;
    if (to == read_pos && !claimed)
        return 0;
    if (!write_u32(m, f->d, c->ring + field_of(s->w[RG_F_READ_POS]).off, to)) {
        emb_desc_report(is, "context %u (%s): cannot write the ring's read position", c->index, c->name);
        return -1;
    }
    f->st.released += to != read_pos;
    return 0;
}

/* The ring's positions and commit words as this poll sees them, claimed first when
 * `claim`. 0; 1: a producer is pushing, nothing read (try at the next poll); -1
 * unreadable (a claim made is given back). */
static int read_ring_state(struct emb_desc_follow *f, const struct emb_desc_context *c, struct emb_mem *m,
                           bool claim, uint32_t *read_pos, uint32_t *w1, uint32_t *filled)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(f->d, EMB_DESC_RINGS);
    struct field wp = field_of(s->w[RG_F_WRITE_POS]), rp = field_of(s->w[RG_F_READ_POS]);
    struct field fl = field_of(s->w[RG_F_FILLED]);
    const uint32_t slots = c->slot_mask + 1u;
    int claimed = claim ? claim_ring(f, c, m, rp, read_pos) : 0;
    if (claimed != 0)
        return claimed;
    if (!read_u32(m, f->d, c->ring + wp.off, w1) || (!claim && !read_u32(m, f->d, c->ring + rp.off, read_pos)) ||
        !read_u32(m, f->d, c->ring + fl.off, filled) ||
        emb_mem_read(m, c->commit, f->commits, 4u * slots) != 4u * slots) {
        if (claim)
            write_u32(m, f->d, c->ring + rp.off, *read_pos);
        return -1;
    }
    return 0;
}

/* One ring, one poll: positions, then commits, then bytes, then the position again; a
 * packet complete in the commits whose slot the position has not reached again was
 * copied whole (a halted target cannot move, a running one may). */
static int poll_ring(struct emb_desc_follow *f, struct tring *tr, struct emb_mem *m,
                     struct emb_problems *is, bool last)
{
    const struct emb_desc_context *c = tr->c;
    const struct emb_desc_image_section *s = emb_desc_image_section(f->d, EMB_DESC_RINGS);
    const struct emb_ring_geometry g = geometry_of(c);
    const uint32_t p = emb_ring_packet_size(&g), ring_bytes = emb_ring_bytes(&g);
    uint32_t w1, w2, read_pos = 0, filled = 0, discarded = tr->discarded;
    struct field wp = field_of(s->w[RG_F_WRITE_POS]), rp = field_of(s->w[RG_F_READ_POS]);
    struct field df = field_of(s->w[RG_F_DISCARDED]);
    const bool claim = f->running && f->consume && f->md->trace_mode == 2u;
    int state = read_ring_state(f, c, m, claim, &read_pos, &w1, &filled);
    if (state != 0) {
        if (state < 0)
            emb_desc_report(is, "context %u (%s): ring unreadable", c->index, c->name);
        return state < 0 ? -1 : 0;
    }
    const struct emb_ring_held h = emb_ring_held(&g, w1, filled);
    if (!tr->started) {
        tr->next = first_next(f, &g, &h, read_pos);
        tr->started = true;
    }
    uint32_t lost;
    tr->next = emb_ring_catch_up(&g, &h, tr->next, &lost);
    f->st.packets_lost += lost;
    /* A streaming ring's consumer: packets below read_pos were given up by a producer,
     * their events counted in `discarded`, even one still intact because the producer
     * that overwrites it was halted between its two steps (read_pos flagged). Taking it
     * would count its events twice. */
    const bool streaming_consumer = f->consume && f->md->trace_mode == 2u;
    uint32_t given_up = read_pos & ~(p - 1u);
    if (streaming_consumer && (int32_t)(given_up - tr->next) > 0 && given_up - tr->next <= ring_bytes)
        tr->next = given_up;
    /* While read_pos is flagged, nothing is taken: what is taken must be freed, and the
     * producer's store that ends its step would take read_pos back behind it. */
    const bool pushing = streaming_consumer && given_up != read_pos;
    /* The complete packets from `next` on, stopping at the first one still being written. */
    uint32_t end = tr->next;
    while (!pushing && end != h.open_start && emb_ring_packet_complete(&g, end, commit_of(f, &g, end)))
        end += p;
    bool take_open = last && !pushing && end == h.open_start &&
                     emb_ring_open_committed(&g, &h, commit_of(f, &g, h.open_start));
    uint32_t upto = take_open ? h.open_start + h.open_used : end;
    /* The ring's count before the copy: what it says was overwritten before any packet
     * copied now. */
    read_u32(m, f->d, c->ring + df.off, &discarded);
    if (upto != tr->next && !read_positions(m, c, f->scratch, tr->next, upto)) {
        emb_desc_report(is, "context %u (%s): ring contents unreadable", c->index, c->name);
        if (claim)
            write_u32(m, f->d, c->ring + rp.off, read_pos); /* the claim given back */
        return -1;
    }
    if (!read_u32(m, f->d, c->ring + wp.off, &w2))
        w2 = w1;
    if (take_packets(f, c, &g, tr->next, end, w2, discarded) != 0)
        return -1;
    tr->next = end;
    if (take_open && take_open_packet(f, c, &g, &h, w2, discarded) != 0)
        return -1;
    if (!pushing && release_ring(f, tr, m, is, read_pos, claim) != 0)
        return -1;
    tr->discarded = discarded;
    tr->write_pos = w2;
    return 0;
}

/* ---- Log rings ---- */

/* The ring's fields this poll needs, read afresh. */
static bool read_log_state(struct emb_desc_follow *f, struct emb_mem *m, const struct emb_desc_logring *l,
                           struct emb_desc_logring *now)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(f->d, EMB_DESC_LOG);
    static const unsigned which[] = {LG_F_WRITE_POS, LG_F_COMMITTED, LG_F_READ_POS, LG_F_SPILL_POS,
                                     LG_F_SPILL, LG_F_DROPPED, LG_F_PENDING, LG_F_DRAINING};
    uint32_t v[8];
    for (size_t i = 0; i < 8; i++) {
        struct field fd = field_of(s->w[which[i]]);
        uint8_t b[8] = {0};
        if (fd.size == 0 || fd.size > 8 || emb_mem_read(m, l->addr + fd.off, b, fd.size) != fd.size)
            return false;
        v[i] = (uint32_t)get_uint(b, fd.size, f->d->little);
    }
    *now = *l;
    now->write_pos = v[0];
    now->committed = v[1];
    now->read_pos = v[2];
    now->spill_pos = v[3];
    now->spill = v[4];
    now->dropped = v[5];
    now->pending = v[6];
    now->draining = v[7];
    return now->spill <= f->md->log_slack && (uint32_t)(now->write_pos - now->read_pos) <= now->mask + 1u;
}

/* Reads ring positions [from, to) into the image, at the offsets the ring keeps them: the
 * record that crossed the end at spill_pos from the slack. */
static bool read_log_bytes(struct emb_mem *m, const struct emb_desc_logring *now, uint8_t *image,
                           uint32_t from, uint32_t to)
{
    while (from != to) {
        uint32_t off, n;
        if (from - now->spill_pos < now->spill) {
            off = now->mask + 1u + (from - now->spill_pos);
            n = now->spill - (from - now->spill_pos);
        } else {
            off = from & now->mask;
            n = now->mask + 1u - off;
            if (now->spill != 0u && now->spill_pos - from < n)
                n = now->spill_pos - from;
        }
        if (n > to - from)
            n = to - from;
        if (emb_mem_read(m, now->buf + off, image + off, n) != n)
            return false;
        from += n;
    }
    return true;
}

static int poll_log(struct emb_desc_follow *f, struct lring *lr, struct emb_mem *m, struct emb_problems *is,
                    bool last)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(f->d, EMB_DESC_LOG);
    struct emb_desc_logring now;
    if (!read_log_state(f, m, lr->l, &now)) {
        emb_desc_report(is, "log ring %u (%s): unreadable or inconsistent", lr->l->index, lr->l->name);
        return -1;
    }
    lr->dropped = now.dropped;
    lr->pending = now.pending;
    lr->write_pos = now.write_pos;
    if (!lr->started) {
        lr->next = now.read_pos;
        lr->started = true;
    }
    const uint32_t size = now.mask + 1u;
    if ((uint32_t)(now.write_pos - lr->next) > size) {
        /* Overwritten before we came back (the target drains it too, faster than us). */
        f->st.log_lost += now.read_pos - lr->next;
        lr->next = now.read_pos;
    }
    /* committed equal to the write position: no record is half-written (log.md). */
    if (now.committed != now.write_pos || now.draining) {
        f->st.log_busy++;
        if (last)
            emb_desc_report(is, "log ring %u (%s): a record was being written when the target stopped: "
                          "%u bytes not taken", lr->l->index, lr->l->name, now.write_pos - lr->next);
        return 0;
    }
    if (now.write_pos != lr->next) {
        if (!read_log_bytes(m, &now, lr->image, lr->next, now.write_pos)) {
            emb_desc_report(is, "log ring %u (%s): its bytes are unreadable", lr->l->index, lr->l->name);
            return -1;
        }
        if (!lr->announced) {
            uint8_t ctx[EMB_LOG_CTX_SIZE];
            emb_log_encode_context(ctx, now.context_id, (uint8_t)now.context_kind, now.name);
            struct emb_frame_encoder enc;
            emb_frame_encode_begin(&enc, out_write, &f->log, EMB_FRAME_CH_LOG);
            emb_frame_encode_put(&enc, ctx, sizeof ctx);
            emb_frame_encode_end(&enc);
            lr->announced = true;
        }
        const struct emb_log_ring_image img = {lr->image, now.mask, now.spill_pos, now.spill};
        emb_log_write_ring_data(out_write, &f->log, now.context_id, &img, lr->next, now.write_pos, 1024u);
        f->st.log_bytes += now.write_pos - lr->next;
        lr->next = now.write_pos;
    }
    if (f->consume && now.read_pos != lr->next) {
        if (!write_u32(m, f->d, lr->l->addr + field_of(s->w[LG_F_READ_POS]).off, lr->next)) {
            emb_desc_report(is, "log ring %u (%s): cannot write its read position", lr->l->index, lr->l->name);
            return -1;
        }
        f->st.released++;
    }
    return 0;
}

/* ---- Polls ---- */

static int poll(struct emb_desc_follow *f, struct emb_mem *m, struct emb_problems *is, bool last)
{
    int rc = -1;
    for (size_t i = 0; i < f->nt; i++)
        if (poll_ring(f, &f->t[i], m, is, last) == 0)
            rc = 0;
    for (size_t i = 0; i < f->nl; i++)
        if (poll_log(f, &f->l[i], m, is, last) == 0)
            rc = 0;
    f->st.polls++;
    return f->nt + f->nl == 0 ? 0 : rc;
}

int emb_desc_follow_poll(struct emb_desc_follow *f, struct emb_mem *m, struct emb_problems *is)
{
    return poll(f, m, is, false);
}

int emb_desc_follow_finish(struct emb_desc_follow *f, struct emb_mem *m, struct emb_problems *is)
{
    int rc = poll(f, m, is, true);
    for (size_t i = 0; i < f->nl; i++) {
        const struct lring *lr = &f->l[i];
        if (!lr->started)
            continue;
        uint8_t stats[EMB_LOG_STATS_SIZE];
        emb_log_encode_stats(stats, lr->l->context_id, lr->dropped, lr->pending, lr->write_pos);
        struct emb_frame_encoder enc;
        emb_frame_encode_begin(&enc, out_write, &f->log, EMB_FRAME_CH_LOG);
        emb_frame_encode_put(&enc, stats, sizeof stats);
        emb_frame_encode_end(&enc);
    }
    return rc;
}

const uint8_t *emb_desc_follow_log(const struct emb_desc_follow *f, size_t *len)
{
    *len = f->log.len;
    return f->nl && !f->log.failed ? f->log.data : NULL;
}

size_t emb_desc_follow_header(const struct emb_desc_follow *f, uint8_t *header, size_t cap)
{
    const struct emb_desc_model *md = f->md;
    struct emb_tsf_context *table = calloc(f->nt + 1, sizeof *table);
    if (!table)
        return 0;
    uint16_t n = 0;
    for (size_t i = 0; i < f->nt && n < EMB_TSF_MAX_CONTEXTS; i++) {
        const struct tring *tr = &f->t[i];
        const struct emb_ring_geometry g = geometry_of(tr->c);
        table[n++] = (struct emb_tsf_context){
            .id = tr->c->context_id, .kind = tr->c->context_kind, .discarded = tr->discarded,
            .packets = emb_ring_packets_opened(&g, tr->write_pos), .name = tr->c->name};
    }
    struct emb_tsf_info info = {
        .catalog_checksum = md->catalog_checksum,
        .packet_size = md->packet_size,
        .clock_hz = md->clock_hz,
        .clock_offset_ns = md->clock_offset_ns,
        .build_id = md->build_id,
        .build_id_len = (uint8_t)(md->build_id_len > EMB_TSF_BUILD_ID_MAX ? EMB_TSF_BUILD_ID_MAX : md->build_id_len),
        .pointer_size = (uint8_t)f->d->ptr_size,
        .port = md->port,
        .ring_packets = md->ring_packets,
    };
    /* What the firmware says it is (its name and version, its flags, this run), and the
     * profile the descriptor names added to the flags: the capture says them all. */
    char flags[sizeof md->config + sizeof " profile=" + sizeof md->profile]; /* the encoder keeps 160 */
    snprintf(flags, sizeof flags, "%s%s%s%s", md->config, md->config[0] && md->profile[0] ? " " : "",
             md->profile[0] ? "profile=" : "", md->profile);
    const struct emb_tsf_identity identity = {
        .session_id = md->session_id, .firmware_version = md->firmware, .config = flags};
    if (md->firmware[0] || flags[0] || md->session_id)
        info.identity = &identity;
    memcpy(info.uuid, md->uuid, 16);
    size_t hlen = emb_tsf_encode_header(header, cap, &info, table, n);
    free(table);
    return hlen;
}

const uint8_t *emb_desc_follow_packets(const struct emb_desc_follow *f, size_t *len)
{
    *len = f->packets.failed ? 0 : f->packets.len;
    return f->packets.failed ? NULL : f->packets.data;
}

uint8_t *emb_desc_follow_trace(struct emb_desc_follow *f, size_t *len)
{
    static uint8_t header[EMB_DESC_FOLLOW_HEADER_MAX];
    size_t hlen = f->packets.failed ? 0 : emb_desc_follow_header(f, header, sizeof header);
    uint8_t *out = hlen ? malloc(hlen + f->packets.len + 1) : NULL;
    if (!out)
        return NULL;
    memcpy(out, header, hlen);
    if (f->packets.len)
        memcpy(out + hlen, f->packets.data, f->packets.len);
    *len = hlen + f->packets.len;
    return out;
}
