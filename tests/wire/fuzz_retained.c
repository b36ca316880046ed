/* libFuzzer: the retained ring on arbitrary memory. The input is a region image: the host
 * reader must find or refuse a ring without reading outside it, and the target's attach
 * must turn any content into a valid ring (kept or reinitialised) that then takes frames
 * and reads back whole frames only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <emb/retained.h>

#include "retained_host.h"

static emb_status sink(void *arg, const uint8_t *p, uint32_t n)
{
    size_t *total = arg;
    for (uint32_t i = 0; i < n; i++)
        *total += p[i];
    return EMB_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    /* The host reader, on the bytes as they are. */
    struct emb_retained_view v;
    char err[200];
    if (emb_retained_find(data, size, 0, &v, err, sizeof err) == 0) {
        uint8_t *out = malloc(v.pending + 1u);
        emb_retained_copy(data, &v, out);
        free(out);
    }
    /* The target: attach to a copy (4-aligned), write frames, read them back. */
    size_t n = size & ~(size_t)3u;
    uint32_t *mem = malloc(n + 4u);
    memcpy(mem, data, n);
    struct emb_retained_info info;
    if (emb_retained_attach(mem, n, &info) == EMB_OK) {
        struct emb_retained_ring *r = (struct emb_retained_ring *)mem;
        size_t total = 0;
        emb_retained_read(r, sink, &total);
        uint8_t payload[300];
        memset(payload, 0x5A, sizeof payload);
        for (unsigned i = 0; i < 8; i++)
            emb_retained_put_frame(r, (uint8_t)(i % 16u), payload, (i * 77u) % sizeof payload);
        emb_retained_read(r, sink, &total);
        if (emb_retained_find((const uint8_t *)mem, n, 0, &v, NULL, 0) != 0 ||
            v.pending != emb_retained_pending(r))
            abort(); /* an attached ring is always one the host reader accepts */
        emb_retained_clear(r);
    }
    free(mem);
    return 0;
}
