/* A small streaming JSON writer for the --json outputs. */
#ifndef EMB_BASE_JSON_H
#define EMB_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Minimal streaming JSON writer: handles commas, nesting and string escaping. */
struct emb_json {
    FILE *out;
    int depth;
    bool need_comma[64];
    bool pretty;
    int flat_depth; /* when pretty: values nested deeper than this stay on one line (0: none) */
};
void emb_json_init(struct emb_json *j, FILE *out, bool pretty);
/* A --json document: the writer set up to indent for reading, and its outer object begun. */
void emb_json_begin_document(struct emb_json *j, FILE *out);
void emb_json_begin_object(struct emb_json *j, const char *key); /* key NULL inside arrays */
void emb_json_end_object(struct emb_json *j);
void emb_json_begin_array(struct emb_json *j, const char *key);
void emb_json_end_array(struct emb_json *j);
void emb_json_string(struct emb_json *j, const char *key, const char *value);
void emb_json_string_n(struct emb_json *j, const char *key, const char *value, size_t len);
void emb_json_int(struct emb_json *j, const char *key, long long value);
void emb_json_uint(struct emb_json *j, const char *key, unsigned long long value);
void emb_json_double(struct emb_json *j, const char *key, double value);
void emb_json_bool(struct emb_json *j, const char *key, bool value);
void emb_json_null(struct emb_json *j, const char *key);
/* An address or a register as a string, "0x1a2b" (JSON numbers lose 64-bit precision in
 * most readers). */
void emb_json_hex(struct emb_json *j, const char *key, unsigned long long value);
/* Bytes as a string of two lowercase hex digits each, "00ff1a". */
void emb_json_hex_bytes(struct emb_json *j, const char *key, const unsigned char *p, size_t len);
/* A value the caller has already formatted as JSON (a number with a fixed precision). */
void emb_json_raw(struct emb_json *j, const char *key, const char *text);
/* Writes `len` bytes as a JSON string: control characters escaped, valid UTF-8 passed
 * through, every byte of invalid UTF-8 replaced by U+FFFD. */
void emb_json_write_string(FILE *out, const char *s, size_t len);
void emb_json_end(struct emb_json *j); /* final newline */
/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one:
 * overlong forms, surrogates and code points above U+10FFFF are not. */
size_t emb_json_utf8_sequence(const unsigned char *s, size_t n);

#endif /* EMB_BASE_JSON_H */
