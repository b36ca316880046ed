#define _POSIX_C_SOURCE 200809L
#include "events_sink.h"

#include <emb/wire.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One emitter whose sequence numbers are followed, to count what never arrived. */
struct caller {
    uint8_t name[EMB_SVC_NAME_LEN];
    uint32_t last_seq;     /* the last sequence number accounted for */
    uint32_t last_refused; /* the emitter's refused count as of its last LOSSES */
    bool used;
};

struct metric {
    uint8_t key[EMB_SVC_NAME_LEN + EMB_SVC_MET_NAME_LEN]; /* owner cell then name cell */
    uint64_t value;
};

struct log_line {
    uint8_t owner[EMB_SVC_NAME_LEN];
    uint16_t len;
    uint8_t text[EMB_SVC_LOG_TEXT_MAX];
};

struct emb_events_sink {
    struct emb_events_sink_config cfg;
    uint8_t *ring; /* capacity records of EMB_SVC_EV_LEN bytes */
    /* The counters: accepted is the records ever written (the next goes to accepted %
     * capacity); the sizes of the ring, table and window are filled in by stats(). */
    struct emb_events_sink_stats count;
    struct caller *callers; /* open addressing, caller_slots entries */
    uint32_t caller_slots;
    uint32_t caller_count;
    struct metric *metrics;
    uint32_t metric_count;
    struct log_line *logs; /* log_lines slots; line k (from 1) is at (k - 1) % log_lines */
    uint64_t log_total;
};

void emb_events_sink_config_default(struct emb_events_sink_config *cfg)
{
    cfg->capacity = 4096;
    cfg->log_lines = 1024;
    cfg->metrics = 256;
    cfg->callers = 256;
    cfg->logs_reply_max = EMB_EVENTS_REPLY_MAX;
}

struct emb_events_sink *emb_events_sink_new(const struct emb_events_sink_config *cfg)
{
    if (cfg->capacity == 0 || cfg->capacity > (1u << 24) || cfg->log_lines == 0 ||
        cfg->log_lines > (1u << 20) || cfg->metrics == 0 ||
        cfg->metrics > EMB_EVENTS_REPLY_MAX / EMB_SVC_MET_LEN || cfg->callers == 0 ||
        cfg->callers > (1u << 16) || cfg->logs_reply_max < EMB_SVC_LOGS_HDR_LEN + 2u +
                                         EMB_SVC_NAME_LEN + EMB_SVC_LOG_TEXT_MAX ||
        cfg->logs_reply_max > EMB_EVENTS_REPLY_MAX)
        return NULL;
    uint32_t caller_slots = 1;
    while (caller_slots < 2u * cfg->callers)
        caller_slots <<= 1;
    /* The tables' sizes are fixed here, so the sink and its tables are one allocation: the
     * tables follow the structure, the most strictly aligned first (each size a multiple
     * of its alignment), so every one starts aligned. */
    _Static_assert(_Alignof(struct emb_events_sink) >= _Alignof(struct metric) &&
                       _Alignof(struct metric) >= _Alignof(struct caller) &&
                       _Alignof(struct caller) >= _Alignof(struct log_line),
                   "the tables laid out after the sink, the most strictly aligned first");
    size_t metrics_at = sizeof(struct emb_events_sink);
    size_t callers_at = metrics_at + (size_t)cfg->metrics * sizeof(struct metric);
    size_t logs_at = callers_at + (size_t)caller_slots * sizeof(struct caller);
    size_t ring_at = logs_at + (size_t)cfg->log_lines * sizeof(struct log_line);
    uint8_t *block = calloc(1, ring_at + (size_t)cfg->capacity * EMB_SVC_EV_LEN);
    if (block == NULL)
        return NULL;
    struct emb_events_sink *s = (struct emb_events_sink *)block;
    s->cfg = *cfg;
    s->caller_slots = caller_slots;
    s->metrics = (struct metric *)(block + metrics_at);
    s->callers = (struct caller *)(block + callers_at);
    s->logs = (struct log_line *)(block + logs_at);
    s->ring = block + ring_at;
    return s;
}

void emb_events_sink_free(struct emb_events_sink *s)
{
    free(s); /* its tables with it */
}

