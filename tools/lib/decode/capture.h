/* Sealed capture files ("EMBS", docs/formats/capture.md): one run of the firmware, with
 * what it says it is, the window it recorded, the CTF metadata, its trace stream, and
 * optional log, crash-record and descriptor sections, under a CRC-32 over every byte.
 *
 * One encoder (emb_capture_encode) and one decoder (emb_capture_decode*), shared by
 * `emb capture`, `emb inspect`, `emb diff`, the tests and the fuzz target. The decoder
 * refuses, naming the byte offset: a wrong magic, a version it does not know, a length
 * that is not the file's, a bad CRC, a malformed section, an identity that contradicts the
 * trace it describes, and a catalogue checksum other than the tool's (both printed).
 */
#ifndef EMB_HOST_CAPTURE_H
#define EMB_HOST_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "problem.h"
#include "trace_decode.h"

/* ---- File layout ---- */
#define EMB_CAP_MAGIC 0x53424D45u     /* "EMBS" (sealed) read as a little-endian u32 */
#define EMB_CAP_VERSION 1u
#define EMB_CAP_OFF_MAGIC 0u          /* u32 */
#define EMB_CAP_OFF_VERSION 4u        /* u16 */
#define EMB_CAP_OFF_HEADER_SIZE 6u    /* u16, 32 in version 1 */
#define EMB_CAP_OFF_LENGTH 8u         /* u64 bytes in the file, CRC included */
#define EMB_CAP_OFF_SECTIONS 16u      /* u32 section count */
#define EMB_CAP_OFF_FLAGS 20u         /* u32, 0 */
#define EMB_CAP_HEADER_SIZE 32u       /* then sections, then the CRC */
#define EMB_CAP_CRC_SIZE 4u           /* u32 CRC-32 of every byte before it */

/* A section: header, body, zero padding to a multiple of 8. */
#define EMB_CAP_SEC_OFF_TYPE 0u       /* u16 enum emb_capture_section_type */
#define EMB_CAP_SEC_OFF_VERSION 2u    /* u16 layout version of the body */
#define EMB_CAP_SEC_OFF_FLAGS 4u      /* u32, 0 */
#define EMB_CAP_SEC_OFF_LENGTH 8u     /* u64 body bytes, padding excluded */
#define EMB_CAP_SEC_HEADER_SIZE 16u
#define EMB_CAP_MAX_SECTIONS 64u

enum emb_capture_section_type {
    EMB_CAP_SEC_IDENTITY = 1,   /* required, once */
    EMB_CAP_SEC_WINDOW = 2,     /* required, once */
    EMB_CAP_SEC_METADATA = 3,   /* CTF 1.8 TSDL text; required, once */
    EMB_CAP_SEC_TRACE = 4,      /* a trace stream file ("EMBT") whole; required, once */
    EMB_CAP_SEC_LOG = 5,        /* opaque bytes: the log stream (docs/formats/log.md) */
    EMB_CAP_SEC_CRASH = 6,      /* opaque bytes: a crash record */
    EMB_CAP_SEC_DESCRIPTOR = 7, /* opaque bytes: a debug descriptor snapshot */
    EMB_CAP_SEC_CATALOG = 8,    /* the catalogue's YAML, zlib (capture_catalog.h); optional */
};

