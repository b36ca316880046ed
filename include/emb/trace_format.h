/* The trace wire format: CTF 1.8 packets as the rings hold them, and the trace stream
 * file that carries them off the target. Shared by the target library (the encoder)
 * and the host tool (the decoder); depends on no port. docs/formats/trace.md is the
 * prose version of this header.
 */
#ifndef EMB_TRACE_FORMAT_H
#define EMB_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CTF packet: trace.packet.header (28 bytes) then stream.packet.context (36) ---- */
#define EMB_PKT_MAGIC 0xC1FC1FC1u          /* CTF's packet magic */
#define EMB_PKT_OFF_MAGIC 0u               /* u32 */
#define EMB_PKT_OFF_UUID 4u                /* u8[16], equal to the metadata's uuid */
#define EMB_PKT_OFF_STREAM_ID 20u          /* u32, always 0: one stream class */
#define EMB_PKT_OFF_INSTANCE 24u           /* u32 stream_instance_id = context id */
#define EMB_PKT_OFF_SEQ 28u                /* u32 packet_seq_num, per context from 0 */
#define EMB_PKT_OFF_TS_BEGIN 32u           /* u64 clock ticks */
#define EMB_PKT_OFF_TS_END 40u             /* u64 clock ticks, >= last event */
#define EMB_PKT_OFF_CONTENT_SIZE 48u       /* u32, in bits, header included */
#define EMB_PKT_OFF_PACKET_SIZE 52u        /* u32, in bits */
#define EMB_PKT_OFF_DISCARDED 56u          /* u32 events_discarded, running total */
#define EMB_PKT_OFF_CONTEXT_ID 60u         /* u16 */
#define EMB_PKT_OFF_CONTEXT_KIND 62u       /* u16 enum emb_context_kind */
#define EMB_PKT_HEADER_SIZE 64u

/* ---- Event header (8 bytes), then the fixed-size payload padded to 4 bytes ---- */
#define EMB_EVT_OFF_TS 0u                  /* u32 low half of the 64-bit timestamp */
#define EMB_EVT_OFF_ID 4u                  /* u16 event id from the catalogue */
#define EMB_EVT_OFF_FLAGS 6u               /* u16 EMB_EVT_FLAG_* */
#define EMB_EVT_HEADER_SIZE 8u
#define EMB_EVT_ALIGN 4u

/* Flags word: who was running when the event was recorded. The two kind bits are what
 * a two-run comparison needs to tell scheduling noise (a swap across contexts) from a
 * reordering (a swap within one). */
#define EMB_EVT_FLAG_KIND_MASK 0x0003u
#define EMB_EVT_KIND_THREAD 0u             /* thread mode / main loop */
#define EMB_EVT_KIND_ISR 1u                /* interrupt or signal handler */
#define EMB_EVT_KIND_FAULT 2u              /* fault or NMI handler */
#define EMB_EVT_FLAG_DEPTH_SHIFT 2u        /* bits 2..7: interrupt nesting depth */
#define EMB_EVT_FLAG_DEPTH_MASK 0x00FCu

enum emb_context_kind {
    EMB_CONTEXT_CPU = 0,                   /* a processor: every thread and ISR on it */
    EMB_CONTEXT_THREAD = 1,                /* one thread and the handlers that preempt it */
};

