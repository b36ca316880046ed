/* The SWO/ITM packet parser (docs/formats/swo.md): the byte stream a debug probe captures
 * from a Cortex-M's Serial Wire Output, as ARM's ITM and DWT packet protocol defines it
 * (ARMv7-M Architecture Reference Manual, appendix D4): synchronisation, overflow,
 * instrumentation packets from the 32 stimulus ports (1, 2 or 4 bytes), hardware source
 * packets, local and global timestamps, and extension packets.
 *
 * Incremental: feed bytes in any pieces. A reserved header is counted and skipped (the
 * parser goes on at the next byte, and a synchronisation packet realigns it for sure); a
 * packet cut off by the end of the capture is reported by emb_swo_finish(). No allocation.
 *
 * On top of the parser, emb_swo_demux reassembles the byte streams the target wrote to
 * its stimulus ports: port 0 the deferred log, port 1 the trace stream (SPEC-015 §7).
 */
#ifndef EMB_HOST_SWO_H
#define EMB_HOST_SWO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum emb_swo_type {
    EMB_SWO_SYNC,      /* a synchronisation packet ended */
    EMB_SWO_OVERFLOW,  /* the ITM dropped packets */
    EMB_SWO_STIMULUS,  /* instrumentation packet: port, size, value */
    EMB_SWO_HARDWARE,  /* hardware source (DWT) packet: id in `port`, size, value */
    EMB_SWO_LOCAL_TS,  /* local timestamp: value = delta, tc = its relation to the data */
    EMB_SWO_GLOBAL_TS1, /* global timestamp, low bits: value = TS[25:0], flags in tc */
    EMB_SWO_GLOBAL_TS2, /* global timestamp, high bits: value = TS[63:26] */
    EMB_SWO_EXTENSION, /* value = EX bits, port = 1 when SH (hardware), else stimulus page */
    EMB_SWO_RESERVED,  /* a header the protocol reserves: skipped */
};

struct emb_swo_packet {
    uint8_t type;     /* enum emb_swo_type */
    uint8_t port;     /* stimulus port 0..31, or the hardware discriminator */
    uint8_t size;     /* payload bytes: 1, 2 or 4 (source packets) */
    uint8_t tc;       /* local timestamp control (0..3); GTS1: bit 0 ClkCh, bit 1 Wrap */
    uint64_t value;   /* payload, little-endian as sent */
    uint64_t time;    /* sum of the local timestamps so far (in timestamp clock ticks) */
    uint64_t offset;  /* byte offset of the packet's header in the capture */
};

typedef void (*emb_swo_fn)(void *arg, const struct emb_swo_packet *p);

struct emb_swo_stats {
    uint64_t bytes;
    uint64_t packets;
    uint64_t syncs;
    uint64_t overflows;
    uint64_t stimulus[32];  /* packets per port */
    uint64_t hardware;
    uint64_t timestamps;    /* local and global */
    uint64_t extensions;
    uint64_t reserved;      /* reserved headers skipped */
    uint64_t bad_sync;      /* zero runs not ended by 0x80, or too short */
    bool truncated;         /* the capture ended inside a packet */
};

struct emb_swo {
    emb_swo_fn fn;
    void *arg;
    struct emb_swo_packet cur;
    uint8_t state;      /* internal */
    uint8_t need, got;  /* payload bytes */
    uint8_t shift;
    uint32_t zeros;     /* consecutive zero bytes of a synchronisation packet */
    uint64_t time;
    struct emb_swo_stats stats;
};

void emb_swo_init(struct emb_swo *s, emb_swo_fn fn, void *arg);
void emb_swo_feed(struct emb_swo *s, const void *buf, size_t n);
/* The end of the capture: records a packet cut short (stats.truncated). */
void emb_swo_finish(struct emb_swo *s);

/* ---- Stimulus port streams ---- */

/* Receives the bytes written to one stimulus port, in order; `lost` is true when an
 * overflow came before them (bytes may be missing just before this chunk). */
typedef void (*emb_swo_bytes_fn)(void *arg, unsigned port, const uint8_t *bytes, size_t n,
                                 bool lost, uint64_t time);

struct emb_swo_demux {
    struct emb_swo swo;
    emb_swo_bytes_fn fn;
    void *arg;
    uint32_t ports;         /* bit per port to pass on */
    uint32_t lost_pending;  /* bit per port: an overflow since its last bytes */
};

void emb_swo_demux_init(struct emb_swo_demux *d, uint32_t ports, emb_swo_bytes_fn fn, void *arg);
void emb_swo_demux_feed(struct emb_swo_demux *d, const void *buf, size_t n);
void emb_swo_demux_finish(struct emb_swo_demux *d);

#endif /* EMB_HOST_SWO_H */
