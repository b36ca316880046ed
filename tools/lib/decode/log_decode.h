/* The host's decoder of the deferred log (docs/formats/log.md): the call-site metadata
 * read from the ELF (struct emb_logdb), and a stream decoder (struct emb_log_decoder) that
 * turns log frames, or a bare record stream, into records with their text formatted by
 * the host's own printf, exactly as printf would have printed the call.
 *
 * The decoder is incremental: feed bytes as they arrive and records come out through a
 * callback, so `emb log --follow` and a whole file share it. It bounds every length it
 * reads and never stops at bad input: a bad frame, record or id is reported with its byte
 * offset, and decoding resumes at the next sync marker of that context.
 */
#ifndef EMB_HOST_LOG_DECODE_H
#define EMB_HOST_LOG_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "problem.h"

/* ---- Metadata from the ELF ---- */

struct emb_log_site {
    uint32_t id;          /* EMB_LOG_ID_BIAS + offset in the region */
    uint8_t kind;         /* EMB_LOG_SITE_PRINTF or _HEXDUMP */
    uint8_t level;
    uint8_t nargs;
    uint32_t line;
    const char *sig;      /* nargs characters */
    const char *module;
    const char *fmt;      /* printf format, or the hexdump's title */
    const char *file;
    const struct emb_log_plan *plan; /* its format read once (log_plan.h), or NULL */
    long args_fixed;      /* bytes its arguments always take; -1 with a %s, or a hexdump */
    const char *partition_name; /* its module's partition (a module record), or NULL */
    uint8_t partition;    /* that partition's id */
};

/* A module record (note version 2): the partition of a module's call sites. */
struct emb_log_module_partition {
    const char *module;
    const char *partition_name;
    uint8_t partition;
};

struct emb_logdb {
    char *path;
    uint8_t build_id[64];
    size_t build_id_len;
    /* The note. */
    uint16_t note_version; /* 1, or 2 when the region may hold module records */
    uint8_t id_bytes, ts_bytes, ptr_bytes, str_max;
    /* The target's C types, for the length modifiers: from the note, or the ELF class. */
    uint8_t int_bytes, long_bytes, size_bytes, ptrdiff_bytes;
    uint16_t hex_max;
    uint32_t sync_interval, record_max;
    /* The region. */
    uint64_t region_addr;
    uint64_t region_size;
    bool region_loaded;   /* the region lies in a loadable segment (a hosted build) */
    struct emb_log_site *sites; /* by id */
    size_t nsites;
    char *strings;        /* every string of every site, owned */
    struct emb_log_module_partition *modules; /* by module name */
    size_t nmodules;
    int module_width, where_width; /* for aligned text */
    int partition_width;  /* the longest partition name of a site; 0: no site has one */
    size_t plan_text_max; /* the longest text a planned site makes, with a NUL */
};

/* Reads an ELF's log metadata. Returns NULL, with an error (no offset) reported to
 * `problems`, when the file is not an ELF, has no emb_log section or note, or they are
 * malformed. The sink's file names the ELF (emb_problems_init(ps, path)). */
struct emb_logdb *emb_logdb_open(const char *path, struct emb_problems *problems);
void emb_logdb_free(struct emb_logdb *db);
const struct emb_log_site *emb_logdb_site(const struct emb_logdb *db, uint32_t id);

/* ---- Records ---- */

enum emb_logrec_type {
    EMB_LREC_LOG,      /* a printf call site: text */
    EMB_LREC_HEXDUMP,  /* text is the title; data the bytes */
    EMB_LREC_DROPPED,  /* count records dropped before this point */
    EMB_LREC_PENDING,  /* count records dropped after the context's last record */
    EMB_LREC_UNKNOWN,  /* an id not in the ELF: data holds what followed, up to the resync */
    EMB_LREC_RESYNC,   /* count bytes skipped until a sync marker (a join, a gap, an error) */
    EMB_LREC_LOST,     /* count ring bytes the stream never carried (a gap in positions) */
};