void emb_events_sink_count_malformed(struct emb_events_sink *s)
{
    s->count.malformed++;
}

static uint32_t events_held(const struct emb_events_sink *s)
{
    return s->count.accepted < s->cfg.capacity ? (uint32_t)s->count.accepted : s->cfg.capacity;
}

void emb_events_sink_stats(const struct emb_events_sink *s, struct emb_events_sink_stats *out)
{
    *out = s->count;
    out->capacity = s->cfg.capacity;
    out->held = events_held(s);
    out->metrics_held = s->metric_count;
    out->log_lines = s->log_total;
    out->log_held = s->log_total < s->cfg.log_lines ? (uint32_t)s->log_total : s->cfg.log_lines;
}

/* ---- Intake ---- */

static uint32_t hash_name(const uint8_t *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (unsigned i = 0; i < EMB_SVC_NAME_LEN; i++)
        h = (h ^ name[i]) * 16777619u;
    return h;
}

/* The emitter's entry, created on first sight; NULL when the table is full (its losses are
 * then not followed: the ring still takes its events). */
static struct caller *find_caller(struct emb_events_sink *s, const uint8_t *name, bool *fresh)
{
    uint32_t mask = s->caller_slots - 1;
    for (uint32_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
        struct caller *c = &s->callers[i];
        if (c->used && memcmp(c->name, name, EMB_SVC_NAME_LEN) == 0) {
            *fresh = false;
            return c;
        }
        if (!c->used) {
            /* At most half the slots are used, so a probe always ends on a free one. */
            if (s->caller_count >= s->cfg.callers)
                return NULL;
            c->used = true;
            memcpy(c->name, name, EMB_SVC_NAME_LEN);
            s->caller_count++;
            *fresh = true;
            return c;
        }
    }
}

static void take_event(struct emb_events_sink *s, const struct emb_svc_event *in, uint32_t now_s)
{
    /* Stored re-encoded from the decoded form, so names are canonical (NUL-padded). */
    uint8_t *slot = s->ring + (size_t)(s->count.accepted % s->cfg.capacity) * EMB_SVC_EV_LEN;
    struct emb_svc_event stamped = *in;
    const struct emb_svc_event *ev = &stamped;
    stamped.at_s = now_s;
    emb_svc_encode_event_record(slot, EMB_SVC_EV_LEN, ev);
    s->count.accepted++;
    bool fresh = false;
    struct caller *c = find_caller(s, slot + EMB_SVC_EV_OFF_CALLER, &fresh);
    if (c != NULL) {
        /* An emitter reports its refused sends (LOSSES) before anything that follows them,
         * so its events arrive numbered one after another. A jump no report explained is
         * not a loss but a fault of that emitter (a forged or broken number): counted
         * apart, and followed from there. A sequence that goes back is the emitter
         * restarted: start again from it. */
        if (fresh || ev->seq <= c->last_seq)
            c->last_refused = 0;
        else if (ev->seq != c->last_seq + 1u)
            s->count.faults++;
        c->last_seq = ev->seq;
    }
}

static void take_losses(struct emb_events_sink *s, const struct emb_svc_losses *l)
{
    uint8_t name[EMB_SVC_NAME_LEN];
    emb_svc_put_name(name, EMB_SVC_NAME_LEN, l->owner);
    bool fresh = false;
    struct caller *c = find_caller(s, name, &fresh);
    if (c == NULL)
        return;
    if (!fresh && (l->seq < c->last_seq || l->refused < c->last_refused))
        fresh = true; /* the emitter restarted: its counts began again */
    uint32_t from_seq = fresh ? 0 : c->last_seq;
    uint32_t from_refused = fresh ? 0 : c->last_refused;
    uint32_t gap = l->seq - from_seq;
    /* Believable: the numbers skipped are no more than the sends the emitter says were
     * refused since it last reported. An emitter first heard of by its report is counted
     * only when its refusals explain every number it used. */
    if (gap <= l->refused - from_refused)
        s->count.dropped += gap;
    else if (!fresh)
        s->count.faults++;
    c->last_seq = l->seq;
    c->last_refused = l->refused;
}

