/* What a stream is, from its first bytes: the one place the host tells a trace stream
 * file from a capture, a bare CTF packet, a deferred log stream or an RTEMS record
 * stream, so every command that takes "a file" agrees on what it was given. */
#ifndef EMB_HOST_STREAM_KIND_H
#define EMB_HOST_STREAM_KIND_H

#include <stddef.h>
#include <stdint.h>

enum emb_stream_kind {
    EMB_STREAM_UNKNOWN,      /* none of these (or fewer bytes than its magic) */
    EMB_STREAM_TRACE,        /* a trace stream file: magic "EMBT" (docs/formats/trace.md) */
    EMB_STREAM_TRACE_PACKET, /* a bare CTF packet of a trace, no stream header */
    EMB_STREAM_CAPTURE,      /* a sealed capture: magic "EMBS" (docs/formats/capture.md) */
    EMB_STREAM_LOG,          /* log frames, the first a hello frame (docs/formats/log.md) */
    EMB_STREAM_RTEMS,        /* an RTEMS record item stream: format word, then its magic */
};

/* The bytes needed to tell every kind apart when the stream has them (a log stream's
 * hello frame is the longest). */
#define EMB_STREAM_KIND_BYTES 128u

/* The RTEMS record stream's header (cpukit/include/rtems/recorddata.h): a format word
 * that says the item size and byte order, then RTEMS_RECORD_MAGIC in that order. */
#define EMB_RTEMS_RECORD_MAGIC 0x82E14EC1u
#define EMB_RTEMS_RECORD_FORMAT_LE_32 0x11111111u
#define EMB_RTEMS_RECORD_FORMAT_LE_64 0x22222222u
#define EMB_RTEMS_RECORD_FORMAT_BE_32 0x33333333u
#define EMB_RTEMS_RECORD_FORMAT_BE_64 0x44444444u

/* The kind of a stream whose first `len` bytes are `bytes` (fewer than a kind needs:
 * EMB_STREAM_UNKNOWN for that kind). */
enum emb_stream_kind emb_stream_kind(const uint8_t *bytes, size_t len);

/* "trace stream", "trace packet", "capture", "log stream", "RTEMS record stream",
 * "unknown". */
const char *emb_stream_kind_name(enum emb_stream_kind kind);

#endif /* EMB_HOST_STREAM_KIND_H */
