/* A capture's identity and window as JSON members, written alike by `emb inspect --json`
 * and `emb capture --json`. */
#ifndef EMB_HOST_CAPTURE_JSON_H
#define EMB_HOST_CAPTURE_JSON_H

#include "capture.h"
#include "json.h"

/* "identity": {label, revision, catalogue, build_id, firmware, flags, port, clock_hz,
 * clock_offset_ns, session, uuid} */
void emb_capture_json_identity(struct emb_json *j, const struct emb_capture_identity *id);
/* "window": {armed_frame (null when not armed), capacity, writes, stored, drops,
 * lost_packets, contexts: [{name, id, events, discarded, lost_packets, earlier_packets}]} */
void emb_capture_json_window(struct emb_json *j, const struct emb_capture_window *w);

#endif /* EMB_HOST_CAPTURE_JSON_H */