static void take_metric(struct emb_events_sink *s, const struct emb_svc_metric *m)
{
    const size_t key_len = EMB_SVC_NAME_LEN + EMB_SVC_MET_NAME_LEN;
    /* Canonical key: bytes after a name's first NUL do not make another metric. */
    uint8_t key[EMB_SVC_NAME_LEN + EMB_SVC_MET_NAME_LEN];
    emb_svc_put_name(key, EMB_SVC_NAME_LEN, m->owner);
    emb_svc_put_name(key + EMB_SVC_NAME_LEN, EMB_SVC_MET_NAME_LEN, m->name);
    uint64_t value = m->value;
    for (uint32_t i = 0; i < s->metric_count; i++) {
        if (memcmp(s->metrics[i].key, key, key_len) == 0) {
            s->metrics[i].value = value;
            s->count.metric_samples++;
            return;
        }
    }
    if (s->metric_count >= s->cfg.metrics) {
        s->count.metrics_full++;
        return;
    }
    memcpy(s->metrics[s->metric_count].key, key, key_len);
    s->metrics[s->metric_count].value = value;
    s->metric_count++;
    s->count.metric_samples++;
}

static void take_log(struct emb_events_sink *s, const struct emb_svc_msg *m)
{
    struct log_line *l = &s->logs[s->log_total % s->cfg.log_lines];
    emb_svc_put_name(l->owner, EMB_SVC_NAME_LEN, m->u.log.owner);
    l->len = (uint16_t)m->u.log.len;
    memcpy(l->text, m->u.log.text, m->u.log.len);
    /* A LOGS reply frames lines with '\n' and owner from text with 0x1F: keep both out. */
    for (uint16_t i = 0; i < l->len; i++)
        if (l->text[i] == '\n' || l->text[i] == EMB_SVC_LOG_SEP)
            l->text[i] = ' ';
    s->log_total++;
}

/* ---- Queries ---- */

static long reply_status(const struct emb_events_sink *s, uint8_t *reply)
{
    struct emb_svc_status st = {
        .capacity = s->cfg.capacity,
        .accepted = s->count.accepted,
        .dropped = s->count.dropped,
        .held = events_held(s),
        .malformed = s->count.malformed,
        .faults = s->count.faults,
    };
    return (long)emb_svc_encode_status_reply(reply, EMB_EVENTS_REPLY_MAX, &st);
}

static long reply_dump(const struct emb_events_sink *s, uint8_t count, uint8_t *reply)
{
    uint32_t n = events_held(s);
    if (n > count)
        n = count;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = s->count.accepted - n + i;
        memcpy(reply + (size_t)i * EMB_SVC_EV_LEN,
               s->ring + (size_t)(k % s->cfg.capacity) * EMB_SVC_EV_LEN, EMB_SVC_EV_LEN);
    }
    return (long)n * EMB_SVC_EV_LEN;
}

static long reply_metrics(const struct emb_events_sink *s, uint8_t *reply)
{
    for (uint32_t i = 0; i < s->metric_count; i++) {
        uint8_t *rec = reply + (size_t)i * EMB_SVC_MET_LEN;
        memcpy(rec, s->metrics[i].key, EMB_SVC_NAME_LEN + EMB_SVC_MET_NAME_LEN);
        emb_put_le64(rec + EMB_SVC_MET_OFF_VALUE, s->metrics[i].value);
    }
    return (long)s->metric_count * EMB_SVC_MET_LEN;
}

static long reply_logs(const struct emb_events_sink *s, uint64_t since, uint8_t *reply)
{
    uint64_t newest = s->log_total;
    uint64_t held = newest < s->cfg.log_lines ? newest : s->cfg.log_lines;
    uint64_t oldest = held ? newest - held + 1 : 0;
    if (since > newest)
        since = 0; /* a cursor from before this sink started: everything is new to it */
    struct emb_svc_logs_header h = {.next = since, .oldest = oldest, .count = held};
    uint64_t first = since + 1;
    if (held && first < oldest) {
        h.wrapped = 1; /* lines since+1 .. oldest-1 were overwritten before being read */
        first = oldest;
    }
    size_t pos = EMB_SVC_LOGS_HDR_LEN;
    for (uint64_t k = first; held && k <= newest; k++) {
        const struct log_line *l = &s->logs[(k - 1) % s->cfg.log_lines];
        size_t owner_len = strnlen((const char *)l->owner, EMB_SVC_NAME_LEN);
        size_t need = owner_len + 1u + l->len + 1u;
        if (pos + need > s->cfg.logs_reply_max)
            break; /* the caller asks again from h.next */
        memcpy(reply + pos, l->owner, owner_len);
        pos += owner_len;
        reply[pos++] = EMB_SVC_LOG_SEP;
        memcpy(reply + pos, l->text, l->len);
        pos += l->len;
        reply[pos++] = '\n';
        h.next = k;
    }
    emb_svc_encode_logs_header(reply, EMB_SVC_LOGS_HDR_LEN, &h);
    return (long)pos;
}