/* ---- Trace stream file ("EMBT"): a header, then whole packets back to back ---- */
#define EMB_TSF_MAGIC 0x54424D45u          /* "EMBT" read as a little-endian u32 */
#define EMB_TSF_VERSION 1u
#define EMB_TSF_OFF_MAGIC 0u               /* u32 */
#define EMB_TSF_OFF_VERSION 4u             /* u16 */
#define EMB_TSF_OFF_HEADER_SIZE 6u         /* u16 bytes up to the first packet */
#define EMB_TSF_OFF_CATALOG 8u             /* u32 catalogue checksum */
#define EMB_TSF_OFF_PACKET_SIZE 12u        /* u32 bytes per packet */
#define EMB_TSF_OFF_CLOCK_HZ 16u           /* u64 */
#define EMB_TSF_OFF_CLOCK_OFFSET 24u       /* i64 ns since the Unix epoch at tick 0 */
#define EMB_TSF_OFF_UUID 32u               /* u8[16] */
#define EMB_TSF_OFF_BUILD_ID_LEN 48u       /* u8, at most 32 */
#define EMB_TSF_OFF_POINTER_SIZE 49u       /* u8 */
#define EMB_TSF_OFF_CONTEXT_COUNT 50u      /* u16 */
#define EMB_TSF_OFF_BUILD_ID 52u           /* u8[32], first build_id_len bytes used */
#define EMB_TSF_OFF_PORT 84u               /* char[28], NUL-padded */
#define EMB_TSF_FIXED_SIZE 112u
/* Then context_count entries of EMB_TSF_CONTEXT_SIZE bytes each: */
#define EMB_TSF_CTX_OFF_ID 0u              /* u16 */
#define EMB_TSF_CTX_OFF_KIND 2u            /* u16 enum emb_context_kind */
#define EMB_TSF_CTX_OFF_DISCARDED 4u       /* u32 events discarded, final total */
#define EMB_TSF_CTX_OFF_PACKETS 8u         /* u32 packets opened since the ring started */
#define EMB_TSF_CTX_OFF_NAME 12u           /* char[20], NUL-padded */
#define EMB_TSF_CONTEXT_SIZE 32u
#define EMB_TSF_BUILD_ID_MAX 32u
#define EMB_TSF_PORT_MAX 28u
#define EMB_TSF_NAME_MAX 20u
#define EMB_TSF_MAX_CONTEXTS 1024u
/* Then, up to the header size, optional extension blocks, each a u32 tag, a u32 size
 * (bytes, tag and size included, a multiple of 4) and its body. A zero tag ends the list:
 * a streaming header's reserve for contexts that appear later is zeros. A reader skips
 * tags it does not know. */
#define EMB_TSF_EXT_OFF_TAG 0u             /* u32 */
#define EMB_TSF_EXT_OFF_SIZE 4u            /* u32 */
#define EMB_TSF_EXT_HEADER_SIZE 8u
#define EMB_TSF_EXT_IDENTITY 0x544E4449u   /* "IDNT": what the firmware says it is */
#define EMB_TSF_ID_OFF_SESSION 8u          /* u64 session id: this run */
#define EMB_TSF_ID_OFF_FIRMWARE 16u        /* char[32] firmware version, NUL-padded */
#define EMB_TSF_ID_OFF_CONFIG 48u          /* char[160] configuration flags, NUL-padded */
#define EMB_TSF_IDENTITY_SIZE 208u
#define EMB_TSF_FIRMWARE_MAX 32u
#define EMB_TSF_CONFIG_MAX 160u
#define EMB_TSF_EXT_RING 0x474E4952u       /* "RING": each context ring's capacity */
#define EMB_TSF_RING_OFF_PACKETS 8u        /* u32 packets per context ring */
#define EMB_TSF_RING_OFF_RESERVED 12u      /* u32, 0 */
#define EMB_TSF_RING_SIZE 16u
/* A sealed stream file (version EMB_TSF_VERSION_SEALED) carries integrity checks that cost
 * the target nothing: whoever writes the file (the native port's stream worker or dump, a
 * host tool) adds them. Its header holds a "SEAL" block with the CRC-32 of the header, and
 * every packet is followed by the CRC-32 of its bytes. Rings, packets and frames never
 * carry them. */
#define EMB_TSF_VERSION_SEALED 2u
#define EMB_TSF_EXT_SEAL 0x4C414553u       /* "SEAL": the header's CRC; packets carry theirs */
#define EMB_TSF_SEAL_OFF_HEADER_CRC 8u     /* u32 CRC-32 of header_size bytes, this field 0 */
#define EMB_TSF_SEAL_OFF_RESERVED 12u      /* u32, 0 */
#define EMB_TSF_SEAL_SIZE 16u
#define EMB_TSF_PACKET_CRC_SIZE 4u         /* u32 CRC-32 of the packet, after each packet */
/* The catalogue the trace was recorded with, carried in the header so that decoding needs
 * no catalogue file: written by host tools (an import, a trace taken out of a capture, a
 * live capture's saved stream), never by the target, whose catalogue is compiled in. The
 * body from EMB_TSF_CAT_OFF_TEXT_LEN on is a capture file's catalog section body
 * (docs/formats/capture.md): text length, 0, then one zlib stream of the YAML text. */
#define EMB_TSF_EXT_CATALOG 0x4C544143u    /* "CATL": the catalogue, zlib-compressed */
#define EMB_TSF_CAT_OFF_ZLIB_LEN 8u        /* u32 bytes of the zlib stream */
#define EMB_TSF_CAT_OFF_TEXT_LEN 12u       /* u32 bytes of YAML text once inflated */
#define EMB_TSF_CAT_OFF_RESERVED 16u       /* u32, 0 */
#define EMB_TSF_CAT_OFF_ZLIB 20u           /* the zlib stream, then zeros to a multiple of 4 */
/* Most bytes the extension blocks of one header take. */
#define EMB_TSF_EXT_MAX (EMB_TSF_IDENTITY_SIZE + EMB_TSF_RING_SIZE)

