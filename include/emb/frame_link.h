/* The deferred log (channel 0) and the trace stream (channel 1) as frames over one byte
 * sink: a UART, a USB CDC endpoint, a DMA ring (docs/porting.md, "Over a UART").
 *
 *     static emb_status uart_write(void *arg, const uint8_t *bytes, uint32_t len);
 *
 *     static uint8_t header[EMB_TSF_HEADER_BYTES(1) + EMB_TSF_EXT_MAX];
 *     static struct emb_frame_link link;
 *     const struct emb_frame_link_config c = {
 *         .write = uart_write, .trace_ring = &ring, .header = header,
 *         .header_cap = sizeof header, .info = &info, .contexts = &cpu0, .count = 1,
 *         .header_every = 16, .log_ring = &log_ring, .log_id = &id,
 *     };
 *     emb_frame_link_init(&link, &c);
 *     for (;;) { emb_frame_link_poll(&link); wait_for_interrupt(); }   the idle loop
 *
 * It adds no encoder of its own: log frames come from emb_log_drain() and
 * emb_log_write_hello()/_stats(), trace frames from emb_trace_link through the streaming
 * frame encoder. Frames never interleave because one place sends them all: the caller of
 * emb_frame_link_poll() (an idle loop, a low-priority task), never two at once.
 * Producers never wait for the sink: the rings drop what does not fit and count it (the
 * trace's events_discarded, the log's dropped records); the link drains them as fast as
 * the sink takes bytes. A write that fails loses its frame, counted in `failed`; the next
 * frame then starts with a delimiter, so a reader loses that frame only. The link's
 * first byte is a delimiter too, so a reader that was listening takes the first frame
 * (the log's hello) whole.
 *
 * CONFIG_EMB_FRAME_LINK 0 compiles it out. */
#ifndef EMB_FRAME_LINK_H
#define EMB_FRAME_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <emb/frame.h>
#include <emb/log.h>
#include <emb/status.h>
#include <emb/trace.h>
#include <emb/trace_format.h>
#include <emb/trace_link.h>

#ifndef CONFIG_EMB_FRAME_LINK
#define CONFIG_EMB_FRAME_LINK 1
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct emb_frame_link_config {
    emb_frame_write_fn write;      /* the sink: takes the bytes or says it could not */
    void *arg;
    /* The trace (optional): the ring consumed in streaming mode, a buffer for the stream
     * header (EMB_TSF_HEADER_BYTES(count) + EMB_TSF_EXT_MAX), what the header says, and
     * the packets between its repeats (0: once) so a reader that joins late decodes. */
    struct emb_trace_ring *trace_ring;
    uint8_t *header;
    size_t header_cap;
    const struct emb_tsf_info *info;
    const struct emb_tsf_context *contexts;
    uint16_t count;
    uint32_t header_every;
    /* The log (optional): the ring drained, and the hello frame's identity. */
    struct emb_log_ring *log_ring;
    const struct emb_log_identity *log_id;
};

struct emb_frame_link_stats {
    uint32_t frames;       /* frames written whole (delimiters), both channels */
    uint32_t bytes;        /* bytes the sink took */
    uint32_t log_frames;   /* of the frames, log frames (hello, context, data, stats) */
    uint32_t trace_frames; /* of the frames, trace headers and packets */
    uint32_t crash_frames; /* of the frames, crash records (channel 2) */
    uint32_t failed;       /* frames lost to a failed write */
    uint32_t log_busy;     /* polls that found the log ring mid-commit (retried next poll) */
};

struct emb_frame_link {
    emb_frame_write_fn write;
    void *arg;
    struct emb_log_output log;
    struct emb_trace_link trace;
    struct emb_frame_encoder enc;
    struct emb_trace_ring *trace_ring;
    struct emb_log_ring *log_ring;
    const struct emb_log_identity *log_id;
    uint8_t hello_due;
    uint8_t broken;        /* a delimiter goes first: at the start, or a frame was cut */
    uint8_t empty;         /* the last byte written was a delimiter */
    uint8_t log_dropping;  /* the rest of the current log frame is dropped */
    uint8_t channel;       /* of the frame being written, for the counts */
    struct emb_frame_link_stats stats;
};

#if CONFIG_EMB_FRAME_LINK

/* Prepares the link; nothing is written until the first poll (the log's hello frame and
 * the trace header go first). */
emb_status emb_frame_link_init(struct emb_frame_link *l, const struct emb_frame_link_config *c);

/* Sends what the rings hold: the log's records, then the trace's completed packets.
 * Call from one place only. */
void emb_frame_link_poll(struct emb_frame_link *l);

/* At the end of a run: closes the trace's open packet (call on the ring's own context, or
 * once it records no more), sends everything, then the log's stats frame (its drop
 * counts). */
void emb_frame_link_flush(struct emb_frame_link *l);

/* Writes the log's hello frame and the trace header again at the next poll: for a reader
 * that has just arrived. */
void emb_frame_link_announce(struct emb_frame_link *l);

/* Sends a crash record (the one emb_crash_record_get() found at start) as one channel 2
 * frame, now, from the place that polls. EMB_OK once the sink took it whole (the caller
 * may then emb_crash_record_clear()); EMB_E_INVALID for an empty or oversized record;
 * the sink's error otherwise (the frame is lost and counted in `failed`). */
emb_status emb_frame_link_send_crash(struct emb_frame_link *l, const uint8_t *record,
                                     uint32_t len);

#else

static inline emb_status emb_frame_link_init(struct emb_frame_link *l, const struct emb_frame_link_config *c)
{
    (void)l; (void)c;
    return EMB_E_STATE;
}
static inline void emb_frame_link_poll(struct emb_frame_link *l) { (void)l; }
static inline void emb_frame_link_flush(struct emb_frame_link *l) { (void)l; }
static inline void emb_frame_link_announce(struct emb_frame_link *l) { (void)l; }
static inline emb_status emb_frame_link_send_crash(struct emb_frame_link *l, const uint8_t *record,
                                                   uint32_t len)
{
    (void)l; (void)record; (void)len;
    return EMB_E_STATE;
}

#endif /* CONFIG_EMB_FRAME_LINK */

#ifdef __cplusplus
}
#endif

#endif /* EMB_FRAME_LINK_H */
