/* The service-event wire format (emb/svc_codec.h): the one encoder and the one decoder of
 * every message to the `events` sink and every reply it sends. Freestanding: no port. */
#include <emb/svc_codec.h>
#include <emb/wire.h>

#include <string.h>

size_t emb_svc_name_len(const char *name, size_t cell)
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
    size_t n = emb_svc_name_len((const char *)src, cell);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}

/* ---- Encoders ---- */

/* The one encoder of the event record. Names are NUL-terminated or fill their cell. */
size_t emb_svc_encode_event_record(uint8_t *buf, size_t cap, const struct emb_svc_event *ev)
{
    if (cap < EMB_SVC_EV_LEN)
        return 0;
    emb_put_le32(buf + EMB_SVC_EV_OFF_SEQ, ev->seq);
    emb_put_le32(buf + EMB_SVC_EV_OFF_AT_S, ev->at_s);
    emb_svc_put_name(buf + EMB_SVC_EV_OFF_CALLER, EMB_SVC_NAME_LEN, ev->caller);
    emb_svc_put_name(buf + EMB_SVC_EV_OFF_PEER, EMB_SVC_PEER_LEN, ev->peer);
    buf[EMB_SVC_EV_OFF_OP] = ev->op;
    buf[EMB_SVC_EV_OFF_KIND] = ev->kind;
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
