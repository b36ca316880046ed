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

void emb_capture_json_window(struct emb_json *j, const struct emb_capture_window *w)
{
    emb_json_begin_object(j, "window");
    if (w->armed_frame != EMB_CAP_NO_FRAME)
        emb_json_uint(j, "armed_frame", w->armed_frame);
    else
        emb_json_null(j, "armed_frame");
    emb_json_uint(j, "capacity", w->capacity);
    emb_json_uint(j, "writes", w->writes);
    emb_json_uint(j, "stored", w->stored);
    emb_json_uint(j, "drops", w->drops);
    emb_json_uint(j, "lost_packets", w->lost_packets);
    emb_json_begin_array(j, "contexts");
    for (size_t i = 0; i < w->nrows; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_string(j, "name", w->rows[i].name);
        emb_json_uint(j, "id", w->rows[i].id);
        emb_json_uint(j, "events", w->rows[i].events);
        emb_json_uint(j, "discarded", w->rows[i].discarded);
        emb_json_uint(j, "lost_packets", w->rows[i].lost_packets);
        emb_json_uint(j, "earlier_packets", w->rows[i].earlier);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_end_object(j);
}
