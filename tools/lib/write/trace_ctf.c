/* The trace as a CTF 1.8 directory: the packets already are CTF, so this writes the
 * metadata and copies each context's packets into a stream file of its own. */
#define _POSIX_C_SOURCE 200809L

#include "trace_write.h"

#include "ctf_write.h"

#include <emb/trace_format.h>
#include <emb/wire.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool emb_trace_ctf_owns(const char *name)
{
    if (!strcmp(name, "metadata"))
        return true;
    if (strncmp(name, "stream_", 7) || !name[7])
        return false;
    for (const char *p = name + 7; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* Creates `dir`, or empties one that holds only what a previous run wrote. A CTF reader
 * reads every non-hidden file of the directory, so anything else there is refused. */
static int prepare_dir(const char *dir, char *err, size_t errlen)
{
    int made = emb_ctf_make_dir(dir, err, errlen);
    if (made <= 0)
        return made;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (!emb_trace_ctf_owns(de->d_name)) {
            snprintf(err, errlen,
                     "%s holds '%s', which is not part of a trace; a CTF reader would read it: "
                     "give an empty or new directory", dir, de->d_name);
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        rewinddir(d);
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.' || !emb_trace_ctf_owns(de->d_name))
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            if (unlink(path) != 0) {
                snprintf(err, errlen, "%s: cannot remove: %s", path, strerror(errno));
                rc = -1;
                break;
            }
        }
    }
    closedir(d);
    return rc;
}

static int write_metadata(const struct emb_trace *t, const char *dir, char *err, size_t errlen)
{
    const struct emb_trace_info *h = emb_trace_info(t);
    char path[4096], build_id[2 * 32 + 1];
    for (unsigned i = 0; i < h->build_id_len; i++)
        snprintf(build_id + 2 * i, 3, "%02x", h->build_id[i]);
    build_id[2 * h->build_id_len] = 0;
    struct emb_tsdl_params params = {
        .clock_hz = h->clock_hz,
        .clock_offset_ns = h->clock_offset_ns,
        .port = h->port[0] ? h->port : NULL,
        .build_id_hex = h->build_id_len ? build_id : NULL,
    };
    memcpy(params.uuid, h->uuid, 16);
    FILE *f = emb_ctf_open_file(dir, "metadata", path, err, errlen);
    if (!f)
        return -1;
    int rc = emb_catalog_write_tsdl(emb_trace_catalog(t), &params, f);
    return emb_ctf_close_file(f, path, rc != 0, err, errlen);
}

static const struct emb_trace_packet *sort_base;

static int by_context(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_base[x].ctx != sort_base[y].ctx)
        return sort_base[x].ctx < sort_base[y].ctx ? -1 : 1;
    return x < y ? -1 : x > y; /* file order within a context */
}

/* A packet holding no event, with `like`'s header, numbered `seq`, at `ts`, whose
 * events_discarded is `discarded`: what lets babeltrace2 count a loss at a stream's ends. */
static void write_empty_packet(FILE *f, const struct emb_trace_packet *like, uint32_t seq,
                               uint64_t ts, uint32_t discarded, uint32_t P)
{
    if (P < EMB_PKT_HEADER_SIZE)
        return;
    uint8_t *pkt = calloc(1, P);
    if (!pkt)
        return;
    memcpy(pkt, like->data, EMB_PKT_HEADER_SIZE);
    emb_put_le32(pkt + EMB_PKT_OFF_SEQ, seq);
    emb_put_le64(pkt + EMB_PKT_OFF_TS_BEGIN, ts);
    emb_put_le64(pkt + EMB_PKT_OFF_TS_END, ts);
    emb_put_le32(pkt + EMB_PKT_OFF_CONTENT_SIZE, EMB_PKT_HEADER_SIZE * 8u);
    emb_put_le32(pkt + EMB_PKT_OFF_DISCARDED, discarded);
    fwrite(pkt, 1, P, f);
    free(pkt);
}

/* Writes the packets order[0..n) (one context's, in order) to DIR/stream_<id>. */
static int write_stream(const struct emb_trace *t, const char *dir, const size_t *order,
                        size_t n, char *err, size_t errlen)
{
    size_t npk;
    const struct emb_trace_packet *pk = emb_trace_packets(t, &npk);
    uint32_t P = emb_trace_info(t)->packet_size;
    char path[4096], name[32];
    snprintf(name, sizeof name, "stream_%u", emb_trace_context(t, pk[order[0]].ctx)->id);
    FILE *f = emb_ctf_open_file(dir, name, path, err, errlen);
    if (!f)
        return -1;
    /* babeltrace2 counts discarded events as the difference between two packets'
     * events_discarded: the first packet's own total (a snapshot's overwritten packets)
     * would be "may have discarded", uncounted. An empty packet before it, numbered just
     * before it and ending where it begins, gives the count a zero to start from. */
    const struct emb_trace_packet *first = &pk[order[0]], *last = &pk[order[n - 1]];
    if (first->discarded > 0u && first->seq > 0u)
        write_empty_packet(f, first, first->seq - 1u, first->ts_begin, 0u, P);
    /* A first packet numbered 0 has no number before it; and a dump's context table may
     * count drops after the last packet closed (a window's end). Either loss goes into
     * an empty packet after the last, counted from the first packet's zero. */
    bool first_uncounted = first->discarded > 0u && first->seq == 0u;
    uint64_t total = emb_trace_context(t, last->ctx)->discarded;
    bool tail = first_uncounted || total > last->discarded;
    /* Verbatim: the metadata declares the payloads' tail padding, so the content_size
     * the ring wrote is what a CTF reader expects. */
    for (size_t i = 0; i < n; i++) {
        const uint8_t *data = pk[order[i]].data;
        uint8_t *copy = NULL;
        if (i == 0 && first_uncounted && (copy = malloc(P)) != NULL) {
            memcpy(copy, data, P);
            emb_put_le32(copy + EMB_PKT_OFF_DISCARDED, 0u);
            data = copy;
        }
        size_t wrote = fwrite(data, 1, P, f);
        free(copy);
        if (wrote != P)
            break;
    }
    if (tail)
        write_empty_packet(f, last, last->seq + 1u, last->ts_end, (uint32_t)total, P);
    return emb_ctf_close_file(f, path, false, err, errlen);
}

int emb_trace_write_ctf(const struct emb_trace *t, const char *dir, char *err, size_t errlen)
{
    if (prepare_dir(dir, err, errlen) || write_metadata(t, dir, err, errlen))
        return -1;
    size_t npk, n = 0;
    const struct emb_trace_packet *pk = emb_trace_packets(t, &npk);
    size_t *order = malloc((npk ? npk : 1) * sizeof *order);
    if (!order) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < npk; i++)
        if (pk[i].clean) /* a reader would stop at the event we could not decode */
            order[n++] = i;
    sort_base = pk;
    qsort(order, n, sizeof *order, by_context);
    int rc = 0;
    for (size_t i = 0, j; i < n && rc == 0; i = j) {
        for (j = i + 1; j < n && pk[order[j]].ctx == pk[order[i]].ctx; j++)
            ;
        rc = write_stream(t, dir, order + i, j - i, err, errlen);
    }
    free(order);
    return rc;
}
