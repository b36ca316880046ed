/* A capture's identity and window as JSON (capture_json.h). */
#include "capture_json.h"

#include <inttypes.h>
#include <stdio.h>

void emb_capture_json_identity(struct emb_json *j, const struct emb_capture_identity *id)
{
    char hex[65];
    emb_json_begin_object(j, "identity");
    emb_json_string(j, "label", id->label);
    emb_json_string(j, "revision", id->revision);
    snprintf(hex, sizeof hex, "0x%08" PRIx32, id->catalog_checksum);
    emb_json_string(j, "catalogue", hex);
    emb_json_string(j, "build_id", emb_capture_hex(id->build_id, id->build_id_len, hex));
    emb_json_string(j, "firmware", id->firmware);
    emb_json_string(j, "flags", id->config);
    emb_json_string(j, "port", id->port);
    emb_json_uint(j, "clock_hz", id->clock_hz);
    emb_json_int(j, "clock_offset_ns", id->clock_offset_ns);
    snprintf(hex, sizeof hex, "0x%016" PRIx64, id->session_id);
    emb_json_string(j, "session", hex);
    emb_json_string(j, "uuid", emb_capture_hex(id->uuid, 16, hex));
    emb_json_end_object(j);
}

/* The window's counts and each context's row, under the names the schema gives them. */
#define WINDOW(member) EMB_JSON_FIELD(struct emb_capture_window, member, #member, UINT)
static const struct emb_json_field WINDOW_COUNTS[] = {
    WINDOW(capacity), WINDOW(writes), WINDOW(stored), WINDOW(drops), WINDOW(lost_packets),
};
#undef WINDOW
#define ROW(member, key, kind) EMB_JSON_FIELD(struct emb_capture_row, member, key, kind)
static const struct emb_json_field ROW_FIELDS[] = {
    ROW(name, "name", TEXT),                 ROW(id, "id", UINT),
    ROW(events, "events", UINT),             ROW(discarded, "discarded", UINT),
    ROW(lost_packets, "lost_packets", UINT), ROW(earlier, "earlier_packets", UINT),
};
#undef ROW

void emb_capture_json_window(struct emb_json *j, const struct emb_capture_window *w)
{
    emb_json_begin_object(j, "window");
    if (w->armed_frame != EMB_CAP_NO_FRAME)
        emb_json_uint(j, "armed_frame", w->armed_frame);
    else
        emb_json_null(j, "armed_frame");
    EMB_JSON_FIELDS(j, w, WINDOW_COUNTS);
    EMB_JSON_FIELD_ARRAY(j, "contexts", w->rows, w->nrows, ROW_FIELDS);
    emb_json_end_object(j);
}