/* Identity body, version 1. */
#define EMB_CAP_ID_OFF_CATALOG 0u      /* u32 catalogue checksum */
#define EMB_CAP_ID_OFF_BUILD_ID_LEN 4u /* u8, at most 32 */
#define EMB_CAP_ID_OFF_POINTER_SIZE 5u /* u8 */
#define EMB_CAP_ID_OFF_CLOCK_HZ 8u     /* u64 */
#define EMB_CAP_ID_OFF_CLOCK_OFFSET 16u /* i64 ns since the Unix epoch at tick 0 */
#define EMB_CAP_ID_OFF_SESSION 24u     /* u64 */
#define EMB_CAP_ID_OFF_UUID 32u        /* u8[16] */
#define EMB_CAP_ID_OFF_BUILD_ID 48u    /* u8[32] */
#define EMB_CAP_ID_OFF_PORT 80u        /* char[28] */
#define EMB_CAP_ID_OFF_FIRMWARE 108u   /* char[32] */
#define EMB_CAP_ID_OFF_CONFIG 140u     /* char[160] */
#define EMB_CAP_ID_OFF_LABEL 300u      /* char[32] */
#define EMB_CAP_ID_OFF_REVISION 332u   /* char[64] */
#define EMB_CAP_ID_SIZE 396u
#define EMB_CAP_LABEL_MAX 32u
#define EMB_CAP_REVISION_MAX 64u

/* Window body, version 1: a summary, then one row per context. */
#define EMB_CAP_WIN_OFF_ARMED 0u       /* u32 armed frame; 0xFFFFFFFF: not a window capture */
#define EMB_CAP_WIN_OFF_CAPACITY 4u    /* u32 bytes per context ring, as window_armed said */
#define EMB_CAP_WIN_OFF_PACKET 8u      /* u32 packet size */
#define EMB_CAP_WIN_OFF_ROWS 12u       /* u32 context rows */
#define EMB_CAP_WIN_OFF_WRITES 16u     /* u64 events the target recorded or dropped */
#define EMB_CAP_WIN_OFF_STORED 24u     /* u64 events stored */
#define EMB_CAP_WIN_OFF_DROPS 32u      /* u64 events dropped (discarded, or no ring) */
#define EMB_CAP_WIN_OFF_LOST 40u       /* u64 packets lost (sequence gaps) */
#define EMB_CAP_WIN_SIZE 48u
#define EMB_CAP_ROW_OFF_ID 0u          /* u16 */
#define EMB_CAP_ROW_OFF_KIND 2u        /* u16 */
#define EMB_CAP_ROW_OFF_DISCARDED 4u   /* u32 */
#define EMB_CAP_ROW_OFF_LOST 8u        /* u32 packets lost */
#define EMB_CAP_ROW_OFF_EARLIER 12u    /* u32 packets before the first held (0 in older files) */
#define EMB_CAP_ROW_OFF_EVENTS 16u     /* u64 events stored */
#define EMB_CAP_ROW_OFF_NAME 24u       /* char[24] */
#define EMB_CAP_ROW_SIZE 48u
#define EMB_CAP_NO_FRAME 0xFFFFFFFFu

struct emb_capture_identity {
    uint32_t catalog_checksum;
    uint8_t build_id_len;
    uint8_t pointer_size;
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint64_t session_id;
    uint8_t uuid[16];
    uint8_t build_id[32];
    char port[32];
    char firmware[33];
    char config[161];
    char label[EMB_CAP_LABEL_MAX + 1];
    char revision[EMB_CAP_REVISION_MAX + 1];
};

struct emb_capture_row {
    uint16_t id, kind;
    uint32_t discarded;
    uint32_t lost_packets;
    uint32_t earlier;     /* packets before the first held: overwritten, or never received */
    uint64_t events;
    char name[25];
};

struct emb_capture_window {
    uint32_t armed_frame; /* EMB_CAP_NO_FRAME when the capture is not an armed window */
    uint32_t capacity;
    uint32_t packet_size;
    uint64_t writes, stored, drops, lost_packets;
    struct emb_capture_row *rows;
    size_t nrows;
};

struct emb_capture_section {
    uint16_t type, version;
    uint64_t offset; /* of the body in the file */
    uint64_t length;
    const uint8_t *data;
};

/* What the encoder needs. Opaque sections carry their type, their body version and bytes. */
struct emb_capture_parts {
    struct emb_capture_identity identity;
    struct emb_capture_window window;
    const char *metadata;
    size_t metadata_len;
    const uint8_t *trace;
    size_t trace_len;
    struct emb_capture_section opaque[8];
    size_t nopaque;
};

