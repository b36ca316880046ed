/* A printf call site's format read once (at emb_logdb_open), not at every record: its
 * literal text and plain integer and string conversions as steps, so a record of the
 * site is formatted by hand into a buffer the caller keeps (log_plan.c). A format with
 * anything else (flags, widths, precisions, '*', floating point, %c, %p, %n, positional
 * arguments, a conversion without its argument) has no plan and goes through
 * emb_log_format's general path, as does a record whose %s is NULL: both give the same
 * text. */
#ifndef EMB_HOST_LOG_PLAN_H
#define EMB_HOST_LOG_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log_decode.h"

/* A literal of at most this many bytes is copied as this many: the site strings
 * (emb_logdb.strings) and the text buffer have that many bytes to spare at their end. */
#define PLAN_SLACK 16u

/* Reads every printf site's format into db->plans (sites without a plan keep NULL) and
 * sets db->plan_text_max. False when out of memory. */
bool emb_log_plan_sites(struct emb_logdb *db);
void emb_log_plans_free(struct emb_logdb *db);

/* Formats a record of a planned site into `out` (room for db->plan_text_max bytes, which
 * count a NUL and PLAN_SLACK):
 * false when the site has no plan or the record needs the general path (a NULL %s).
 * `args` holds exactly the record's arguments (emb_log_args_size). */
bool emb_log_format_planned(const struct emb_logdb *db, const struct emb_log_site *site,
                            const uint8_t *args, char *out, size_t *len, bool *clipped);

/* Bytes of the C type a length modifier names, on the target: %ld of a 32-bit target's
 * long prints its 32 bits, whatever the host's long is. */
unsigned emb_log_target_int_bytes(const struct emb_logdb *db, const char *len);
/* Whether an argument of the recorded type is an integer (a pointer's address too). */
bool emb_log_arg_is_int(char type);

#endif /* EMB_HOST_LOG_PLAN_H */
