/* The deferred log's wire format: call-site metadata in the ELF, records in the rings,
 * the ELF note, and the payloads of log frames. Shared by the target library (the
 * encoder) and the host tool (the decoder); depends on no port. docs/formats/log.md is the
 * prose version of this header.
 */
#ifndef EMB_LOG_FORMAT_H
#define EMB_LOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <emb/frame.h>
#include <emb/status.h>

/* Levels: a call site is recorded when its level is at most its module's level. */
#define EMB_LOG_LEVEL_NONE 0
#define EMB_LOG_LEVEL_ERR 1
#define EMB_LOG_LEVEL_WRN 2
#define EMB_LOG_LEVEL_INF 3
#define EMB_LOG_LEVEL_DBG 4

/* ---- Call-site metadata: one object per call site in section `emb_log` ----
 * A 12-byte header, then sig[nargs + 1], module[module_len], fmt[fmt_len],
 * file[file_len] (each NUL-terminated, lengths include the NUL), padded to 4 bytes. */
#define EMB_LOG_SECTION "emb_log"
#define EMB_LOG_SITE_OFF_KIND 0u        /* u8 EMB_LOG_SITE_* */
#define EMB_LOG_SITE_OFF_LEVEL 1u       /* u8 EMB_LOG_LEVEL_* */
#define EMB_LOG_SITE_OFF_NARGS 2u       /* u8 arguments in the signature */
#define EMB_LOG_SITE_OFF_MODULE_LEN 3u  /* u8 */
#define EMB_LOG_SITE_OFF_FMT_LEN 4u     /* u16, target byte order */
#define EMB_LOG_SITE_OFF_FILE_LEN 6u    /* u16, target byte order */
#define EMB_LOG_SITE_OFF_LINE 8u        /* u32, target byte order */
#define EMB_LOG_SITE_HEADER_SIZE 12u
#define EMB_LOG_SITE_ALIGN 4u
#define EMB_LOG_SITE_PRINTF 1u          /* fmt is a printf format; args per the signature */
#define EMB_LOG_SITE_HEXDUMP 2u         /* fmt is the title; the record holds a byte dump */

/* ---- Module records (log note version 2): a module's partition, among the call sites ----
 * EMB_LOG_MODULE_DEFINE_PARTITION puts one per module into section `emb_log`: a 4-byte
 * header, then module[module_len] and partition_name[name_len] (NUL-terminated, lengths
 * include the NUL), padded to 4 bytes. Every call site of the module (the site's module
 * name) belongs to that partition; no record on the wire refers to it. Only a build with
 * CONFIG_EMB_PARTITIONS > 0 writes them, and says so with note version 2. */
#define EMB_LOG_SITE_MODULE 3u
#define EMB_LOG_MODULE_OFF_KIND 0u      /* u8 EMB_LOG_SITE_MODULE */
#define EMB_LOG_MODULE_OFF_PARTITION 1u /* u8 partition id (emb/partition.h) */
#define EMB_LOG_MODULE_OFF_MODULE_LEN 2u /* u8 */
#define EMB_LOG_MODULE_OFF_NAME_LEN 3u  /* u8 */
#define EMB_LOG_MODULE_HEADER_SIZE 4u
#define EMB_LOG_PARTITION_NAME_MAX 16u  /* with the NUL, as emb_partition_define keeps it */

/* Signature: one character per argument, how it is stored in the record. */
#define EMB_LOG_ARG_I32 'i'             /* 4 bytes, signed */
#define EMB_LOG_ARG_U32 'u'             /* 4 bytes, unsigned */
#define EMB_LOG_ARG_I64 'I'             /* 8 bytes, signed */
#define EMB_LOG_ARG_U64 'U'             /* 8 bytes, unsigned */
#define EMB_LOG_ARG_F64 'f'             /* 8 bytes, IEEE 754 double */
#define EMB_LOG_ARG_PTR 'p'             /* the note's pointer size */
#define EMB_LOG_ARG_STR 's'             /* u8 length byte, then the bytes */

/* %s length byte: bits 0-6 the bytes that follow, bit 7 set when the string was longer
 * and was clipped. 0x80 alone (clipped to nothing) stands for a NULL pointer. */
#define EMB_LOG_STR_CLIPPED 0x80u
#define EMB_LOG_STR_NULL 0x80u
/* Hexdump length (u16): bits 0-14 the bytes that follow, bit 15 clipped. */
#define EMB_LOG_HEX_CLIPPED 0x8000u

