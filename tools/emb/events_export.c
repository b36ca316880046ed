/* `emb events export`: a dump of service IPC events as a trace. Perfetto gets Chrome JSON (a
 * slice per call on its caller's track, flows from a call to the calls made to serve it);
 * CTF gets a small CTF 1.8 directory of its own (metadata and one stream), since these
 * events are not the catalogue's. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <emb/wire.h>

#include "cli.h"
#include "events_cmd.h"

uint64_t emb_events_time_us(const struct emb_events_view *v, size_t i)
{
    uint64_t ordinal = 0;
    while (ordinal < i && v->ev[i - ordinal - 1].at_s == v->ev[i].at_s)
        ordinal++;
    if (ordinal > 999999)
        ordinal = 999999;
    return (uint64_t)v->ev[i].at_s * 1000000u + ordinal;
}

/* ---- Perfetto ---- */

/* The track of each caller: 1 + its index in order of first appearance. */
static unsigned track_of(const struct emb_events_view *v, const char *caller)
{
    unsigned t = 0;
    for (size_t i = 0; i < v->n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(v->ev[k].caller, v->ev[i].caller) == 0;
        if (seen)
            continue;
        t++;
        if (strcmp(v->ev[i].caller, caller) == 0)
            return t;
    }
    return 0;
}

static const struct emb_svc_event *call_event(const struct emb_events_view *v, size_t c)
{
    const struct emb_events_call *k = &v->calls->call[c];
    return &v->ev[k->request != EMB_EVENTS_NONE ? k->request : k->outcome];
}

static uint64_t call_start(const struct emb_events_view *v, size_t c)
{
    const struct emb_events_call *k = &v->calls->call[c];
    return emb_events_time_us(v, k->request != EMB_EVENTS_NONE ? k->request : k->outcome);
}

static uint64_t call_end(const struct emb_events_view *v, size_t c)
{
    const struct emb_events_call *k = &v->calls->call[c];
    if (k->outcome != EMB_EVENTS_NONE)
        return emb_events_time_us(v, k->outcome);
    return v->n ? emb_events_time_us(v, v->n - 1) + 1 : 0; /* still outstanding */
}

static void json_common(struct emb_json *j, const char *ph, const char *name, const char *cat,
                        unsigned track, uint64_t ts)
{
    emb_json_begin_object(j, NULL);
    emb_json_string(j, "ph", ph);
    emb_json_string(j, "name", name);
    if (cat)
        emb_json_string(j, "cat", cat);
    emb_json_uint(j, "pid", track);
    emb_json_uint(j, "tid", track);
    emb_json_uint(j, "ts", ts);
}

