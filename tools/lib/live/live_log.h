/* The latest log lines of a running target: its deferred log stream (the log frames a
 * source carries, struct emb_source_result.log) decoded as it arrives against the
 * firmware's ELF (log_decode.h, the decoder `emb log` uses), the last EMB_LIVE_LOG_LINES
 * kept with the counts of what was logged and what was dropped. What `emb top` shows
 * under its tables; nothing here draws.
 *
 *   emb_live_log_feed()  the stream's next bytes, cut anywhere
 *   emb_live_log_view()  the lines kept, oldest first, and the counts
 */
#ifndef EMB_HOST_LIVE_LOG_H
#define EMB_HOST_LIVE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_decode.h"

#define EMB_LIVE_LOG_LINES 8u

struct emb_live_log_line {
    bool has_ts;
    uint64_t ts;               /* the target's clock ticks */
    uint8_t level;             /* EMB_LOG_LEVEL_*: 1 error .. 4 debug */
    char module[16];
    char text[160];            /* the message as printf printed it, cut to fit */
};

struct emb_live_log_view {
    uint64_t records;          /* log calls decoded (and hexdumps) */
    uint64_t dropped;          /* records the target dropped, as it announced them */
    uint64_t lost_bytes;       /* ring bytes the stream never carried */
    uint64_t unknown;          /* records of an id the ELF does not have */
    const struct emb_live_log_line *lines; /* oldest first */
    size_t nlines;
};

struct emb_live_log;

/* `db` (the ELF's call sites) stays the caller's; problems go to `problems` (may be NULL).
 * NULL when out of memory. */
struct emb_live_log *emb_live_log_new(const struct emb_logdb *db, struct emb_problems *problems);
void emb_live_log_free(struct emb_live_log *l);
void emb_live_log_feed(struct emb_live_log *l, const uint8_t *bytes, size_t len);
/* The stream ended: drops announced after the last record are counted. */
void emb_live_log_finish(struct emb_live_log *l);
/* Valid until the next feed. */
const struct emb_live_log_view *emb_live_log_view(struct emb_live_log *l);

#endif /* EMB_HOST_LIVE_LOG_H */