struct emb_logrec {
    enum emb_logrec_type type;
    uint16_t ctx;
    const char *ctx_name;
    bool has_ts;
    uint64_t ts;             /* clock ticks, 64 bits */
    uint64_t offset;         /* stream offset: the record's, or its frame's start */
    uint32_t ring_pos;       /* ring position of the record (framed streams) */
    const struct emb_log_site *site; /* LOG, HEXDUMP */
    uint32_t id;
    const char *text;        /* LOG: the message; HEXDUMP: the title */
    size_t text_len;
    const uint8_t *data;     /* HEXDUMP bytes; UNKNOWN raw bytes */
    size_t data_len;
    bool clipped;            /* a %s or the dump was clipped on the target */
    bool marked;             /* LOG: a conversion the decoder cannot reproduce is marked <...> */
    uint64_t count;          /* DROPPED, PENDING, RESYNC, LOST */
};

/* Stream identity, from the hello frame. */
struct emb_log_hello {
    bool seen;
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint8_t id_bytes, ts_bytes, ptr_bytes;
    uint8_t build_id[32];
    uint8_t build_id_len;
    char port[32];
};

struct emb_log_decoder_summary {
    uint64_t records;        /* LOG and HEXDUMP */
    uint64_t dropped;        /* announced by dropped records */
    uint64_t pending;        /* from stats frames */
    uint64_t dropped_total;  /* from stats frames: every drop of every context */
    uint64_t unknown;
    uint64_t resyncs;
    uint64_t skipped_bytes;  /* skipped while resynchronising */
    uint64_t lost_bytes;
    uint64_t frames, bad_frames;
    uint64_t errors;         /* problems reported as warnings or errors */
    uint64_t notices;        /* problems reported as notes */
    uint64_t marked;         /* LOG records with a marked conversion: findings */
    bool fatal;              /* refused (build id, layout): nothing more is decoded */
};

struct emb_log_decoder_options {
    const struct emb_logdb *db;
    const char *name;        /* for messages */
    bool raw;                /* the input is bare records of one context, not frames */
    uint16_t raw_context;
    /* Decode a stream whose hello carries no build id (else refused, nothing decoded). */
    bool no_build_id_check;
    /* Records carry no text (empty): for a walk that needs only their times and contexts
     * (emb_log_merge_plan), which then formats nothing. */
    bool no_text;
    void (*record)(void *arg, const struct emb_logrec *rec);
    void *arg;               /* for record() */
    /* Where problems go, at their stream offsets: a refusal (build id, layout) an error,
     * what is lost or damaged a warning (both count toward the exit status), what is
     * worth knowing a note. May be NULL: problems are only counted. */
    struct emb_problems *problems;
};

struct emb_log_decoder;

struct emb_log_decoder *emb_log_decoder_new(const struct emb_log_decoder_options *opt);
void emb_log_decoder_free(struct emb_log_decoder *d);
/* Feeds stream bytes. */
void emb_log_decoder_feed(struct emb_log_decoder *d, const uint8_t *data, size_t len);
/* The stream ended: reports cut records and frames, emits unannounced drops. */
void emb_log_decoder_finish(struct emb_log_decoder *d);
const struct emb_log_decoder_summary *emb_log_decoder_summary(const struct emb_log_decoder *d);
const struct emb_log_hello *emb_log_decoder_hello(const struct emb_log_decoder *d);

/* Formats a printf call site's recorded arguments as the target's printf formats the same
 * call (integers at the widths the target's types have, docs/formats/log.md); `clipped` is
 * set when a %s was clipped on the target (its text is followed by the clip mark "…").
 * A conversion outside what can be reproduced (positional arguments, %m, wide characters,
 * a flagged %%, an argument of the wrong kind) is written as "<%2$d: why>" and `mark`
 * gets the first why (else NULL). Returns false, with a message in `out`, when the
 * arguments do not match the signature. The result is NUL-terminated; *len gets its
 * length. */
bool emb_log_format(const struct emb_logdb *db, const struct emb_log_site *site,
                    const uint8_t *args, size_t args_len, char **out, size_t *len, bool *clipped,
                    const char **mark);

/* The clip mark appended to a clipped string. */
#define EMB_LOG_CLIP_MARK "\xe2\x80\xa6"

/* Bytes a record's arguments take (0 or more); EMB_LOG_ARGS_MORE when more bytes are
 * needed than `avail`; EMB_LOG_ARGS_BAD when they are malformed (a length byte out of
 * bounds), with `err` set. */
#define EMB_LOG_ARGS_BAD (-1L)
#define EMB_LOG_ARGS_MORE (-2L)
long emb_log_args_size(const struct emb_logdb *db, const struct emb_log_site *site,
                       const uint8_t *args, size_t avail, const char **err);

#endif /* EMB_HOST_LOG_DECODE_H */
