/* Service IPC tracing: the emitter's state machine (emb/svc_trace.h). The messages it
 * builds are the wire codec's (src/wire/svc_codec.c). Freestanding: the only platform
 * calls are emb_port_svc_resolve() and emb_port_svc_send(). */
#include <emb/svc_trace.h>

#include <string.h>

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
    size_t n = emb_svc_name_len(name, len);
    return emb__svc_bytes_equal(cell, name, n) && (n == len || cell[n] == '\0');
}

static bool emb__svc_is_sink(const char *peer)
{
    static const char sink[] = EMB_SVC_SINK_NAME;
    return emb_svc_name_len(peer, EMB_SVC_PEER_LEN) == sizeof sink - 1 &&
           emb__svc_bytes_equal(peer, sink, sizeof sink - 1);
}

/* ---- Emitter: names and opcode offsets ---- */

emb_status emb_svc_trace_set_caller(struct emb_svc_trace *t, const char *name)
{
    if (name == NULL || name[0] == '\0' || emb_svc_name_len(name, EMB_SVC_NAME_LEN + 1) >
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
    /* at_s is the sink's clock, not ours; a peer name longer than its cell is cut. */
    struct emb_svc_event ev = {
        .seq = ++t->seq,
        .op = (req != NULL && at < req_len) ? ((const uint8_t *)req)[at] : 0u,
        .kind = (uint8_t)kind,
    };
    memcpy(ev.caller, t->caller, EMB_SVC_NAME_LEN);
    size_t n = emb_svc_name_len(peer, EMB_SVC_PEER_LEN);
    memcpy(ev.peer, peer, n);
    ev.peer[n] = '\0';
    return emb_svc_encode_event_msg(buf, cap, &ev);
}

size_t emb_svc_trace_encode_metric(const struct emb_svc_trace *t, uint8_t *buf, size_t cap,
                                   const char *name, uint64_t value)
{
    if (!t->caller_set || name == NULL || name[0] == '\0')
        return 0;
    struct emb_svc_metric m;
    memcpy(m.owner, t->caller, EMB_SVC_NAME_LEN);
    m.owner[EMB_SVC_NAME_LEN] = '\0';
    size_t n = emb_svc_name_len(name, EMB_SVC_MET_NAME_LEN);
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