/* Fills identity and window from a decoded trace: what the firmware stamped in the stream
 * header, the window_armed event, the losses. label and revision may be NULL. Returns 0,
 * or -1 when out of memory (the rows). */
int emb_capture_describe(const struct emb_trace *t, const char *label, const char *revision,
                         struct emb_capture_identity *id, struct emb_capture_window *win);

/* The CTF metadata for a decoded trace, as a malloc'd string. NULL when out of memory. */
char *emb_capture_metadata(const struct emb_trace *t, size_t *len);

/* Seals the parts into a capture file held in memory (malloc'd). NULL when out of memory
 * or a part is out of range (writes a reason into err). */
uint8_t *emb_capture_encode(const struct emb_capture_parts *parts, size_t *len, char *err,
                            size_t errlen);

/* ---- Reading ---- */

struct emb_capture_options {
    const struct emb_catalog *catalog; /* required: the tool's catalogue */
    const char *name;                  /* for messages; default the path or "capture" */
    bool ignore_checksum;              /* decode with a catalogue that differs (reported) */
    bool skip_trace;                   /* check the file, do not decode the trace */
    bool no_merge;                     /* per-context records only (see emb_trace_options) */
    bool stream;                       /* keep no records: walk a cursor (emb_trace_options) */
    bool mapped;                       /* the bytes are a read-only file mapping */
    void (*progress)(void *arg, uint64_t done, uint64_t total);
    void *progress_arg;
};

struct emb_capture;

/* Decodes a capture held in memory (not copied: it must outlive the result). Returns NULL
 * only when out of memory; check emb_capture_failed(). */
struct emb_capture *emb_capture_decode(const uint8_t *data, size_t size,
                                       const struct emb_capture_options *opt);
struct emb_capture *emb_capture_decode_file(const char *path, const struct emb_capture_options *opt);
void emb_capture_free(struct emb_capture *c);

/* True when the capture was refused; then *offset is the byte (-1: none) and the
 * message says why (the one problem of emb_capture_problems). */
bool emb_capture_failed(const struct emb_capture *c, long long *offset, const char **message);
/* Why the capture was refused, as a problem list (empty when it was not): the first
 * fault found, at its byte offset, under the capture's name. */
const struct emb_problems *emb_capture_problems(const struct emb_capture *c);

const char *emb_capture_name(const struct emb_capture *c);
uint16_t emb_capture_version(const struct emb_capture *c);
uint64_t emb_capture_size(const struct emb_capture *c);
const struct emb_capture_identity *emb_capture_identity(const struct emb_capture *c);
const struct emb_capture_window *emb_capture_window(const struct emb_capture *c);
const struct emb_capture_section *emb_capture_sections(const struct emb_capture *c, size_t *n);
/* The first section of a type, or NULL. */
const struct emb_capture_section *emb_capture_section(const struct emb_capture *c, uint16_t type);
/* The decoded trace (NULL with skip_trace). */
const struct emb_trace *emb_capture_trace(const struct emb_capture *c);
/* Name of a section type ("identity", ..., "unknown"). */
const char *emb_capture_section_name(uint16_t type);

/* The bytes a command decodes, from an input it read whole: when `data` is a sealed
 * capture, the body of its section of `type` (its offset in the file kept, so messages
 * name the capture's bytes); otherwise `data` itself at offset 0. `catalog` checks the
 * identity (a differing checksum is no refusal here: the decoder of the section says).
 * 0 with *out filled, or -1 after reporting to ps why not: the capture is refused, or it
 * holds no such section ("the capture holds no log section"). */
int emb_capture_unwrap(const uint8_t *data, size_t size, uint16_t type,
                       const struct emb_catalog *catalog, struct emb_capture_section *out,
                       struct emb_problems *ps);

/* Hex of a build id into buf (at least 2 * len + 1 bytes). */
char *emb_capture_hex(const uint8_t *bytes, size_t len, char *buf);

#endif /* EMB_HOST_CAPTURE_H */
