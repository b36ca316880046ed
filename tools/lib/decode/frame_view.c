/* The frame reader with views and a problem sink (frame_decode.h), on the frame decoder:
 * what the deferred log's decoder reads its frames with. */
#include "frame_decode.h"

#include <stdio.h>
#include <string.h>

#include "problem.h"

static void view_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    struct emb_frame_decoder *d = arg;
    d->first = false;
    d->frames++;
    if (d->cb.frame != NULL) {
        /* Called at the delimiter, which the decoder has just counted. */
        struct emb_frame_view v = {ch, p, len, off, emb_frame_dec_stats(d->dec)->bytes - 1u};
        d->cb.frame(d->cb.arg, &v);
    }
}

static void view_error(void *arg, enum emb_frame_error err, uint64_t off, size_t bytes)
{
    struct emb_frame_decoder *d = arg;
    bool first = d->first && off == 0u && !d->finishing;
    d->first = false;
    d->bad_frames++;
    if (d->cb.problems == NULL)
        return;
    char msg[160];
    const char *why = err == EMB_FRAME_BAD_COBS      ? "broken COBS encoding"
                      : err == EMB_FRAME_TOO_SHORT   ? "frame shorter than channel and CRC"
                      : err == EMB_FRAME_BAD_CRC     ? "CRC mismatch"
                      : err == EMB_FRAME_BAD_CHANNEL ? "channel above 15"
                                                     : NULL;
    if (d->finishing)
        snprintf(msg, sizeof msg, "stream ends inside a frame (%zu bytes without a delimiter)",
                 bytes);
    else if (why == NULL)
        snprintf(msg, sizeof msg, "frame longer than %zu bytes: skipped to the next delimiter",
                 d->max_bytes);
    else if (first) /* we may have joined mid-frame: not the stream's fault */
        snprintf(msg, sizeof msg, "skipped %zu bytes before the first frame delimiter "
                 "(a stream joined mid-frame)", bytes);
    else
        snprintf(msg, sizeof msg, "bad frame (%s, %zu bytes): skipped", why, bytes);
    emb_report(d->cb.problems, first ? EMB_NOTE : EMB_WARNING, (long long)off, "%s", msg);
}

bool emb_frame_decoder_init(struct emb_frame_decoder *d, size_t max_payload,
                            const struct emb_frame_callbacks *cb)
{
    memset(d, 0, sizeof *d);
    if (cb != NULL)
        d->cb = *cb;
    d->first = true;
    d->max_bytes = EMB_FRAME_WIRE_MAX(max_payload ? max_payload : EMB_FRAME_DEFAULT_MAX_PAYLOAD);
    d->dec = emb_frame_dec_new(max_payload, false, view_frame, view_error, d);
    return d->dec != NULL;
}

void emb_frame_decoder_free(struct emb_frame_decoder *d)
{
    emb_frame_dec_free(d->dec);
    d->dec = NULL;
}

void emb_frame_decoder_feed(struct emb_frame_decoder *d, const uint8_t *data, size_t len)
{
    emb_frame_dec_feed(d->dec, data, len);
}

void emb_frame_decoder_finish(struct emb_frame_decoder *d)
{
    d->finishing = true;
    emb_frame_dec_finish(d->dec);
    d->finishing = false;
}
