/* What a stream is, from its first bytes (stream_kind.h). */
#include "stream_kind.h"

#include <stdbool.h>
#include <string.h>

#include <emb/frame.h>
#include <emb/log_format.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "capture.h"

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool is_rtems(const uint8_t *bytes, size_t len)
{
    if (len < 8u)
        return false;
    switch (emb_get_le32(bytes)) {
    case EMB_RTEMS_RECORD_FORMAT_LE_32:
    case EMB_RTEMS_RECORD_FORMAT_LE_64:
        return emb_get_le32(bytes + 4) == EMB_RTEMS_RECORD_MAGIC;
    case EMB_RTEMS_RECORD_FORMAT_BE_32:
    case EMB_RTEMS_RECORD_FORMAT_BE_64:
        return get_be32(bytes + 4) == EMB_RTEMS_RECORD_MAGIC;
    default:
        return false;
    }
}

/* A log stream written from its start opens with a hello frame on channel 0 (after the
 * delimiters a writer may send first so the reader starts clean): the first frame
 * decodes, CRC and all, to a hello with its magic. */
static bool is_log(const uint8_t *bytes, size_t len)
{
    while (len > 0u && bytes[0] == 0u) {
        bytes++;
        len--;
    }
    const uint8_t *end = len > 0u ? memchr(bytes, 0, len) : NULL;
    size_t n = end != NULL ? (size_t)(end - bytes) : 0u;
    uint8_t frame[EMB_STREAM_KIND_BYTES];
    uint8_t channel;
    size_t payload;
    if (n == 0u || n > sizeof frame ||
        emb_frame_decode_one(bytes, n, frame, &channel, &payload) != EMB_FRAME_OK)
        return false;
    const uint8_t *p = frame + 1;
    return channel == 0u && payload >= EMB_LOG_HELLO_SIZE && p[0] == EMB_LOG_FRAME_HELLO &&
           emb_get_le32(p + EMB_LOG_HELLO_OFF_MAGIC) == EMB_LOG_HELLO_MAGIC;
}

enum emb_stream_kind emb_stream_kind(const uint8_t *bytes, size_t len)
{
    if (bytes == NULL || len < 4u)
        return EMB_STREAM_UNKNOWN;
    switch (emb_get_le32(bytes)) {
    case EMB_TSF_MAGIC: return EMB_STREAM_TRACE;
    case EMB_PKT_MAGIC: return EMB_STREAM_TRACE_PACKET;
    case EMB_CAP_MAGIC: return EMB_STREAM_CAPTURE;
    default: break;
    }
    if (is_rtems(bytes, len))
        return EMB_STREAM_RTEMS;
    if (is_log(bytes, len))
        return EMB_STREAM_LOG;
    return EMB_STREAM_UNKNOWN;
}

const char *emb_stream_kind_name(enum emb_stream_kind kind)
{
    switch (kind) {
    case EMB_STREAM_TRACE: return "trace stream";
    case EMB_STREAM_TRACE_PACKET: return "trace packet";
    case EMB_STREAM_CAPTURE: return "capture";
    case EMB_STREAM_LOG: return "log stream";
    case EMB_STREAM_RTEMS: return "RTEMS record stream";
    default: return "unknown";
    }
}
