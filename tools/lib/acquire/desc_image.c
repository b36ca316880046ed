/* The debug descriptor itself (docs/formats/descriptor.md): its header and section words,
 * found at a symbol or by scanning a memory source for the magic. */
#define _GNU_SOURCE

#include "desc_read.h"
#include "desc_read_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#define HEADER_FIXED 16u

static int parse(const uint8_t *b, size_t len, uint64_t addr, struct emb_desc_image *d, char *err,
                 size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (len < HEADER_FIXED || memcmp(b, "EMBD", 4) != 0) {
        snprintf(err, errlen, "0x%" PRIx64 ": no \"EMBD\" descriptor there", addr);
        return -1;
    }
    if (b[4] != EMB_DESC_LITTLE_ENDIAN && b[4] != EMB_DESC_BIG_ENDIAN) {
        snprintf(err, errlen, "0x%" PRIx64 ": descriptor byte order %u unknown", addr, b[4]);
        return -1;
    }
    d->little = b[4] == EMB_DESC_LITTLE_ENDIAN;
    d->ptr_size = b[5];
    if (d->ptr_size != 2 && d->ptr_size != 4 && d->ptr_size != 8) {
        snprintf(err, errlen, "0x%" PRIx64 ": descriptor pointer size %u (2, 4 or 8)", addr, b[5]);
        return -1;
    }
    d->version = (unsigned)get_uint(b + 6, 2, d->little);
    d->length = (uint32_t)get_uint(b + 8, 4, d->little);
    d->section_count = (uint32_t)get_uint(b + 12, 4, d->little);
    d->addr = addr;
    /* The reduced descriptor of a 16-bit target (pointer size 2) has 32-bit words. */
    unsigned w = d->ptr_size == 2 ? 4u : d->ptr_size;
    size_t first = HEADER_FIXED + w; /* the self word, then sections */
    if (d->version == 0 || d->length < first || d->length > len) {
        snprintf(err, errlen, "0x%" PRIx64 ": descriptor version %u, length %u: %s", addr, d->version,
                 d->length, d->version == 0 ? "version 0 is not a descriptor" : "length out of range");
        return -1;
    }
    uint64_t self = get_uint(b + HEADER_FIXED, w, d->little);
    if (self != addr) {
        snprintf(err, errlen, "0x%" PRIx64 ": descriptor says it is at 0x%" PRIx64, addr, self);
        return -1;
    }
    size_t off = first;
    for (uint32_t s = 0; s < d->section_count && s < EMB_DESC_MAX_SECTIONS; s++) {
        if (off + 2u * w > d->length) {
            snprintf(err, errlen, "0x%" PRIx64 ": section %u runs past the descriptor's %u bytes", addr,
                     s, d->length);
            return -1;
        }
        uint64_t tag = get_uint(b + off, w, d->little);
        uint64_t words = get_uint(b + off + w, w, d->little);
        off += 2u * w;
        if (words > (d->length - off) / w) {
            snprintf(err, errlen, "0x%" PRIx64 ": section %u claims %" PRIu64 " words, past the end",
                     addr + off, s, words);
            return -1;
        }
        struct emb_desc_image_section *sec = &d->sections[d->nsections++];
        sec->kind = (unsigned)(tag & 0xFFFFu);
        sec->version = (unsigned)((tag >> 16) & 0xFFFFu);
        sec->words = (uint32_t)words;
        for (uint64_t i = 0; i < words && i < EMB_DESC_MAX_WORDS; i++)
            sec->w[i] = get_uint(b + off + i * w, w, d->little);
        off += (size_t)words * w;
    }
    return 0;
}

const struct emb_desc_image_section *emb_desc_image_section(const struct emb_desc_image *d, unsigned kind)
{
    for (size_t i = 0; i < d->nsections; i++)
        if (d->sections[i].kind == kind)
            return &d->sections[i];
    return NULL;
}

bool emb_desc_word(const struct emb_desc_image *d, unsigned kind, unsigned i, uint64_t *out)
{
    const struct emb_desc_image_section *s = emb_desc_image_section(d, kind);
    if (!s || i >= s->words || i >= EMB_DESC_MAX_WORDS)
        return false;
    *out = s->w[i];
    return true;
}

#define MAX_DESC_BYTES 65536u

static int try_at(struct emb_mem *m, uint64_t addr, struct emb_desc_image *d, char *err, size_t errlen)
{
    static uint8_t buf[MAX_DESC_BYTES];
    size_t got = emb_mem_read(m, addr, buf, HEADER_FIXED);
    if (got < HEADER_FIXED) {
        snprintf(err, errlen, "0x%" PRIx64 ": cannot read the descriptor there", addr);
        return -1;
    }
    uint32_t length = (uint32_t)get_uint(buf + 8, 4, buf[4] == EMB_DESC_LITTLE_ENDIAN);
    if (length > MAX_DESC_BYTES)
        length = MAX_DESC_BYTES;
    if (length > HEADER_FIXED)
        got += emb_mem_read(m, addr + HEADER_FIXED, buf + HEADER_FIXED, length - HEADER_FIXED);
    return parse(buf, got, addr, d, err, errlen);
}

struct scan_ctx {
    struct emb_mem *m;
    struct emb_desc_image *d;
    char *err;
    size_t errlen;
    unsigned tried;
};

static int scan_hit(void *arg, uint64_t addr)
{
    struct scan_ctx *s = arg;
    s->tried++;
    return try_at(s->m, addr, s->d, s->err, s->errlen) == 0 ? 1 : s->tried >= 1000 ? -1 : 0;
}

/* The public calls report what the private ones wrote into `why`. */
static int reported(int rc, const char *why, struct emb_problems *problems)
{
    if (rc != 0 && problems)
        emb_report(problems, EMB_ERROR, -1, "%s", why);
    return rc;
}

int emb_desc_parse(const uint8_t *b, size_t len, uint64_t addr, struct emb_desc_image *d,
                   struct emb_problems *problems)
{
    char why[256];
    return reported(parse(b, len, addr, d, why, sizeof why), why, problems);
}

/* A scan tries every "EMBD" it meets (the magic may be data), so only the last reason a
 * candidate was refused is worth saying: kept in a buffer, reported once at the end. */
static int find(struct emb_mem *m, uint64_t symbol_addr, uint64_t scan_max, struct emb_desc_image *d,
                char *err, size_t errlen)
{
    if (symbol_addr && try_at(m, symbol_addr, d, err, errlen) == 0)
        return 0;
    if (scan_max == 0)
        return -1;
    static const uint8_t magic[4] = {'E', 'M', 'B', 'D'};
    char last[256] = "";
    struct scan_ctx s = {m, d, last, sizeof last, 0};
    int rc = emb_mem_scan(m, magic, 4, scan_max, scan_hit, &s);
    if (rc == 1)
        return 0;
    if (s.tried)
        snprintf(err, errlen, "no valid descriptor: %u \"EMBD\" found, none valid (last: %s)", s.tried, last);
    else
        snprintf(err, errlen, "no \"EMBD\" descriptor found");
    return -1;
}

int emb_desc_find(struct emb_mem *m, uint64_t symbol_addr, uint64_t scan_max, struct emb_desc_image *d,
                  struct emb_problems *problems)
{
    char why[512];
    return reported(find(m, symbol_addr, scan_max, d, why, sizeof why), why, problems);
}

