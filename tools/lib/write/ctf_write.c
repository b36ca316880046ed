/* CTF 1.8 from a description (ctf_write.h): the TSDL text, packets built in memory, and
 * the directory they are written to. */
#define _POSIX_C_SOURCE 200809L

#include "ctf_write.h"

#include <emb/wire.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CTF_MAGIC 0xC1FC1FC1u
#define CTF_HEADER_LEN 24u /* magic, uuid, stream_id */
/* In the packet context, after timestamp_begin and timestamp_end: */
#define CTF_CONTENT_SIZE_AT (CTF_HEADER_LEN + 16u)
#define CTF_PACKET_SIZE_AT (CTF_HEADER_LEN + 24u)

void emb_ctf_make_uuid(uint8_t uuid[16])
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

static const char *type_name(enum emb_ctf_type t)
{
    switch (t) {
    case EMB_CTF_U8:
        return "uint8_t";
    case EMB_CTF_U32:
        return "uint32_t";
    default:
        return "string";
    }
}

/* The metadata up to the event classes: the trace with its packet header, env, the clock
 * and the one stream. Its arguments: comment, uuid (16 bytes), domain, tracer_name, clock
 * name, description and frequency, then the clock's name five times. */
static const char metadata_head[] =
    "/* CTF 1.8 */\n"
    "/* %s */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "\n"
    "trace {\n"
    "    major = 1;\n"
    "    minor = 8;\n"
    "    uuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\";\n"
    "    byte_order = le;\n"
    "    packet.header := struct {\n"
    "        uint32_t magic;\n"
    "        uint8_t uuid[16];\n"
    "        uint32_t stream_id;\n"
    "    };\n"
    "};\n"
    "\n"
    "env {\n"
    "    domain = \"%s\";\n"
    "    tracer_name = \"%s\";\n"
    "};\n"
    "\n"
    "clock {\n"
    "    name = %s;\n"
    "    description = \"%s\";\n"
    "    freq = %llu;\n"
    "    offset = 0;\n"
    "    absolute = false;\n"
    "};\n"
    "\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.%s.value; } "
    ":= %s_clock_t;\n"
    "\n"
    "stream {\n"
    "    id = 0;\n"
    "    packet.context := struct {\n"
    "        %s_clock_t timestamp_begin;\n"
    "        %s_clock_t timestamp_end;\n"
    "        uint64_t content_size;\n"
    "        uint64_t packet_size;\n"
    "        uint64_t events_discarded;\n"
    "    };\n"
    "    event.header := struct {\n"
    "        uint32_t id;\n"
    "        %s_clock_t timestamp;\n"
    "    };\n"
    "};\n";

/* An event class up to its fields: name, id. */
static const char metadata_event[] =
    "\n"
    "event {\n"
    "    name = \"%s\";\n"
    "    id = %u;\n"
    "    stream_id = 0;\n"
    "    fields := struct {\n";

bool emb_ctf_metadata(const struct emb_ctf_trace_class *tc, struct emb_buf *out)
{
    const uint8_t *u = tc->uuid;
    const char *c = tc->clock_name;
    emb_buf_printf(out, metadata_head, tc->comment, u[0], u[1], u[2], u[3], u[4], u[5], u[6],
                   u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15], tc->domain,
                   tc->tracer_name, c, tc->clock_description,
                   (unsigned long long)tc->clock_freq, c, c, c, c, c);
    for (size_t e = 0; e < tc->nevents; e++) {
        emb_buf_printf(out, metadata_event, tc->events[e].name, (unsigned)tc->events[e].id);
        for (size_t f = 0; f < tc->fields.count; f++)
            emb_buf_printf(out, "        %s %s;\n", type_name(tc->fields.field[f].type),
                           tc->fields.field[f].name);
        emb_buf_printf(out, "    };\n};\n");
    }
    return !out->failed;
}

static void put_u32(struct emb_buf *b, uint32_t v)
{
    uint8_t x[4];
    emb_put_le32(x, v);
    emb_buf_append(b, x, 4);
}

static void put_u64(struct emb_buf *b, uint64_t v)
{
    uint8_t x[8];
    emb_put_le64(x, v);
    emb_buf_append(b, x, 8);
}

void emb_ctf_packet_begin(struct emb_ctf_stream *s, uint64_t begin, uint64_t end,
                          uint64_t discarded)
{
    s->packet_at = s->bytes.len;
    put_u32(&s->bytes, CTF_MAGIC);
    emb_buf_append(&s->bytes, s->tc->uuid, 16);
    put_u32(&s->bytes, 0); /* stream id */
    put_u64(&s->bytes, begin);
    put_u64(&s->bytes, end);
    put_u64(&s->bytes, 0); /* content_size and packet_size: set by emb_ctf_packet_end() */
    put_u64(&s->bytes, 0);
    put_u64(&s->bytes, discarded);
}

void emb_ctf_event(struct emb_ctf_stream *s, uint32_t id, uint64_t ts,
                   const struct emb_ctf_value *v)
{
    put_u32(&s->bytes, id);
    put_u64(&s->bytes, ts);
    for (size_t f = 0; f < s->tc->fields.count; f++) {
        switch (s->tc->fields.field[f].type) {
        case EMB_CTF_U8:
            emb_buf_append_byte(&s->bytes, (uint8_t)v[f].u);
            break;
        case EMB_CTF_U32:
            put_u32(&s->bytes, (uint32_t)v[f].u);
            break;
        case EMB_CTF_STRING:
            emb_buf_append(&s->bytes, v[f].s, strlen(v[f].s) + 1);
            break;
        }
    }
}

void emb_ctf_packet_end(struct emb_ctf_stream *s)
{
    if (s->bytes.failed)
        return;
    uint64_t bits = (uint64_t)(s->bytes.len - s->packet_at) * 8u;
    emb_put_le64(s->bytes.data + s->packet_at + CTF_CONTENT_SIZE_AT, bits);
    emb_put_le64(s->bytes.data + s->packet_at + CTF_PACKET_SIZE_AT, bits);
}

int emb_ctf_make_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0777) == 0)
        return 0;
    if (errno == EEXIST)
        return 1;
    snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
    return -1;
}

int emb_ctf_write_file(const char *dir, const char *name, const void *data, size_t len,
                       char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    bool written = f != NULL && fwrite(data, 1, len, f) == len;
    if (f != NULL && fclose(f) != 0)
        written = false;
    if (!written) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

FILE *emb_ctf_open_file(const char *dir, const char *name, char path[4096], char *err,
                        size_t errlen)
{
    snprintf(path, 4096, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return f;
}

int emb_ctf_close_file(FILE *f, const char *path, bool failed, char *err, size_t errlen)
{
    failed |= ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