/* ---- Records: id (CONFIG_EMB_LOG_ID_BYTES), timestamp (u32, optional), arguments ----
 * A call site's id is 4 + the offset of its metadata in section `emb_log`; sites are
 * 4-aligned, so ids are multiples of 4 and 0 to 3 are free for the library's records. */
#define EMB_LOG_ID_SYNC 0u
#define EMB_LOG_ID_DROPPED 1u
#define EMB_LOG_ID_BIAS 4u

/* Sync marker payload (after id and timestamp). */
#define EMB_LOG_SYNC_MAGIC_SIZE 6u
#define EMB_LOG_SYNC_OFF_MAGIC 0u        /* u8[6] EMB_LOG_SYNC_MAGIC */
#define EMB_LOG_SYNC_OFF_CONTEXT 6u      /* u16 context id */
#define EMB_LOG_SYNC_OFF_TS 8u           /* u64 full clock ticks */
#define EMB_LOG_SYNC_OFF_DROPPED 16u     /* u32 records this ring dropped so far */
#define EMB_LOG_SYNC_PAYLOAD 20u
#define EMB_LOG_SYNC_MAGIC {0xE5u, 0x4Cu, 0x53u, 0x59u, 0x4Eu, 0x43u} /* 0xE5 "LSYNC" */

/* Dropped record payload: u16 records dropped since the previous record of the ring. */
#define EMB_LOG_DROPPED_PAYLOAD 2u
#define EMB_LOG_DROPPED_MAX 0xFFFFu

/* ---- The ELF note, in section .note.emb.log: name "EMB", type 1, this descriptor ---- */
#define EMB_LOG_NOTE_SECTION ".note.emb.log"
#define EMB_LOG_NOTE_NAME "EMB"
#define EMB_LOG_NOTE_TYPE 1u
/* Version 1: the region holds call sites only; version 2 (CONFIG_EMB_PARTITIONS > 0):
 * module records too. The descriptor is the same. */
#define EMB_LOG_NOTE_VERSION 1u
#define EMB_LOG_NOTE_VERSION_PARTITIONS 2u
#define EMB_LOG_NOTE_OFF_VERSION 0u      /* u16 */
#define EMB_LOG_NOTE_OFF_ID_BYTES 2u     /* u8: 2 or 4 */
#define EMB_LOG_NOTE_OFF_TS_BYTES 3u     /* u8: 0 or 4 */
#define EMB_LOG_NOTE_OFF_PTR_BYTES 4u    /* u8: 4 or 8 */
#define EMB_LOG_NOTE_OFF_STR_MAX 5u      /* u8 */
#define EMB_LOG_NOTE_OFF_HEX_MAX 6u      /* u16 */
#define EMB_LOG_NOTE_OFF_SYNC 8u         /* u32 sync interval, records */
#define EMB_LOG_NOTE_OFF_RECORD_MAX 12u  /* u32 */
/* The target's C types, for the decoder's length modifiers (%d, %ld, %zu, %td); appended
 * to version 1: a 16-byte descriptor lacks them, and the decoder takes the ELF class. */
#define EMB_LOG_NOTE_OFF_INT_BYTES 16u   /* u8 sizeof(int) */
#define EMB_LOG_NOTE_OFF_LONG_BYTES 17u  /* u8 sizeof(long) */
#define EMB_LOG_NOTE_OFF_SIZE_BYTES 18u  /* u8 sizeof(size_t) */
#define EMB_LOG_NOTE_OFF_PTRDIFF_BYTES 19u /* u8 sizeof(ptrdiff_t) */
#define EMB_LOG_NOTE_DESC_SIZE_V1 16u    /* the shortest descriptor a reader takes */
#define EMB_LOG_NOTE_DESC_SIZE 20u

/* ---- Log frames (channel 0, docs/formats/frame.md): payload starts with a kind byte ---- */
#define EMB_LOG_FRAME_HELLO 1u
#define EMB_LOG_FRAME_DATA 2u
#define EMB_LOG_FRAME_CONTEXT 3u
#define EMB_LOG_FRAME_STATS 4u

