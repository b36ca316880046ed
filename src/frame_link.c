/* The log and the trace as frames over one byte sink (emb/frame_link.h). */
#include <emb/frame_link.h>

#if CONFIG_EMB_FRAME_LINK

/* Counts what the sink took: a delimiter after anything but a delimiter ends a frame. */
static emb_status emb__sink(struct emb_frame_link *l, const uint8_t *bytes, uint32_t len)
{
    if (l->broken) {
        static const uint8_t delimiter = EMB_FRAME_DELIMITER;
        if (l->write(l->arg, &delimiter, 1u) != EMB_OK)
            return EMB_E_IO;
        l->stats.bytes++;
        l->broken = 0u;
        l->empty = 1u;
    }
    emb_status st = l->write(l->arg, bytes, len);
    if (st != EMB_OK)
        return st;
    l->stats.bytes += len;
    for (uint32_t i = 0; i < len; i++) {
        int was_empty = l->empty;
        l->empty = bytes[i] == EMB_FRAME_DELIMITER;
        if (l->empty && !was_empty) {
            l->stats.frames++;
            if (l->channel == EMB_FRAME_CH_LOG)
                l->stats.log_frames++;
            else if (l->channel == EMB_FRAME_CH_CRASH)
                l->stats.crash_frames++;
            else
                l->stats.trace_frames++;
        }
    }
    return EMB_OK;
}

/* The log's output. It hands each frame on in pieces, the last ending with the
 * delimiter; after a failed piece the rest of that frame is dropped, and the write says
 * EMB_OK so the log frees the records rather than keeping them for a sink that may not
 * come back. */
static emb_status emb__log_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    struct emb_frame_link *l = arg;
    int ends = len > 0u && bytes[len - 1u] == EMB_FRAME_DELIMITER;
    if (!l->log_dropping && emb__sink(l, bytes, len) != EMB_OK) {
        l->log_dropping = 1u;
        l->broken = 1u;
        l->stats.failed++;
    }
    if (ends)
        l->log_dropping = 0u;
    return EMB_OK;
}

static emb_status emb__trace_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    return emb__sink(arg, bytes, len);
}

/* emb_trace_link's sender: one frame through the streaming encoder, no copy. */
static emb_status emb__trace_send(void *arg, uint8_t channel, const void *payload, size_t len)
{
    struct emb_frame_link *l = arg;
    l->channel = channel;
    emb_frame_encode_begin(&l->enc, emb__trace_write, l, channel);
    emb_frame_encode_put(&l->enc, payload, len);
    emb_status st = emb_frame_encode_end(&l->enc);
    if (st != EMB_OK) {
        l->broken = 1u;
        l->stats.failed++;
    }
    return st;
}

emb_status emb_frame_link_init(struct emb_frame_link *l, const struct emb_frame_link_config *c)
{
    if (l == NULL || c == NULL || c->write == NULL)
        return EMB_E_INVALID;
    *l = (struct emb_frame_link){
        .write = c->write,
        .arg = c->arg,
        .log = {emb__log_write, l},
        .trace_ring = c->trace_ring,
        .log_ring = c->log_ring,
        .log_id = c->log_id,
        .hello_due = c->log_ring != NULL,
        /* A delimiter first: a reader already listening on a serial line skips the bytes
         * before the first one (it may have joined mid-frame), and would lose the first
         * frame, the log's hello. */
        .broken = 1u,
    };
    if (c->trace_ring != NULL)
        return emb_trace_link_init(&l->trace, emb__trace_send, l, c->header, c->header_cap,
                                   c->info, c->contexts, c->count, c->header_every);
    return EMB_OK;
}

static void emb__log_poll(struct emb_frame_link *l)
{
    if (l->log_ring == NULL)
        return;
    l->channel = EMB_FRAME_CH_LOG;
    if (l->hello_due) {
        static const struct emb_log_identity none = {0, 0};
        (void)emb_log_write_hello(&l->log, l->log_id != NULL ? l->log_id : &none);
        l->hello_due = 0u;
    }
    if (emb_log_drain(l->log_ring, &l->log, NULL) == EMB_E_BUSY)
        l->stats.log_busy++;
}

void emb_frame_link_poll(struct emb_frame_link *l)
{
    emb__log_poll(l);
    if (l->trace_ring != NULL)
        (void)emb_trace_link_drain(&l->trace, l->trace_ring);
}

void emb_frame_link_flush(struct emb_frame_link *l)
{
    if (l->trace_ring != NULL)
        (void)emb_trace_flush(l->trace_ring);
    emb_frame_link_poll(l);
    if (l->log_ring != NULL) {
        l->channel = EMB_FRAME_CH_LOG;
        (void)emb_log_write_stats(&l->log, l->log_ring);
    }
}

void emb_frame_link_announce(struct emb_frame_link *l)
{
    l->hello_due = l->log_ring != NULL;
    l->trace.header_due = 1u;
}

emb_status emb_frame_link_send_crash(struct emb_frame_link *l, const uint8_t *record, uint32_t len)
{
    if (l == NULL || record == NULL || len == 0u || len > EMB_FRAME_CRASH_MAX)
        return EMB_E_INVALID;
    return emb__trace_send(l, EMB_FRAME_CH_CRASH, record, len);
}

#else

typedef int emb__frame_link_compiled_out; /* ISO C wants a declaration in every file */

#endif /* CONFIG_EMB_FRAME_LINK */