/* The name a decoded intake message claims for its emitter. */
static const char *claimed_name(const struct emb_svc_msg *m)
{
    switch (m->op) {
    case EMB_SVC_OP_EVENT: return m->u.event.caller;
    case EMB_SVC_OP_METRIC: return m->u.metric.owner;
    case EMB_SVC_OP_LOG: return m->u.log.owner;
    case EMB_SVC_OP_LOSSES: return m->u.losses.owner;
    default: return NULL;
    }
}

/* Stores what an intake message brings. */
static void take(struct emb_events_sink *s, const struct emb_svc_msg *m, uint32_t now_s)
{
    switch (m->op) {
    case EMB_SVC_OP_EVENT: take_event(s, &m->u.event, now_s); break;
    case EMB_SVC_OP_METRIC: take_metric(s, &m->u.metric); break;
    case EMB_SVC_OP_LOG: take_log(s, m); break;
    case EMB_SVC_OP_LOSSES: take_losses(s, &m->u.losses); break;
    default: break;
    }
}

/* The reply to a query, or -1 when the message is no query. */
static long answer(struct emb_events_sink *s, const struct emb_svc_msg *m, uint8_t *reply)
{
    switch (m->op) {
    case EMB_SVC_OP_STATUS: return reply_status(s, reply);
    case EMB_SVC_OP_DUMP: return reply_dump(s, m->u.dump_count, reply);
    case EMB_SVC_OP_METRICS: return reply_metrics(s, reply);
    case EMB_SVC_OP_LOGS: return reply_logs(s, m->u.since, reply);
    default: return -1;
    }
}

static long handle(struct emb_events_sink *s, enum emb_events_origin from, const char *bound,
                   const uint8_t *msg, size_t len, uint32_t now_s, uint8_t *reply)
{
    struct emb_svc_msg m;
    bool query = from == EMB_EVENTS_FROM_QUERY;
    long refused = query ? 0 : -1;
    if (emb_svc_decode_msg(msg, len, &m, NULL) != EMB_OK) {
        s->count.malformed++;
        return refused;
    }
    const char *claimed = claimed_name(&m);
    if (bound != NULL && claimed != NULL &&
        strncmp(claimed, bound, EMB_SVC_NAME_LEN) != 0) {
        s->count.faults++; /* an emitter speaking as another service */
        return refused;
    }
    bool intake_op = m.op == EMB_SVC_OP_EVENT || m.op == EMB_SVC_OP_METRIC ||
                     m.op == EMB_SVC_OP_LOG || m.op == EMB_SVC_OP_LOSSES;
    if (intake_op == query) {
        /* Emission through the query socket would bypass the capability; a query on the
         * intake has nowhere to send its answer. */
        s->count.malformed++;
        return refused;
    }
    if (!query) {
        take(s, &m, now_s);
        return -1;
    }
    long n = answer(s, &m, reply);
    if (n < 0) {
        s->count.malformed++; /* decodes, but asks nothing the sink answers */
        return refused;
    }
    s->count.queries++;
    return n;
}

long emb_events_sink_handle(struct emb_events_sink *s, enum emb_events_origin from,
                            const uint8_t *msg, size_t len, uint32_t now_s, uint8_t *reply)
{
    return handle(s, from, NULL, msg, len, now_s, reply);
}

long emb_events_sink_handle_bound(struct emb_events_sink *s, const char *name,
                                  const uint8_t *msg, size_t len, uint32_t now_s)
{
    return handle(s, EMB_EVENTS_FROM_INTAKE, name, msg, len, now_s, NULL);
}
