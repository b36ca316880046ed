/* A small streaming JSON writer: commas, nesting and string escaping. */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void emb_json_init(struct emb_json *j, FILE *out, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

void emb_json_begin_document(struct emb_json *j, FILE *out)
{
    emb_json_init(j, out, true);
    emb_json_begin_object(j, NULL);
}

static void json_indent(struct emb_json *j)
{
    if (!j->pretty || (j->flat_depth > 0 && j->depth > j->flat_depth))
        return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
size_t emb_json_utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

void emb_json_write_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
            case '"': fputs("\\\"", out); break;
            case '\\': fputs("\\\\", out); break;
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default:
                if (c < 0x20 || c == 0x7F)
                    fprintf(out, "\\u%04x", c);
                else
                    fputc(c, out);
            }
            i++;
            continue;
        }
        size_t n = emb_json_utf8_sequence(p + i, len - i);
        if (n == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0) {
            /* U+0080..U+009F, the C1 controls (U+009B is CSI): escaped like C0, so no
             * document piped to a terminal can drive it. */
            fprintf(out, "\\u%04x", p[i + 1]);
            i += n;
        } else if (n) {
            fwrite(p + i, 1, n, out);
            i += n;
        } else {
            /* Not UTF-8 (target bytes can be anything): U+FFFD keeps the document valid. */
            fputs("\\ufffd", out);
            i++;
        }
    }
    fputc('"', out);
}

/* Emits the separator and the key of the next member or element. */
static void json_next(struct emb_json *j, const char *key)
{
    int d = j->depth < 64 ? j->depth : 63;
    if (j->need_comma[d])
        fputc(',', j->out);
    j->need_comma[d] = true;
    if (j->depth > 0)
        json_indent(j);
    if (key) {
        emb_json_write_string(j->out, key, strlen(key));
        fputs(j->pretty ? ": " : ":", j->out);
    }
}

static void json_open(struct emb_json *j, const char *key, char c)
{
    json_next(j, key);
    fputc(c, j->out);
    j->depth++;
    if (j->depth < 64)
        j->need_comma[j->depth] = false;
}

static void json_close(struct emb_json *j, char c)
{
    int d = j->depth < 64 ? j->depth : 63;
    bool had_members = j->need_comma[d];
    bool flat = j->flat_depth > 0 && j->depth > j->flat_depth;
    if (j->depth > 0)
        j->depth--;
    if (had_members && !flat)
        json_indent(j);
    fputc(c, j->out);
}

void emb_json_begin_object(struct emb_json *j, const char *key) { json_open(j, key, '{'); }
void emb_json_end_object(struct emb_json *j) { json_close(j, '}'); }
void emb_json_begin_array(struct emb_json *j, const char *key) { json_open(j, key, '['); }
void emb_json_end_array(struct emb_json *j) { json_close(j, ']'); }

void emb_json_string(struct emb_json *j, const char *key, const char *value)
{
    if (!value) {
        emb_json_null(j, key);
        return;
    }
    emb_json_string_n(j, key, value, strlen(value));
}

void emb_json_string_n(struct emb_json *j, const char *key, const char *value, size_t len)
{
    json_next(j, key);
    emb_json_write_string(j->out, value, len);
}

void emb_json_int(struct emb_json *j, const char *key, long long value)
{
    json_next(j, key);
    fprintf(j->out, "%lld", value);
}

void emb_json_uint(struct emb_json *j, const char *key, unsigned long long value)
{
    json_next(j, key);
    fprintf(j->out, "%llu", value);
}

void emb_json_double(struct emb_json *j, const char *key, double value)
{
    json_next(j, key);
    if (!isfinite(value)) {
        fputs("null", j->out); /* JSON has no NaN or infinity */
        return;
    }
    /* The shortest form that reads back as the same double. */
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, value);
        if (strtod(buf, NULL) == value)
            break;
    }
    fputs(buf, j->out);
}

void emb_json_raw(struct emb_json *j, const char *key, const char *text)
{
    json_next(j, key);
    fputs(text, j->out);
}

void emb_json_bool(struct emb_json *j, const char *key, bool value)
{
    json_next(j, key);
    fputs(value ? "true" : "false", j->out);
}

void emb_json_null(struct emb_json *j, const char *key)
{
    json_next(j, key);
    fputs("null", j->out);
}

void emb_json_end(struct emb_json *j)
{
    fputc('\n', j->out);
    j->depth = 0;
    memset(j->need_comma, 0, sizeof j->need_comma);
}

void emb_json_hex(struct emb_json *j, const char *key, unsigned long long value)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%llx", value);
    emb_json_string(j, key, buf);
}

void emb_json_hex_bytes(struct emb_json *j, const char *key, const unsigned char *p, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    json_next(j, key);
    fputc('"', j->out);
    for (size_t i = 0; i < len; i++) {
        fputc(digits[p[i] >> 4], j->out);
        fputc(digits[p[i] & 15u], j->out);
    }
    fputc('"', j->out);
}

/* A field of `size` bytes (1, 2, 4 or 8) as stored on this host; sign-extended when signed. */
static unsigned long long field_integer(const unsigned char *p, size_t size, bool is_signed)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (size) {
    case 1: memcpy(&u8, p, 1); u64 = u8; break;
    case 2: memcpy(&u16, p, 2); u64 = u16; break;
    case 4: memcpy(&u32, p, 4); u64 = u32; break;
    default: memcpy(&u64, p, 8); return u64;
    }
    if (is_signed && (u64 >> (8u * size - 1u)) & 1u)
        u64 |= ~0ull << (8u * size);
    return u64;
}

void emb_json_fields(struct emb_json *j, const void *object, const struct emb_json_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct emb_json_field *f = &fields[i];
        const unsigned char *p = (const unsigned char *)object + f->offset;
        bool b;
        double d;
        const char *s;
        switch (f->kind) {
        case EMB_JSON_UINT_FIELD: emb_json_uint(j, f->key, field_integer(p, f->size, false)); break;
        case EMB_JSON_INT_FIELD: emb_json_int(j, f->key, (long long)field_integer(p, f->size, true)); break;
        case EMB_JSON_HEX_FIELD: emb_json_hex(j, f->key, field_integer(p, f->size, false)); break;
        case EMB_JSON_BOOL_FIELD: memcpy(&b, p, sizeof b); emb_json_bool(j, f->key, b); break;
        case EMB_JSON_DOUBLE_FIELD: memcpy(&d, p, sizeof d); emb_json_double(j, f->key, d); break;
        case EMB_JSON_STRING_FIELD: memcpy(&s, p, sizeof s); emb_json_string(j, f->key, s); break;
        case EMB_JSON_TEXT_FIELD: {
            const unsigned char *end = memchr(p, 0, f->size);
            emb_json_string_n(j, f->key, (const char *)p, end ? (size_t)(end - p) : f->size);
            break;
        }
        }
    }
}

void emb_json_field_array(struct emb_json *j, const char *key, const void *items, size_t n, size_t size,
                          const struct emb_json_field *fields, size_t nfields)
{
    emb_json_begin_array(j, key);
    for (size_t i = 0; i < n; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_fields(j, (const unsigned char *)items + i * size, fields, nfields);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}
