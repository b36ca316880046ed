/* libFuzzer target: the trace stream decoder and every writer that reads its output.
 * The catalogue checksum of each input is set to the built-in catalogue's, so inputs get
 * past the header check into the packets, where the work is. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "trace_decode.h"
#include "trace_perfetto.h"
#include "trace_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct emb_catalog *cat;
    static FILE *sink;
    if (!cat) {
        cat = emb_catalog_builtin();
        sink = fopen("/dev/null", "w");
        if (!cat || !sink)
            abort();
    }
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    if (size >= EMB_TSF_OFF_CATALOG + 4)
        emb_put_le32(buf + EMB_TSF_OFF_CATALOG, cat->checksum);
    struct emb_trace_options opt = {.catalog = cat, .name = "fuzz"};
    struct emb_trace *t = emb_trace_decode(buf, size, &opt);
    if (t) {
        struct emb_trace_text_options to = {.absolute = (size & 1) != 0};
        emb_trace_write_text(t, sink, &to);
        emb_trace_write_summary(t, sink);
        emb_trace_write_ndjson(t, sink);
        emb_trace_write_json(t, sink);
        emb_trace_write_perfetto(t, sink);
        emb_trace_write_perfetto_proto(t, NULL, sink);
        emb_trace_free(t);
    }
    free(buf);
    return 0;
}