int emb_events_write_perfetto(const struct emb_events_view *v, FILE *out)
{
    struct emb_json j;
    emb_json_init(&j, out, false);
    emb_json_begin_object(&j, NULL);
    emb_json_begin_array(&j, "traceEvents");
    for (size_t i = 0; i < v->n; i++) {
        unsigned t = track_of(v, v->ev[i].caller);
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(v->ev[k].caller, v->ev[i].caller) != 0;
        if (!first)
            continue;
        for (int m = 0; m < 2; m++) {
            json_common(&j, "M", m ? "thread_name" : "process_name", NULL, t, 0);
            emb_json_begin_object(&j, "args");
            emb_json_string(&j, "name", v->ev[i].caller);
            emb_json_end_object(&j);
            emb_json_end_object(&j);
        }
    }
    unsigned flow = 0;
    for (size_t c = 0; c < v->calls->count; c++) {
        const struct emb_events_call *k = &v->calls->call[c];
        const struct emb_svc_event *e = call_event(v, c);
        char target[64], chain[160];
        emb_events_target(v->ops, e->peer, e->op, target, sizeof target);
        emb_events_chain(v->calls, v->ev, v->ops, c, chain, sizeof chain);
        unsigned t = track_of(v, e->caller);
        const char *outcome = k->outcome != EMB_EVENTS_NONE ? emb_svc_kind_name(k->kind)
                                                            : "outstanding";
        uint64_t start = call_start(v, c), end = call_end(v, c);
        if (k->request == EMB_EVENTS_NONE) {
            /* Its REQUEST left the ring: only the end is known. */
            json_common(&j, "i", target, outcome, t, start);
            emb_json_string(&j, "s", "t");
        } else {
            json_common(&j, "X", target, outcome, t, start);
            emb_json_uint(&j, "dur", end > start ? end - start : 1);
        }
        emb_json_begin_object(&j, "args");
        emb_json_string(&j, "outcome", outcome);
        emb_json_string(&j, "peer", e->peer);
        emb_json_uint(&j, "op", e->op);
        emb_json_uint(&j, "seq", e->seq);
        emb_json_string(&j, "chain", chain);
        emb_json_end_object(&j);
        emb_json_end_object(&j);
        if (k->parent == EMB_EVENTS_NONE || k->request == EMB_EVENTS_NONE)
            continue;
        /* A flow from the call being served to this one, leaving the parent's slice no later
         * than it ended (a parent that timed out may end before its child starts). */
        uint64_t pend = call_end(v, k->parent);
        uint64_t from = start < pend ? start : pend;
        flow++;
        json_common(&j, "s", "chain", "chain", track_of(v, call_event(v, k->parent)->caller), from);
        emb_json_uint(&j, "id", flow);
        emb_json_end_object(&j);
        json_common(&j, "f", "chain", "chain", t, start);
        emb_json_uint(&j, "id", flow);
        emb_json_string(&j, "bp", "e");
        emb_json_end_object(&j);
    }
    emb_json_end_array(&j);
    emb_json_string(&j, "displayTimeUnit", "ms");
    emb_json_begin_object(&j, "otherData");
    emb_json_string(&j, "source", "emb events export");
    emb_json_string(&j, "clock", "seconds since the sink started; events within a second "
                                 "1 us apart in arrival order");
    emb_json_uint(&j, "dropped", v->dropped);
    emb_json_end_object(&j);
    emb_json_end_object(&j);
    emb_json_end(&j);
    return ferror(out) ? -1 : 0;
}

/* ---- CTF 1.8 ---- */

#define CTF_MAGIC 0xC1FC1FC1u
#define CTF_HEADER_LEN 24u  /* magic, uuid, stream_id */
#define CTF_CONTEXT_LEN 40u /* timestamp_begin, timestamp_end, content_size, packet_size,
                             * events_discarded: u64 each */

static const char ctf_metadata_head[] =
    "/* CTF 1.8 */\n"
    "/* Service IPC events from the emb `events` sink (emb events export --format ctf). */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "\n"
    "trace {\n"
    "    major = 1;\n"
    "    minor = 8;\n"
    "    uuid = \"%s\";\n"
    "    byte_order = le;\n"
    "    packet.header := struct {\n"
    "        uint32_t magic;\n"
    "        uint8_t uuid[16];\n"
    "        uint32_t stream_id;\n"
    "    };\n"
    "};\n"
    "\n"
    "env {\n"
    "    domain = \"emb-services\";\n"
    "    tracer_name = \"emb events\";\n"
    "};\n"
    "\n"
    "clock {\n"
    "    name = sink;\n"
    "    description = \"the events sink: whole seconds since it started, events within a "
    "second 1 us apart in arrival order\";\n"
    "    freq = 1000000;\n"
    "    offset = 0;\n"
    "    absolute = false;\n"
    "};\n"
    "\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.sink.value; } "
    ":= sink_clock_t;\n"
    "\n"
    "stream {\n"
    "    id = 0;\n"
    "    packet.context := struct {\n"
    "        sink_clock_t timestamp_begin;\n"
    "        sink_clock_t timestamp_end;\n"
    "        uint64_t content_size;\n"
    "        uint64_t packet_size;\n"
    "        uint64_t events_discarded;\n"
    "    };\n"
    "    event.header := struct {\n"
    "        uint32_t id;\n"
    "        sink_clock_t timestamp;\n"
    "    };\n"
    "};\n";

