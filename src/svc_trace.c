/* Service IPC tracing: the wire codec and the emitter's state machine. Freestanding: the only
 * platform calls are emb_port_svc_resolve() and emb_port_svc_send(). */
#include <emb/svc_trace.h>
#include <emb/wire.h>

#include <string.h>

/* Bytes of `name` up to `cell` (a name may fill its cell with no terminator). */
static size_t emb__svc_name_len(const char *name, size_t cell)
{
    size_t n = 0;
    while (n < cell && name[n] != '\0')
        n++;
    return n;
}

void emb_svc_put_name(uint8_t *dst, size_t cell, const char *name)
{
    size_t i = 0;
    if (name != NULL)
        for (; i < cell && name[i] != '\0'; i++)
            dst[i] = (uint8_t)name[i];
    for (; i < cell; i++)
        dst[i] = 0;
}

/* Reads a name cell into a NUL-terminated string (cell + 1 bytes); returns its length.
 * Bytes after the first NUL are ignored. */
static size_t emb__svc_get_name(char *dst, const uint8_t *src, size_t cell)
{
    size_t n = emb__svc_name_len((const char *)src, cell);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

/* memcmp() == 0 without libc beyond memcpy/memset. */
static bool emb__svc_bytes_equal(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Whether a name cell of `len` bytes holds `name` as the wire would carry it (cut at len). */
static bool emb__svc_same_name(const char *cell, const char *name, size_t len)
{
    size_t n = emb__svc_name_len(name, len);
    return emb__svc_bytes_equal(cell, name, n) && (n == len || cell[n] == '\0');
}

static bool emb__svc_is_sink(const char *peer)
{
    static const char sink[] = EMB_SVC_SINK_NAME;
    return emb__svc_name_len(peer, EMB_SVC_PEER_LEN) == sizeof sink - 1 &&
           emb__svc_bytes_equal(peer, sink, sizeof sink - 1);
}

/* ---- Encoders ---- */

/* The one encoder of the event record. Names are NUL-terminated or fill their cell. */
static void emb__svc_put_event(uint8_t *rec, uint32_t seq, uint32_t at_s, const char *caller,
                               const char *peer, uint8_t op, uint8_t kind)
{
    emb_put_le32(rec + EMB_SVC_EV_OFF_SEQ, seq);
    emb_put_le32(rec + EMB_SVC_EV_OFF_AT_S, at_s);
    emb_svc_put_name(rec + EMB_SVC_EV_OFF_CALLER, EMB_SVC_NAME_LEN, caller);
    emb_svc_put_name(rec + EMB_SVC_EV_OFF_PEER, EMB_SVC_PEER_LEN, peer);
    rec[EMB_SVC_EV_OFF_OP] = op;
    rec[EMB_SVC_EV_OFF_KIND] = kind;
}

size_t emb_svc_encode_event_record(uint8_t *buf, size_t cap, const struct emb_svc_event *ev)
{
    if (cap < EMB_SVC_EV_LEN)
        return 0;
    emb__svc_put_event(buf, ev->seq, ev->at_s, ev->caller, ev->peer, ev->op, ev->kind);
    return EMB_SVC_EV_LEN;
}

size_t emb_svc_encode_metric_record(uint8_t *buf, size_t cap, const struct emb_svc_metric *m)
{
    if (cap < EMB_SVC_MET_LEN)
        return 0;
    emb_svc_put_name(buf + EMB_SVC_MET_OFF_OWNER, EMB_SVC_NAME_LEN, m->owner);
    emb_svc_put_name(buf + EMB_SVC_MET_OFF_NAME, EMB_SVC_MET_NAME_LEN, m->name);
    emb_put_le64(buf + EMB_SVC_MET_OFF_VALUE, m->value);
    return EMB_SVC_MET_LEN;
}

size_t emb_svc_encode_event_msg(uint8_t *buf, size_t cap, const struct emb_svc_event *ev)
{
    if (cap < EMB_SVC_MSG_EVENT_LEN)
        return 0;
    buf[0] = EMB_SVC_OP_EVENT;
    return 1u + emb_svc_encode_event_record(buf + 1, cap - 1, ev);
}

size_t emb_svc_encode_metric_msg(uint8_t *buf, size_t cap, const struct emb_svc_metric *m)
{
    if (cap < EMB_SVC_MSG_METRIC_LEN)
        return 0;
    buf[0] = EMB_SVC_OP_METRIC;
    return 1u + emb_svc_encode_metric_record(buf + 1, cap - 1, m);
}

size_t emb_svc_encode_log_msg(uint8_t *buf, size_t cap, const char *owner, const void *text,
                              size_t len)
{
    if (len > EMB_SVC_LOG_TEXT_MAX)
        len = EMB_SVC_LOG_TEXT_MAX; /* at the byte count, not a character boundary */
    if (cap < EMB_SVC_MSG_LOG_MIN + len || (len > 0 && text == NULL))
        return 0;
    buf[0] = EMB_SVC_OP_LOG;
    emb_svc_put_name(buf + 1, EMB_SVC_NAME_LEN, owner);
    if (len > 0)
        memcpy(buf + EMB_SVC_MSG_LOG_MIN, text, len);
    return EMB_SVC_MSG_LOG_MIN + len;
}

size_t emb_svc_encode_losses_msg(uint8_t *buf, size_t cap, const struct emb_svc_losses *l)
{
    if (cap < EMB_SVC_MSG_LOSSES_LEN)
        return 0;
    buf[0] = EMB_SVC_OP_LOSSES;
    emb_svc_put_name(buf + EMB_SVC_LS_OFF_OWNER, EMB_SVC_NAME_LEN, l->owner);
    emb_put_le32(buf + EMB_SVC_LS_OFF_SEQ, l->seq);
    emb_put_le32(buf + EMB_SVC_LS_OFF_REFUSED, l->refused);
    return EMB_SVC_MSG_LOSSES_LEN;
}

size_t emb_svc_encode_dump(uint8_t *buf, size_t cap, uint8_t count)
{
    if (cap < EMB_SVC_MSG_DUMP_LEN)
        return 0;
    buf[0] = EMB_SVC_OP_DUMP;
    buf[1] = count;
    return EMB_SVC_MSG_DUMP_LEN;
}

static size_t emb__svc_encode_op(uint8_t *buf, size_t cap, uint8_t op)
{
    if (cap < 1)
        return 0;
    buf[0] = op;
    return 1;
}

size_t emb_svc_encode_status(uint8_t *buf, size_t cap)
{
    return emb__svc_encode_op(buf, cap, EMB_SVC_OP_STATUS);
}

size_t emb_svc_encode_metrics(uint8_t *buf, size_t cap)
{
    return emb__svc_encode_op(buf, cap, EMB_SVC_OP_METRICS);
}

size_t emb_svc_encode_logs(uint8_t *buf, size_t cap, uint64_t since)
{
    if (cap < EMB_SVC_MSG_LOGS_LEN)
        return 0;
    buf[0] = EMB_SVC_OP_LOGS;
    emb_put_le64(buf + 1, since);
    return EMB_SVC_MSG_LOGS_LEN;
}

size_t emb_svc_encode_status_reply(uint8_t *buf, size_t cap, const struct emb_svc_status *st)
{
    if (cap < EMB_SVC_STATUS_LEN)
        return 0;
    emb_put_le32(buf + EMB_SVC_ST_OFF_CAPACITY, st->capacity);
    emb_put_le64(buf + EMB_SVC_ST_OFF_ACCEPTED, st->accepted);
    emb_put_le64(buf + EMB_SVC_ST_OFF_DROPPED, st->dropped);
    emb_put_le32(buf + EMB_SVC_ST_OFF_HELD, st->held);
    emb_put_le64(buf + EMB_SVC_ST_OFF_MALFORMED, st->malformed);
    emb_put_le64(buf + EMB_SVC_ST_OFF_FAULTS, st->faults);
    return EMB_SVC_STATUS_LEN;
}

size_t emb_svc_encode_logs_header(uint8_t *buf, size_t cap, const struct emb_svc_logs_header *h)
{
    if (cap < EMB_SVC_LOGS_HDR_LEN)
        return 0;
    emb_put_le64(buf + EMB_SVC_LG_OFF_NEXT, h->next);
    emb_put_le64(buf + EMB_SVC_LG_OFF_OLDEST, h->oldest);
    emb_put_le64(buf + EMB_SVC_LG_OFF_COUNT, h->count);
    buf[EMB_SVC_LG_OFF_WRAPPED] = h->wrapped ? 1u : 0u;
    return EMB_SVC_LOGS_HDR_LEN;
}

/* ---- Decoders ---- */

static emb_status emb__svc_bad(size_t *bad_at, size_t offset)
{
    if (bad_at)
        *bad_at = offset;
    return EMB_E_CORRUPT;
}

emb_status emb_svc_decode_event_record(const uint8_t *rec, struct emb_svc_event *ev,
                                       size_t *bad_at)
{
    ev->seq = emb_get_le32(rec + EMB_SVC_EV_OFF_SEQ);
    ev->at_s = emb_get_le32(rec + EMB_SVC_EV_OFF_AT_S);
    if (emb__svc_get_name(ev->caller, rec + EMB_SVC_EV_OFF_CALLER, EMB_SVC_NAME_LEN) == 0)
        return emb__svc_bad(bad_at, EMB_SVC_EV_OFF_CALLER);
    emb__svc_get_name(ev->peer, rec + EMB_SVC_EV_OFF_PEER, EMB_SVC_PEER_LEN);
    ev->op = rec[EMB_SVC_EV_OFF_OP];
    ev->kind = rec[EMB_SVC_EV_OFF_KIND];
    if (ev->kind == 0 || ev->kind > EMB_SVC_KIND_MAX)
        return emb__svc_bad(bad_at, EMB_SVC_EV_OFF_KIND);
    return EMB_OK;
}

emb_status emb_svc_decode_metric_record(const uint8_t *rec, struct emb_svc_metric *m,
                                        size_t *bad_at)
{
    if (emb__svc_get_name(m->owner, rec + EMB_SVC_MET_OFF_OWNER, EMB_SVC_NAME_LEN) == 0)
        return emb__svc_bad(bad_at, EMB_SVC_MET_OFF_OWNER);
    if (emb__svc_get_name(m->name, rec + EMB_SVC_MET_OFF_NAME, EMB_SVC_MET_NAME_LEN) == 0)
        return emb__svc_bad(bad_at, EMB_SVC_MET_OFF_NAME);
    m->value = emb_get_le64(rec + EMB_SVC_MET_OFF_VALUE);
    return EMB_OK;
}

/* Decodes a record that follows the opcode, shifting a reported offset past it. */
static emb_status emb__svc_shift(emb_status st, size_t *bad_at)
{
    if (st != EMB_OK && bad_at)
        *bad_at += 1u;
    return st;
}

emb_status emb_svc_decode_msg(const uint8_t *msg, size_t len, struct emb_svc_msg *out,
                              size_t *bad_at)
{
    if (len == 0)
        return emb__svc_bad(bad_at, 0);
    out->op = msg[0];
    switch (msg[0]) {
    case EMB_SVC_OP_EVENT:
        if (len != EMB_SVC_MSG_EVENT_LEN)
            break;
        return emb__svc_shift(emb_svc_decode_event_record(msg + 1, &out->u.event, bad_at), bad_at);
    case EMB_SVC_OP_METRIC:
        if (len != EMB_SVC_MSG_METRIC_LEN)
            break;
        return emb__svc_shift(emb_svc_decode_metric_record(msg + 1, &out->u.metric, bad_at),
                              bad_at);
    case EMB_SVC_OP_LOG:
        if (len < EMB_SVC_MSG_LOG_MIN || len > EMB_SVC_MSG_LOG_MAX)
            break;
        if (emb__svc_get_name(out->u.log.owner, msg + 1, EMB_SVC_NAME_LEN) == 0)
            return emb__svc_bad(bad_at, 1);
        out->u.log.text = msg + EMB_SVC_MSG_LOG_MIN;
        out->u.log.len = len - EMB_SVC_MSG_LOG_MIN;
        return EMB_OK;
    case EMB_SVC_OP_LOSSES:
        if (len != EMB_SVC_MSG_LOSSES_LEN)
            break;
        if (emb__svc_get_name(out->u.losses.owner, msg + EMB_SVC_LS_OFF_OWNER,
                              EMB_SVC_NAME_LEN) == 0)
            return emb__svc_bad(bad_at, EMB_SVC_LS_OFF_OWNER);
        out->u.losses.seq = emb_get_le32(msg + EMB_SVC_LS_OFF_SEQ);
        out->u.losses.refused = emb_get_le32(msg + EMB_SVC_LS_OFF_REFUSED);
        return EMB_OK;
    case EMB_SVC_OP_DUMP:
        if (len != EMB_SVC_MSG_DUMP_LEN)
            break;
        out->u.dump_count = msg[1];
        return EMB_OK;
    case EMB_SVC_OP_STATUS:
    case EMB_SVC_OP_METRICS:
        if (len != 1)
            break;
        return EMB_OK;
    case EMB_SVC_OP_LOGS:
        /* A bare [7] is "everything held", as since = 0. */
        if (len == 1) {
            out->u.since = 0;
            return EMB_OK;
        }
        if (len != EMB_SVC_MSG_LOGS_LEN)
            break;
        out->u.since = emb_get_le64(msg + 1);
        return EMB_OK;
    default:
        return emb__svc_bad(bad_at, 0); /* unknown opcode */
    }
    /* Wrong length for a known opcode: point at the first byte that should not be there,
     * or at the end when the message is short. */
    return emb__svc_bad(bad_at, len);
}

emb_status emb_svc_decode_status_reply(const uint8_t *buf, size_t len, struct emb_svc_status *st,
                                       size_t *bad_at)
{
    if (len < EMB_SVC_STATUS_MIN)
        return emb__svc_bad(bad_at, len);
    st->capacity = emb_get_le32(buf + EMB_SVC_ST_OFF_CAPACITY);
    st->accepted = emb_get_le64(buf + EMB_SVC_ST_OFF_ACCEPTED);
    st->dropped = emb_get_le64(buf + EMB_SVC_ST_OFF_DROPPED);
    st->held = 0;
    st->malformed = 0;
    st->faults = 0;
    if (len >= EMB_SVC_STATUS_V1_LEN) {
        st->held = emb_get_le32(buf + EMB_SVC_ST_OFF_HELD);
        st->malformed = emb_get_le64(buf + EMB_SVC_ST_OFF_MALFORMED);
    }
    if (len >= EMB_SVC_STATUS_LEN)
        st->faults = emb_get_le64(buf + EMB_SVC_ST_OFF_FAULTS);
    return EMB_OK;
}

emb_status emb_svc_decode_logs_header(const uint8_t *buf, size_t len,
                                      struct emb_svc_logs_header *h, size_t *bad_at)
{
    if (len < EMB_SVC_LOGS_HDR_LEN)
        return emb__svc_bad(bad_at, len);
    h->next = emb_get_le64(buf + EMB_SVC_LG_OFF_NEXT);
    h->oldest = emb_get_le64(buf + EMB_SVC_LG_OFF_OLDEST);
    h->count = emb_get_le64(buf + EMB_SVC_LG_OFF_COUNT);
    h->wrapped = buf[EMB_SVC_LG_OFF_WRAPPED];
    if (h->wrapped > 1)
        return emb__svc_bad(bad_at, EMB_SVC_LG_OFF_WRAPPED);
    return EMB_OK;
}

const char *emb_svc_kind_name(uint8_t kind)
{
    static const char *const names[] = {"?",       "request",   "reply",      "timeout",
                                        "peer_lost", "queue_full", "aborted"};
    return kind <= EMB_SVC_KIND_MAX ? names[kind] : "?";
}

/* ---- Emitter: names and opcode offsets ---- */

emb_status emb_svc_trace_set_caller(struct emb_svc_trace *t, const char *name)
{
    if (name == NULL || name[0] == '\0' || emb__svc_name_len(name, EMB_SVC_NAME_LEN + 1) >
                                               EMB_SVC_NAME_LEN)
        return EMB_E_INVALID;
    if (t->caller_set)
        return EMB_E_STATE;
    emb_svc_put_name((uint8_t *)t->caller, EMB_SVC_NAME_LEN, name);
    t->caller_set = 1;
    return EMB_OK;
}

bool emb_svc_trace_caller_set(const struct emb_svc_trace *t)
{
    return t->caller_set != 0;
}

static int emb__svc_find_peer(const struct emb_svc_trace *t, const char *peer)
{
    for (unsigned i = 0; i < t->peer_count; i++)
        if (emb__svc_same_name(t->peers[i].peer, peer, EMB_SVC_PEER_LEN))
            return (int)i;
    return -1;
}

emb_status emb_svc_trace_set_op_offset(struct emb_svc_trace *t, const char *peer, uint16_t at)
{
    if (peer == NULL || peer[0] == '\0')
        return EMB_E_INVALID;
    int i = emb__svc_find_peer(t, peer);
    if (i < 0) {
        if (t->peer_count >= CONFIG_EMB_SVC_TRACE_PEERS)
            return EMB_E_NOSPACE;
        i = t->peer_count++;
        emb_svc_put_name((uint8_t *)t->peers[i].peer, EMB_SVC_PEER_LEN, peer);
    }
    t->peers[i].at = at;
    return EMB_OK;
}

uint16_t emb_svc_trace_op_offset(const struct emb_svc_trace *t, const char *peer)
{
    int i = emb__svc_find_peer(t, peer);
    return i < 0 ? 0 : t->peers[i].at;
}

/* ---- Emitter: encoding with this service's identity ---- */

size_t emb_svc_trace_encode(struct emb_svc_trace *t, uint8_t *buf, size_t cap, const char *peer,
                            const void *req, size_t req_len, enum emb_svc_kind kind)
{
    if (!t->caller_set || cap < EMB_SVC_MSG_EVENT_LEN || peer == NULL ||
        (unsigned)kind == 0 || (unsigned)kind > EMB_SVC_KIND_MAX)
        return 0;
    uint16_t at = emb_svc_trace_op_offset(t, peer);
    uint8_t op = (req != NULL && at < req_len) ? ((const uint8_t *)req)[at] : 0u;
    buf[0] = EMB_SVC_OP_EVENT;
    /* at_s is the sink's clock, not ours; a peer name longer than its cell is cut. */
    emb__svc_put_event(buf + 1, ++t->seq, 0, t->caller, peer, op, (uint8_t)kind);
    return EMB_SVC_MSG_EVENT_LEN;
}

size_t emb_svc_trace_encode_metric(const struct emb_svc_trace *t, uint8_t *buf, size_t cap,
                                   const char *name, uint64_t value)
{
    if (!t->caller_set || name == NULL || name[0] == '\0')
        return 0;
    struct emb_svc_metric m;
    memcpy(m.owner, t->caller, EMB_SVC_NAME_LEN);
    m.owner[EMB_SVC_NAME_LEN] = '\0';
    size_t n = emb__svc_name_len(name, EMB_SVC_MET_NAME_LEN);
    memcpy(m.name, name, n);
    m.name[n] = '\0';
    m.value = value;
    return emb_svc_encode_metric_msg(buf, cap, &m);
}

size_t emb_svc_trace_encode_log(const struct emb_svc_trace *t, uint8_t *buf, size_t cap,
                                const void *text, size_t len)
{
    if (!t->caller_set)
        return 0;
    char owner[EMB_SVC_NAME_LEN + 1];
    memcpy(owner, t->caller, EMB_SVC_NAME_LEN);
    owner[EMB_SVC_NAME_LEN] = '\0';
    return emb_svc_encode_log_msg(buf, cap, owner, text, len);
}

size_t emb_svc_trace_encode_losses(const struct emb_svc_trace *t, uint8_t *buf, size_t cap)
{
    if (!t->caller_set)
        return 0;
    struct emb_svc_losses l = {.seq = t->seq, .refused = t->send_failures};
    memcpy(l.owner, t->caller, EMB_SVC_NAME_LEN);
    l.owner[EMB_SVC_NAME_LEN] = '\0';
    return emb_svc_encode_losses_msg(buf, cap, &l);
}

/* ---- Emitter: resolution ---- */

static void emb__svc_set_state(struct emb_svc_trace *t, uint32_t state)
{
    __atomic_store_n(&t->state, state, __ATOMIC_RELAXED);
}

bool emb_svc_trace_resolved(const struct emb_svc_trace *t)
{
    uint32_t s = __atomic_load_n(&t->state, __ATOMIC_RELAXED);
    return s == EMB_SVC_STATE_TRACING || s == EMB_SVC_STATE_UNTRACED;
}

bool emb_svc_trace_should_resolve(struct emb_svc_trace *t)
{
    switch (__atomic_load_n(&t->state, __ATOMIC_RELAXED)) {
    case EMB_SVC_STATE_UNRESOLVED:
        return true;
    case EMB_SVC_STATE_MISSING:
        if (++t->calls_since_miss < EMB_SVC_RESOLVE_RETRY_EVERY)
            return false;
        t->calls_since_miss = 0;
        return true;
    default:
        return false;
    }
}

void emb_svc_trace_set_sink(struct emb_svc_trace *t, uint32_t slot, uint32_t sink_id)
{
    uint32_t s = __atomic_load_n(&t->state, __ATOMIC_RELAXED);
    if (slot == EMB_SVC_NO_SLOT) {
        /* A miss never undoes a latch: once found, the sink is kept. */
        if (s == EMB_SVC_STATE_TRACING)
            return;
        t->misses++;
        t->calls_since_miss = 0;
        emb__svc_set_state(t, EMB_SVC_STATE_MISSING);
        return;
    }
    if (s == EMB_SVC_STATE_TRACING) {
        if (slot == t->slot && sink_id == t->sink_id)
            return;
        t->sink_changed = 1;
    } else if (t->misses > 0) {
        t->late_misses = t->misses;
    }
    t->slot = slot;
    t->sink_id = sink_id;
    emb__svc_set_state(t, EMB_SVC_STATE_TRACING);
}

void emb_svc_trace_set_untraced(struct emb_svc_trace *t)
{
    if (__atomic_load_n(&t->state, __ATOMIC_RELAXED) == EMB_SVC_STATE_TRACING)
        return;
    emb__svc_set_state(t, EMB_SVC_STATE_UNTRACED);
}

uint32_t emb_svc_trace_sink_slot(const struct emb_svc_trace *t)
{
    return __atomic_load_n(&t->state, __ATOMIC_RELAXED) == EMB_SVC_STATE_TRACING
               ? t->slot
               : EMB_SVC_NO_SLOT;
}

uint32_t emb_svc_trace_take_late_resolve(struct emb_svc_trace *t)
{
    uint32_t n = t->late_misses;
    t->late_misses = 0;
    return n;
}

bool emb_svc_trace_take_sink_changed(struct emb_svc_trace *t)
{
    bool changed = t->sink_changed != 0;
    t->sink_changed = 0;
    return changed;
}

/* ---- Emitter: slow paths ---- */

/* Resolves when due; returns the slot to send on, or EMB_SVC_NO_SLOT. */
static uint32_t emb__svc_ready(struct emb_svc_trace *t)
{
    if (emb_svc_trace_should_resolve(t)) {
        uint32_t slot = EMB_SVC_NO_SLOT, id = 0;
        switch (emb_port_svc_resolve(&slot, &id)) {
        case EMB_SVC_RESOLVE_OK:
            emb_svc_trace_set_sink(t, slot, id);
            break;
        case EMB_SVC_RESOLVE_MISS:
            emb_svc_trace_set_sink(t, EMB_SVC_NO_SLOT, 0);
            break;
        default:
            emb_svc_trace_set_untraced(t);
            break;
        }
    }
    return emb_svc_trace_sink_slot(t);
}

/* Tells the sink of refused sends it has not heard of, before anything else goes: a gap
 * in the sequence then always arrives explained, by the emitter's own count. False when
 * the report found no room (then nothing else would either). */
static bool emb__svc_report_losses(struct emb_svc_trace *t, uint32_t slot)
{
    if (t->send_failures == t->refused_reported || !t->caller_set)
        return true;
    uint8_t msg[EMB_SVC_MSG_LOSSES_LEN];
    uint32_t refused = t->send_failures;
    if (!emb_port_svc_send(slot, msg, emb_svc_trace_encode_losses(t, msg, sizeof msg)))
        return false;
    t->refused_reported = refused;
    return true;
}

bool emb_svc_trace_flush(struct emb_svc_trace *t)
{
    uint32_t slot = emb_svc_trace_sink_slot(t);
    return slot == EMB_SVC_NO_SLOT || emb__svc_report_losses(t, slot);
}

/* Sends one message, after any losses not yet reported. */
static void emb__svc_send(struct emb_svc_trace *t, uint32_t slot, const uint8_t *msg, size_t len)
{
    if (len == 0) {
        t->unnamed++;
        return;
    }
    if (emb__svc_report_losses(t, slot) && emb_port_svc_send(slot, msg, len))
        t->sent++;
    else
        t->send_failures++;
}

void emb_svc_trace_call_slow(struct emb_svc_trace *t, const char *peer, const void *req,
                             size_t req_len, enum emb_svc_kind kind)
{
    if (peer == NULL || emb__svc_is_sink(peer))
        return;
    uint32_t slot = emb__svc_ready(t);
    if (slot == EMB_SVC_NO_SLOT)
        return;
    if (t->caller_set && !emb__svc_report_losses(t, slot)) {
        /* The report goes first, carrying the numbers used before this event's; with no
         * room for it this event is refused too, its number used all the same. */
        t->seq++;
        t->send_failures++;
        return;
    }
    uint8_t msg[EMB_SVC_MSG_EVENT_LEN];
    emb__svc_send(t, slot, msg, emb_svc_trace_encode(t, msg, sizeof msg, peer, req, req_len, kind));
}

void emb_svc_trace_metric_slow(struct emb_svc_trace *t, const char *name, uint64_t value)
{
    uint32_t slot = emb__svc_ready(t);
    if (slot == EMB_SVC_NO_SLOT)
        return;
    uint8_t msg[EMB_SVC_MSG_METRIC_LEN];
    emb__svc_send(t, slot, msg, emb_svc_trace_encode_metric(t, msg, sizeof msg, name, value));
}

void emb_svc_trace_log_slow(struct emb_svc_trace *t, const void *text, size_t len)
{
    uint32_t slot = emb__svc_ready(t);
    if (slot == EMB_SVC_NO_SLOT)
        return;
    uint8_t msg[EMB_SVC_MSG_LOG_MAX];
    emb__svc_send(t, slot, msg, emb_svc_trace_encode_log(t, msg, sizeof msg, text, len));
}
