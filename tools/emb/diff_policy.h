/* What `emb diff` adds for traces whose catalogue carries no policies (a CTF trace read
 * through libbabeltrace2, docs/ctf-foreign.md): per-field policies (--field
 * EVENT.FIELD=exact|ignore|tol:N|tol:N%), a small YAML policy file (--policy), context
 * pairs (--pair GOOD=BAD), and, without an anchor, the events that could serve as one.
 * Each becomes a line of the rules language (docs/diff.md), so one parser checks them. */
#ifndef EMB_DIFF_POLICY_H
#define EMB_DIFF_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "capture.h"
#include "catalog.h"
#include "diff.h"

/* `EVENT[.FIELD]` as the catalogue names it: for a CTF trace (`ctf`), each part through
 * emb_ctf_name() ("reqsrv:query.rows" is "reqsrv_query.rows"); otherwise unchanged. */
void emb_diff_spec_name(const char *spec, bool ctf, const struct emb_catalog *cat, char *out, size_t len);

/* --field EVENT.FIELD=POLICY applied; 0, or EMB_EXIT_BAD after saying why. */
int emb_diff_field_option(struct emb_diff_rules *r, const struct emb_catalog *cat, bool ctf,
                          const char *value);
/* --pair GOOD=BAD applied; 0, or EMB_EXIT_BAD after saying why. */
int emb_diff_pair_option(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *value);

/* --policy FILE: a YAML mapping of `anchor: EVENT[.FIELD]`, `pair: {GOOD: BAD, ...}`,
 * `fields: {EVENT.FIELD: POLICY, ...}` and `rules: {RULE: on|off, ...}`. 0, or
 * EMB_EXIT_BAD after saying why ("FILE:LINE: message"). */
int emb_diff_policy_file(struct emb_diff_rules *r, const struct emb_catalog *cat, bool ctf,
                         const char *path);

/* The events of `cap` that could serve as an anchor: "E.F (N times, F rising)" for an
 * event with an integer field that rises along its context, else "E (N times)" for events
 * seen more than once; at most five, written into buf ("" none). */
void emb_diff_anchor_candidates(const struct emb_capture *cap, char *buf, size_t len);

#endif /* EMB_DIFF_POLICY_H */
