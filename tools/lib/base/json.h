/* A small streaming JSON writer for the --json outputs. */
#ifndef EMB_BASE_JSON_H
#define EMB_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

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

/* A run of an object's members that are a C struct's fields, written from a table: each row
 * names the key, how the value is written and where the field is. A table says an object's
 * layout once, as data; the fields worked out on the way (a sum, a name looked up) stay
 * calls around it. */
enum emb_json_field_kind {
    EMB_JSON_UINT_FIELD,   /* any unsigned integer (or enum) field */
    EMB_JSON_INT_FIELD,    /* any signed integer field */
    EMB_JSON_HEX_FIELD,    /* an unsigned integer written as "0x1a2b" (emb_json_hex) */
    EMB_JSON_BOOL_FIELD,   /* a bool */
    EMB_JSON_DOUBLE_FIELD, /* a double */
    EMB_JSON_STRING_FIELD, /* a const char * (null when NULL) */
    EMB_JSON_TEXT_FIELD,   /* a char array holding a NUL-terminated string */
};
struct emb_json_field {
    const char *key;
    enum emb_json_field_kind kind;
    size_t offset, size;
};
/* The row for `member` of `type` under `key`; kind is UINT, INT, HEX, BOOL, DOUBLE, STRING
 * or TEXT. A kind that does not fit the member's type does not compile. */
#define EMB_JSON_FIELD(type, member, key, kind)                                                   \
    {(key), EMB_JSON_##kind##_FIELD, offsetof(type, member), EMB_JSON_SIZE_##kind(((type *)0)->member)}
/* The sizes, checked against the member's type (an unlisted type matches nothing). */
#define EMB_JSON_SIZE_UINT(m)                                                                    \
    _Generic((m), unsigned char: 1u, unsigned short: sizeof(short), unsigned: sizeof(int),          \
             unsigned long: sizeof(long), unsigned long long: sizeof(long long))
#define EMB_JSON_SIZE_HEX(m) EMB_JSON_SIZE_UINT(m)
#define EMB_JSON_SIZE_INT(m)                                                                     \
    _Generic((m), signed char: 1u, short: sizeof(short), int: sizeof(int), long: sizeof(long),      \
             long long: sizeof(long long))
#define EMB_JSON_SIZE_BOOL(m) _Generic((m), bool: sizeof(bool))
#define EMB_JSON_SIZE_DOUBLE(m) _Generic((m), double: sizeof(double))
#define EMB_JSON_SIZE_STRING(m) _Generic(&(m), char **: sizeof(char *), const char **: sizeof(char *))
#define EMB_JSON_SIZE_TEXT(m) _Generic(&(m), char(*)[sizeof(m)]: sizeof(m))
/* Writes the rows of `fields` (n of them) for the struct at `object`, in order. */
void emb_json_fields(struct emb_json *j, const void *object, const struct emb_json_field *fields, size_t n);
#define EMB_JSON_FIELDS(j, object, table) emb_json_fields((j), (object), (table), sizeof(table) / sizeof((table)[0]))
/* "key": [{...}, ...]: n structs of `size` bytes from `items`, each an object of the table's
 * fields. */
void emb_json_field_array(struct emb_json *j, const char *key, const void *items, size_t n, size_t size,
                          const struct emb_json_field *fields, size_t nfields);
#define EMB_JSON_FIELD_ARRAY(j, key, items, n, table)                                             \
    emb_json_field_array((j), (key), (items), (n), sizeof *(items), (table), sizeof(table) / sizeof((table)[0]))
/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is not one:
 * overlong forms, surrogates and code points above U+10FFFF are not. */
size_t emb_json_utf8_sequence(const unsigned char *s, size_t n);

#endif /* EMB_BASE_JSON_H */