/* hello: who is talking, sent first and again now and then. */
#define EMB_LOG_HELLO_MAGIC 0x4C424D45u  /* "EMBL" read as a little-endian u32 */
#define EMB_LOG_HELLO_VERSION 1u
#define EMB_LOG_HELLO_OFF_VERSION 1u     /* u8 */
#define EMB_LOG_HELLO_OFF_SIZE 2u        /* u16 payload bytes; later versions append */
#define EMB_LOG_HELLO_OFF_MAGIC 4u       /* u32 */
#define EMB_LOG_HELLO_OFF_CLOCK_HZ 8u    /* u64 */
#define EMB_LOG_HELLO_OFF_CLOCK_OFFSET 16u /* i64 ns since the Unix epoch at tick 0; 0 unknown */
#define EMB_LOG_HELLO_OFF_ID_BYTES 24u   /* u8 */
#define EMB_LOG_HELLO_OFF_TS_BYTES 25u   /* u8 */
#define EMB_LOG_HELLO_OFF_PTR_BYTES 26u  /* u8 */
#define EMB_LOG_HELLO_OFF_BUILD_ID_LEN 27u /* u8, at most 32 */
#define EMB_LOG_HELLO_OFF_BUILD_ID 28u   /* u8[32] */
#define EMB_LOG_HELLO_OFF_PORT 60u       /* char[28], NUL-padded */
#define EMB_LOG_HELLO_SIZE 88u
#define EMB_LOG_BUILD_ID_MAX 32u
#define EMB_LOG_PORT_MAX 28u

/* data: ring bytes of one context, from ring position `pos`. */
#define EMB_LOG_DATA_OFF_FLAGS 1u        /* u8, 0 */
#define EMB_LOG_DATA_OFF_CONTEXT 2u      /* u16 */
#define EMB_LOG_DATA_OFF_POS 4u          /* u32 ring position of the first byte */
#define EMB_LOG_DATA_HEADER 8u

/* context: names a context. */
#define EMB_LOG_CTX_OFF_KIND 1u          /* u8 enum emb_context_kind */
#define EMB_LOG_CTX_OFF_CONTEXT 2u       /* u16 */
#define EMB_LOG_CTX_OFF_NAME 4u          /* char[20], NUL-padded */
#define EMB_LOG_CTX_NAME_MAX 20u
#define EMB_LOG_CTX_SIZE 24u

/* stats: a context's counts when the stream stops. */
#define EMB_LOG_STATS_OFF_CONTEXT 2u     /* u16 */
#define EMB_LOG_STATS_OFF_DROPPED 4u     /* u32 records dropped since the ring started */
#define EMB_LOG_STATS_OFF_PENDING 8u     /* u32 of those, not yet announced by a record */
#define EMB_LOG_STATS_OFF_POS 12u        /* u32 ring position after the last byte */
#define EMB_LOG_STATS_SIZE 16u

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Frame payload encoders (src/wire/log_frames.c): the target's drain and a host that
 * reads a ring out of target memory (`emb capture --gdb`) write the same bytes ---- */

/* What a hello frame says. */
struct emb_log_hello_info {
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint8_t id_bytes, ts_bytes, ptr_bytes;
    const uint8_t *build_id;  /* may be NULL */
    uint8_t build_id_len;     /* at most EMB_LOG_BUILD_ID_MAX kept */
    const char *port;         /* may be NULL */
};

void emb_log_encode_hello(uint8_t p[EMB_LOG_HELLO_SIZE], const struct emb_log_hello_info *h);
void emb_log_encode_context(uint8_t p[EMB_LOG_CTX_SIZE], uint16_t context, uint8_t kind,
                            const char *name);
void emb_log_encode_stats(uint8_t p[EMB_LOG_STATS_SIZE], uint16_t context, uint32_t dropped,
                          uint32_t pending, uint32_t pos);

/* A ring's bytes as a reader sees them (docs/formats/log.md, "Ring protocol"): `buf` of
 * mask + 1 bytes plus the slack, and the end last crossed with the bytes that spilled. */
struct emb_log_ring_image {
    const uint8_t *buf;
    uint32_t mask;
    uint32_t spill_pos, spill;
};

/* Writes ring positions [from, to) as data frames of context `context`, each holding at
 * most `frame_max` ring bytes (a record that crossed the ring's end is read from the
 * slack). Returns EMB_OK or the first error `write` returned. */
emb_status emb_log_write_ring_data(emb_frame_write_fn write, void *arg, uint16_t context,
                                   const struct emb_log_ring_image *img, uint32_t from,
                                   uint32_t to, uint32_t frame_max);

#ifdef __cplusplus
}
#endif

#endif /* EMB_LOG_FORMAT_H */
