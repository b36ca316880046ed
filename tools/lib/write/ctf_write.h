/* CTF 1.8 written from a description: the metadata (TSDL) of a trace of one stream whose
 * event classes share one list of typed fields, and that stream's packets, built in memory
 * and written with the metadata into a directory. `emb events export` describes its service
 * events this way. A decoded trace needs none of it: its packets already are CTF and its
 * TSDL is the catalogue's (emb_catalog_write_tsdl, which the capture decoder and embgen
 * write too), so trace_ctf.c copies them and shares only the directory handling here. */
#ifndef EMB_WRITE_CTF_WRITE_H
#define EMB_WRITE_CTF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buffer.h"

enum emb_ctf_type {
    EMB_CTF_U8,     /* uint8_t */
    EMB_CTF_U32,    /* uint32_t, little-endian */
    EMB_CTF_STRING, /* NUL-terminated */
};

struct emb_ctf_field {
    const char *name;
    enum emb_ctf_type type;
};

/* The fields every event class of a trace carries, one value per field. */
struct emb_ctf_fields {
    const struct emb_ctf_field *field;
    size_t count;
};

struct emb_ctf_event_class {
    const char *name;
    uint32_t id;
};

/* One trace of one stream (id 0). Every event has the header {uint32_t id; clock
 * timestamp}; every packet the context {timestamp_begin, timestamp_end, content_size,
 * packet_size, events_discarded}, all uint64_t. */
struct emb_ctf_trace_class {
    const char *comment; /* the metadata's second line, inside a comment */
    uint8_t uuid[16];
    const char *domain, *tracer_name; /* the env block */
    const char *clock_name, *clock_description;
    uint64_t clock_freq; /* Hz */
    const struct emb_ctf_event_class *events;
    size_t nevents;
    struct emb_ctf_fields fields;
};

/* A random (version 4) UUID, from /dev/urandom or, without it, the clock and the pid. */
void emb_ctf_make_uuid(uint8_t uuid[16]);

/* The metadata text. false when memory ran out. */
bool emb_ctf_metadata(const struct emb_ctf_trace_class *tc, struct emb_buf *out);

/* A value of a field: `u` for integers, `s` for strings. */
struct emb_ctf_value {
    uint64_t u;
    const char *s;
};

/* The stream being built: one packet at a time. */
struct emb_ctf_stream {
    const struct emb_ctf_trace_class *tc;
    struct emb_buf bytes;
    size_t packet_at; /* where the open packet starts */
};

/* Opens a packet spanning [begin, end] of the clock, after `discarded` events lost. */
void emb_ctf_packet_begin(struct emb_ctf_stream *s, uint64_t begin, uint64_t end,
                          uint64_t discarded);
/* Appends an event of class `id` at `ts`, v[i] the value of the trace class's field i. */
void emb_ctf_event(struct emb_ctf_stream *s, uint32_t id, uint64_t ts,
                   const struct emb_ctf_value *v);
/* Closes the packet: its content and packet size are what was appended, no padding. */
void emb_ctf_packet_end(struct emb_ctf_stream *s);

/* Creates `dir`: 0, or 1 when it already exists, or -1 with a message in err. */
int emb_ctf_make_dir(const char *dir, char *err, size_t errlen);
/* Writes DIR/NAME. 0, or -1 with a message ("PATH: reason") in err. */
int emb_ctf_write_file(const char *dir, const char *name, const void *data, size_t len,
                       char *err, size_t errlen);
/* Opens DIR/NAME for writing, its path in path[4096]; NULL with a message in err. */
FILE *emb_ctf_open_file(const char *dir, const char *name, char path[4096], char *err,
                        size_t errlen);
/* Closes what emb_ctf_open_file() opened: 0, or -1 ("PATH: write error: ...") when a
 * write or the close failed, or `failed` says an earlier step did. */
int emb_ctf_close_file(FILE *f, const char *path, bool failed, char *err, size_t errlen);

#endif /* EMB_WRITE_CTF_WRITE_H */
