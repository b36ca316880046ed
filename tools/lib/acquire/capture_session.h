/* Recording one run into a sealed capture (docs/formats/capture.md): the trace stream
 * comes from a file or live from a capture source (capture_source.h); it must decode
 * cleanly with its catalogue; then the identity the firmware stamped, its window, the CTF
 * metadata, the stream and the log, crash-record and descriptor sections are sealed
 * under a CRC-32. Nothing here prints or writes the capture out: problems go to the
 * caller's sink, the sealed bytes to the caller.
 *
 *   emb_capture_session_acquire()  the trace stream (and live: its log, crash, stats)
 *   emb_capture_session_seal()     the capture file, in memory
 */
#ifndef EMB_HOST_CAPTURE_SESSION_H
#define EMB_HOST_CAPTURE_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "capture_source.h"
#include "catalog.h"
#include "problem.h"

struct emb_capture_session_options {
    const char *source;                    /* the trace stream file (live: the target) */
    const struct emb_source_options *live; /* a live source, or NULL: read `source` */
    const char *label, *revision;          /* may be NULL */
    /* Files kept as sections, or NULL; a live source's log and crash record are kept
     * when no file is given for them. */
    const char *log, *crash, *descriptor;
    /* The catalogue to check the stream with; NULL: catalog_for(the checksum the stream
     * names) when given and it knows one, else the built-in catalogue. */
    const struct emb_catalog *catalog;
    const struct emb_catalog *(*catalog_for)(uint32_t checksum);
    /* The YAML text of `catalog` when it is not the built-in one, or NULL: kept in the
     * capture's catalog section so decoding it needs no --catalog. With neither, a
     * catalogue catalog_for does not know is taken from the stream header's catalog block
     * (trace_catalog.h) when it carries one, and kept the same way. */
    const char *catalog_text;
    size_t catalog_text_len;
    /* Decoding progress (bytes done of total), or NULL. */
    void (*progress)(void *arg, uint64_t done, uint64_t total);
    void *progress_arg;
};

struct emb_capture_session {
    struct emb_source_result live; /* live: what the source gave (trace, log, crash, stats) */
    uint8_t *trace;                /* the trace stream: live.trace, or the file's bytes */
    size_t trace_len;
    /* After sealing: */
    struct emb_capture_identity identity;
    struct emb_capture_window window;
    uint8_t *file; /* the capture file (malloc'd, owned by the session) */
    size_t file_len;
    /* The catalogue the stream's header carried, and its text, when it was used. */
    struct emb_catalog *carried;
    char *carried_text;
    size_t carried_text_len;
};

/* Reads the trace stream: the file, or the live source until it stops. Returns 0 (live:
 * even when no stream header arrived: then trace is NULL), or -1 when the source could
 * not be read. Problems name the source (the sink's file) or the file they concern. */
int emb_capture_session_acquire(const struct emb_capture_session_options *o,
                                struct emb_capture_session *s, struct emb_problems *problems);

/* Decodes and checks the stream, reads the section files and seals. Returns 0 with
 * s->file set, or -1 after reporting why not (a stream that does not decode cleanly: its
 * problems, then why it was not sealed). */
int emb_capture_session_seal(const struct emb_capture_session_options *o,
                             struct emb_capture_session *s, struct emb_problems *problems);

void emb_capture_session_free(struct emb_capture_session *s);

#endif /* EMB_HOST_CAPTURE_SESSION_H */
