/* The trace event catalogue on the host: parsed from catalog/trace_events.yaml with
 * libyaml, laid out by the one layout rule, checksummed, and turned into CTF metadata.
 * Shared by the generator (gen/embgen) and the host tool (emb), so the emitters and the
 * decoder can never disagree about an offset.
 */
#ifndef EMB_HOST_CATALOG_H
#define EMB_HOST_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "problem.h"

enum emb_catalog_type {
    EMB_CAT_U8,
    EMB_CAT_U16,
    EMB_CAT_U32,
    EMB_CAT_U64,
    EMB_CAT_I8,
    EMB_CAT_I16,
    EMB_CAT_I32,
    EMB_CAT_I64,
    EMB_CAT_BOOL,  /* one byte, 0 or 1 */
    EMB_CAT_CHARS, /* char[N], NUL-padded text */
};

enum emb_catalog_meaning {
    EMB_CAT_MEANING_NONE,
    EMB_CAT_MEANING_THREAD, /* a thread index */
    EMB_CAT_MEANING_HANDLE, /* an object handle (index and generation, or a pointer) */
    EMB_CAT_MEANING_IRQ,    /* an interrupt number */
    EMB_CAT_MEANING_PC,     /* a code address, symbolised with the ELF */
    EMB_CAT_MEANING_CYCLES, /* a duration in clock ticks */
    EMB_CAT_MEANING_FRAME,  /* a frame number: an alignment anchor */
};

enum emb_catalog_compare {
    EMB_CAT_COMPARE_EXACT,
    EMB_CAT_COMPARE_IGNORE,
    EMB_CAT_COMPARE_TOLERANCE,     /* |good - bad| <= tolerance */
    EMB_CAT_COMPARE_TOLERANCE_PCT, /* |good - bad| <= tolerance% of |good| */
};

struct emb_catalog_value {
    char *name;
    int64_t value;
};

struct emb_catalog_field {
    char *name;
    enum emb_catalog_type type;
    uint32_t size;   /* bytes on the wire */
    uint32_t align;  /* bytes: min(size, 4) for integers and bool, 4 for char[N] */
    uint32_t offset; /* from the start of the payload */
    unsigned line;   /* where the field is declared in the YAML, 1-based */
    enum emb_catalog_meaning meaning;
    bool hex;
    enum emb_catalog_compare compare;
    double tolerance;
    struct emb_catalog_value *values; /* enumeration labels (values fit in int32), or NULL */
    size_t nvalues;
    char *doc; /* may be NULL */
};

struct emb_catalog_class;

struct emb_catalog_event {
    char *name;
    uint16_t id;
    char *doc; /* may be NULL */
    const struct emb_catalog_class *cls;
    struct emb_catalog_field *fields;
    size_t nfields;
    uint32_t payload_size; /* padded to 4 */
    uint32_t size;         /* 8-byte header + payload */
    unsigned line;         /* where the event is declared in the YAML, 1-based */
};

struct emb_catalog_class {
    char *name;
    unsigned id; /* bit in the class mask, 0..31 */
    char *doc;
    struct emb_catalog_event *events; /* in catalogue order */
    size_t nevents;
    unsigned line;
};

struct emb_catalog {
    unsigned version;
    struct emb_catalog_class *classes; /* sorted by id */
    size_t nclasses;
    uint32_t checksum;
    /* private: id -> event lookup */
    const struct emb_catalog_event **by_id; /* 65536 entries */
};

/* Reads and validates a catalogue. On error returns NULL and reports the problem to
 * `problems` (may be NULL), message "LINE:COL: what is wrong" with the file the sink
 * names (emb_problems_init). Checks: unique class ids (0..31) and names, unique
 * event ids (1..65535) and names across the whole catalogue, names that are lower-case C
 * identifiers not starting with `emb_` (field names: no C keyword), known keys and types,
 * no key given twice, char[N] with N a multiple of 4 and at most 32, unique field names per
 * event, payloads within CONFIG_EMB_TRACE_MAX_PAYLOAD (64 bytes), enumeration values
 * within their field's type, and compare policies that suit the type. Field defaults: compare `exact`, except
 * `meaning: cycles` fields, which default to `ignore`.
 *
 * Layout (docs/formats/trace.md): fields in order, each at its natural alignment capped at
 * 4 bytes (u8/i8/bool 1, u16/i16 2, u32/i32/u64/i64 4; char[N] 4), the payload padded to a
 * multiple of 4; the event is the 8-byte header and the payload. */
struct emb_catalog *emb_catalog_read(const char *text, size_t len, struct emb_problems *problems);
/* The same from a file (at most 16 MiB); a file that cannot be read is one problem. */
struct emb_catalog *emb_catalog_read_file(const char *path, struct emb_problems *problems);

/* The same with the first problem as one line in err: "FILE:LINE:COL: message" (a file
 * that cannot be read: "FILE: why"). */
struct emb_catalog *emb_catalog_parse(const char *text, size_t len, const char *filename,
                                      char *err, size_t errlen);
struct emb_catalog *emb_catalog_load(const char *path, char *err, size_t errlen);
void emb_catalog_free(struct emb_catalog *cat);

/* The catalogue this tool was built with (parsed once from the embedded YAML). */
const struct emb_catalog *emb_catalog_builtin(void);

const struct emb_catalog_event *emb_catalog_event(const struct emb_catalog *cat, uint16_t id);
const struct emb_catalog_event *emb_catalog_find(const struct emb_catalog *cat, const char *name);
const struct emb_catalog_class *emb_catalog_class(const struct emb_catalog *cat, const char *name);
const char *emb_catalog_type_name(enum emb_catalog_type type); /* "u16"; "char" for char[N] */
/* The field's type as the catalogue spells it ("u16", "char[16]"), written into buf. */
const char *emb_catalog_field_type_name(const struct emb_catalog_field *f, char *buf, size_t len);
const char *emb_catalog_meaning_name(enum emb_catalog_meaning meaning); /* "" for none */
/* Label for value v of an enumerated field, or NULL. */
const char *emb_catalog_value_label(const struct emb_catalog_field *field, int64_t v);

/* Reads field `f` from a payload (bounds are the caller's: payload holds event->payload_size
 * bytes). Integers are sign- or zero-extended; char[N] fields read as 0. */
int64_t emb_catalog_field_get_int(const struct emb_catalog_field *f, const uint8_t *payload);
uint64_t emb_catalog_field_get_uint(const struct emb_catalog_field *f, const uint8_t *payload);

struct emb_tsdl_params {
    uint8_t uuid[16];
    uint64_t clock_hz;
    int64_t clock_offset_ns; /* wall clock at tick 0; 0 when unknown */
    const char *port;        /* env.port, may be NULL */
    const char *build_id_hex; /* env.build_id, may be NULL */
};

/* Writes the CTF 1.8 TSDL metadata describing the packet layout of docs/formats/trace.md
 * and every event of the catalogue: every integer with an explicit `align` (u64 is 4-byte
 * aligned, like the layout), char[N] as UTF-8 u8 arrays, bool as u8, enumerations as CTF
 * enums, one stream (id 0) and one clock (emb_clock). Returns 0, or -1 on a write error. */
int emb_catalog_write_tsdl(const struct emb_catalog *cat, const struct emb_tsdl_params *p,
                           FILE *out);

#endif /* EMB_HOST_CATALOG_H */