/* What the stream header says about the trace. */
struct emb_tsf_info {
    uint32_t catalog_checksum;
    uint32_t packet_size;      /* bytes */
    uint64_t clock_hz;
    int64_t clock_offset_ns;   /* wall clock at tick 0, ns since the Unix epoch; 0 unknown */
    uint8_t uuid[16];
    const uint8_t *build_id;   /* may be NULL when build_id_len is 0 */
    uint8_t build_id_len;      /* at most EMB_TSF_BUILD_ID_MAX */
    uint8_t pointer_size;      /* bytes */
    const char *port;          /* may be NULL */
    /* Appended as an identity block when not NULL. */
    const struct emb_tsf_identity *identity;
    /* Packets per context ring, appended as a ring block when nonzero (a streaming
     * consumer learns how much a context can hold before it drops). */
    uint32_t ring_packets;
};

/* The build and run identity the firmware stamps on its trace, so a two-run comparison
 * can tell a working configuration from a failing one without trusting a label. */
struct emb_tsf_identity {
    uint64_t session_id;          /* this run; 0 if unknown */
    const char *firmware_version; /* at most 31 characters kept; may be NULL */
    const char *config;           /* configuration and experiment flags, "key=value ..." */
};

/* One entry of the context table. */
struct emb_tsf_context {
    uint16_t id;
    uint16_t kind;             /* enum emb_context_kind */
    uint32_t discarded;        /* events dropped, final total (0 in a stream) */
    uint32_t packets;          /* packets opened (0 in a stream) */
    const char *name;          /* may be NULL */
};

/* Bytes the header takes with `count` contexts (and no identity block). */
#define EMB_TSF_HEADER_BYTES(count) (EMB_TSF_FIXED_SIZE + (count) * EMB_TSF_CONTEXT_SIZE)

/* Encodes the stream header, its context table and, when info->identity is set, the
 * identity block into `out`. Returns the bytes written, or 0 when `cap` is too small or
 * an argument is out of range. The one encoder of this header: the native port's dump
 * and stream, and the host's captures, all use it. */
size_t emb_tsf_encode_header(uint8_t *out, size_t cap, const struct emb_tsf_info *info,
                             const struct emb_tsf_context *contexts, uint16_t count);

/* Copies the header of the stream file `stream` (`len` bytes, at least its header size)
 * into `out` with the extension block `block` (`block_len` bytes: tag, size, body; a
 * multiple of 4) added after its last block, in place of a block of the same tag it has,
 * the header size raised to match and a sealed header's CRC computed again. The packets
 * that follow the old header are the caller's to append unchanged. Returns the new
 * header's size, or 0 when it is not a stream header, its blocks are malformed, or the
 * result exceeds `cap` or the 65535 bytes a header may have. */
size_t emb_tsf_header_put_block(uint8_t *out, size_t cap, const uint8_t *stream, size_t len,
                                const uint8_t *block, size_t block_len);

/* The recording mode and the window's state, as the status frame and the descriptor
 * report them (docs/formats/frame.md, descriptor.md). */
enum emb_trace_mode {
    EMB_TRACE_MODE_SNAPSHOT = 0,  /* overwrite the oldest packet; dump on demand or fault */
    EMB_TRACE_MODE_WINDOW = 1,    /* armed at a frame or by a call, fills once, stops */
    EMB_TRACE_MODE_STREAMING = 2, /* a consumer hands completed packets to a sink */
};

enum emb_trace_window_state {
    EMB_TRACE_WINDOW_OFF = 0,     /* not in window mode */
    EMB_TRACE_WINDOW_WAITING = 1, /* waiting for the arming frame or call */
    EMB_TRACE_WINDOW_ARMED = 2,   /* recording */
    EMB_TRACE_WINDOW_CLOSED = 3,  /* a ring filled: nothing more is recorded */
};

#ifdef __cplusplus
}
#endif

/* A ring's read_pos flags (packet positions are packet-aligned, so the low bits are free).
 * CLAIMED: the consumer is handing the packet at read_pos to its sink; no producer may
 * overwrite it. PUSHING: a producer has just taken the oldest unread packet and is
 * counting its events; the consumer waits for the count before claiming the next. */
#define EMB_TRACE_READ_CLAIMED 1u
#define EMB_TRACE_READ_PUSHING 2u
#define EMB_TRACE_READ_BUSY (EMB_TRACE_READ_CLAIMED | EMB_TRACE_READ_PUSHING)

#endif /* EMB_TRACE_FORMAT_H */
