/* The fleet's HTML report: one self-contained page (no script, nothing fetched) with the
 * buckets ranked by count, a chart of each bucket's records per firmware version (inline
 * SVG), each bucket's newest example decoded, and the refused files with their reasons. */
#ifndef EMB_FLEET_REPORT_H
#define EMB_FLEET_REPORT_H

#include <stdio.h>

#include "fleet_db.h"

/* Writes the report of the database to out. Returns 0, or nonzero after a database error
 * (db->err). */
int emb_fleet_report_html(struct emb_fleet_db *db, FILE *out);

#endif /* EMB_FLEET_REPORT_H */