static const char ctf_event_class[] =
    "\n"
    "event {\n"
    "    name = \"svc:%s\";\n"
    "    id = %u;\n"
    "    stream_id = 0;\n"
    "    fields := struct {\n"
    "        uint32_t seq;\n"
    "        uint32_t at_s;\n"
    "        string caller;\n"
    "        string peer;\n"
    "        uint8_t op;\n"
    "        string target;\n"
    "        string chain;\n"
    "    };\n"
    "};\n";

struct bytes {
    uint8_t *p;
    size_t len, cap;
};

static int put(struct bytes *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (p == NULL)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

static int put_u32(struct bytes *b, uint32_t v)
{
    uint8_t x[4];
    emb_put_le32(x, v);
    return put(b, x, 4);
}

static int put_u64(struct bytes *b, uint64_t v)
{
    uint8_t x[8];
    emb_put_le64(x, v);
    return put(b, x, 8);
}

static int put_str(struct bytes *b, const char *s)
{
    return put(b, s, strlen(s) + 1);
}

static void make_uuid(uint8_t uuid[16])
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, uuid, 16) : -1;
    if (fd >= 0)
        close(fd);
    if (n != 16) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t seed = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
        for (int i = 0; i < 16; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uuid[i] = (uint8_t)(seed >> 56);
        }
    }
    uuid[6] = (uint8_t)((uuid[6] & 0x0F) | 0x40); /* version 4 */
    uuid[8] = (uint8_t)((uuid[8] & 0x3F) | 0x80);
}

static int write_file(const char *dir, const char *name, const void *data, size_t len, char *err,
                      size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int emb_events_write_ctf(const struct emb_events_view *v, const char *dir, char *err,
                         size_t errlen)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    uint8_t uuid[16];
    make_uuid(uuid);
    char uuid_text[40];
    snprintf(uuid_text, sizeof uuid_text,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", uuid[0],
             uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8], uuid[9],
             uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);

    struct bytes meta = {0}, stream = {0};
    char buf[2048];
    int n = snprintf(buf, sizeof buf, ctf_metadata_head, uuid_text);
    int rc = put(&meta, buf, (size_t)n);
    for (unsigned kind = 1; kind <= EMB_SVC_KIND_MAX && rc == 0; kind++) {
        n = snprintf(buf, sizeof buf, ctf_event_class, emb_svc_kind_name((uint8_t)kind), kind);
        rc = put(&meta, buf, (size_t)n);
    }

    uint64_t begin = v->n ? emb_events_time_us(v, 0) : 0;
    uint64_t end = v->n ? emb_events_time_us(v, v->n - 1) : 0;
    rc = rc || put_u32(&stream, CTF_MAGIC) || put(&stream, uuid, 16) || put_u32(&stream, 0) ||
         put_u64(&stream, begin) || put_u64(&stream, end) || put_u64(&stream, 0) ||
         put_u64(&stream, 0) || put_u64(&stream, v->dropped);
    for (size_t i = 0; i < v->n && rc == 0; i++) {
        const struct emb_svc_event *e = &v->ev[i];
        char target[64], chain[160];
        emb_events_target(v->ops, e->peer, e->op, target, sizeof target);
        emb_events_chain(v->calls, v->ev, v->ops, v->calls->of_event[i], chain, sizeof chain);
        rc = put_u32(&stream, e->kind) || put_u64(&stream, emb_events_time_us(v, i)) ||
             put_u32(&stream, e->seq) || put_u32(&stream, e->at_s) || put_str(&stream, e->caller) ||
             put_str(&stream, e->peer) || put(&stream, &e->op, 1) || put_str(&stream, target) ||
             put_str(&stream, chain);
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: out of memory", dir);
    } else {
        /* content_size and packet_size (bits) are known only now: the whole stream is one
         * packet with no padding. */
        uint64_t bits = (uint64_t)stream.len * 8u;
        emb_put_le64(stream.p + CTF_HEADER_LEN + 16, bits);
        emb_put_le64(stream.p + CTF_HEADER_LEN + 24, bits);
        rc = write_file(dir, "metadata", meta.p, meta.len, err, errlen) ||
             write_file(dir, "services_0", stream.p, stream.len, err, errlen);
    }
    free(meta.p);
    free(stream.p);
    return rc ? -1 : 0;
}
