/* The catalogue as CTF 1.8 metadata (TSDL): the packet layout of docs/formats/trace.md and
 * one event declaration per catalogue event, read by babeltrace2 and every CTF reader. */
#define _POSIX_C_SOURCE 200809L

#include "catalog.h"
#include "catalog_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Field names that are TSDL keywords get CTF's escape, a leading underscore, which readers
 * strip again (catalogue names never start with one). */
static const char *tsdl_prefix(const char *name)
{
    static const char *const kw[] = {
        "align",  "callsite", "const", "char",   "clock",   "double",         "enum",
        "env",    "event",    "floating_point",  "float",   "integer",        "int",
        "long",   "short",    "signed",          "stream",  "string",         "struct",
        "trace",  "typealias", "typedef",        "unsigned", "variant",       "void",
        "_Bool",  "_Complex", "_Imaginary",
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strcmp(name, kw[i]) == 0)
            return "_";
    return "";
}

static void tsdl_integer(FILE *out, const struct emb_catalog_field *f)
{
    unsigned bits = (unsigned)f->size * 8u;
    unsigned align = (unsigned)f->align * 8u;
    fprintf(out, "integer { size = %u; align = %u; signed = %s;%s }", bits, align,
            emb_catalog_type_is_signed(f->type) ? "true" : "false", f->hex ? " base = 16;" : "");
}

/* Padding the layout has but `align` cannot express, as one unsigned integer of the
 * missing bytes. The leading underscore is CTF 1.8's escape, which readers strip, so it
 * shows as emb_pad... (catalogue names never start with emb_). */
static void tsdl_pad(FILE *out, uint32_t bytes, const char *suffix)
{
    fprintf(out, "\t\tinteger { size = %" PRIu32 "; align = 8; signed = false; } _emb_pad%s;\n",
            bytes * 8u, suffix);
}

/* `pos` is where a CTF reader is after the previous field. Integers carry their own
 * alignment; a char[N] is an array, which CTF aligns by its element (one byte), so when
 * the reader would not already be at the 4-byte boundary the layout puts it on, explicit
 * padding comes first. */
static void tsdl_field(FILE *out, const struct emb_catalog_field *f, uint32_t *pos)
{
    const char *esc = tsdl_prefix(f->name);
    if (f->type == EMB_CAT_CHARS && *pos < f->offset) {
        char suffix[80];
        snprintf(suffix, sizeof suffix, "_%s", f->name);
        tsdl_pad(out, f->offset - *pos, suffix);
    }
    *pos = f->offset + f->size;
    fprintf(out, "\t\t");
    if (f->type == EMB_CAT_CHARS) {
        fprintf(out, "integer { size = 8; align = 8; signed = false; encoding = UTF8; } ");
        fprintf(out, "%s%s[%" PRIu32 "];", esc, f->name, f->size);
    } else if (f->nvalues > 0) {
        fprintf(out, "enum : ");
        tsdl_integer(out, f);
        fprintf(out, " {");
        for (size_t i = 0; i < f->nvalues; i++)
            fprintf(out, "%s \"%s\" = %" PRId64, i ? "," : "", f->values[i].name,
                    f->values[i].value);
        fprintf(out, " } %s%s;", esc, f->name);
    } else {
        tsdl_integer(out, f);
        fprintf(out, " %s%s;", esc, f->name);
    }
    fputc('\n', out);
}

static void tsdl_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if (*s == '\n')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

/* The trace block: the UUID and the packet header every packet starts with. */
static void tsdl_trace(FILE *out, const struct emb_catalog *cat, const uint8_t u[16])
{
    char uuid[37];
    snprintf(uuid, sizeof uuid,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
             u[15]);
    fprintf(out, "/* CTF 1.8 */\n\n"
                 "/* Trace format version 1 (docs/formats/trace.md), catalogue version %u, "
                 "checksum 0x%08" PRIX32 ". */\n\n",
            cat->version, cat->checksum);
    fprintf(out, "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
                 "typealias integer { size = 16; align = 16; signed = false; } := uint16_t;\n"
                 "typealias integer { size = 32; align = 32; signed = false; } := uint32_t;\n"
                 "typealias integer { size = 64; align = 32; signed = false; } := uint64_t;\n"
                 "\n");
    fprintf(out,
            "trace {\n"
            "\tmajor = 1;\n"
            "\tminor = 8;\n"
            "\tuuid = \"%s\";\n"
            "\tbyte_order = le;\n"
            "\tpacket.header := struct {\n"
            "\t\tuint32_t magic;\n"
            "\t\tuint8_t uuid[16];\n"
            "\t\tuint32_t stream_id;\n"
            "\t\tuint32_t stream_instance_id;\n"
            "\t};\n"
            "};\n\n",
            uuid);
}

static void tsdl_env(FILE *out, const struct emb_catalog *cat, const struct emb_tsdl_params *p)
{
    fprintf(out,
            "env {\n"
            "\tdomain = \"emb\";\n"
            "\ttracer_name = \"emb\";\n"
            "\ttrace_format_version = 1;\n"
            "\tcatalog_version = %u;\n"
            "\tcatalog_checksum = %" PRIu32 ";\n",
            cat->version, cat->checksum);
    if (p->port != NULL) {
        fprintf(out, "\tport = ");
        tsdl_string(out, p->port);
        fprintf(out, ";\n");
    }
    if (p->build_id_hex != NULL) {
        fprintf(out, "\tbuild_id = ");
        tsdl_string(out, p->build_id_hex);
        fprintf(out, ";\n");
    }
    fprintf(out, "};\n\n");
}

static void tsdl_clock(FILE *out, const struct emb_tsdl_params *p)
{
    uint64_t hz = p->clock_hz != 0 ? p->clock_hz : 1000000000u;
    /* offset_s + offset/freq = clock_offset_ns, with 0 <= offset < freq. */
    int64_t ns = p->clock_offset_ns;
    int64_t offset_s = ns / 1000000000;
    int64_t rem_ns = ns % 1000000000;
    if (rem_ns < 0) {
        rem_ns += 1000000000;
        offset_s -= 1;
    }
    uint64_t offset_cycles = (uint64_t)rem_ns * (hz / 1000000000u) +
                             (uint64_t)rem_ns * (hz % 1000000000u) / 1000000000u;
    fprintf(out,
            "clock {\n"
            "\tname = emb_clock;\n"
            "\tdescription = \"emb_port_timestamp()\";\n"
            "\tfreq = %" PRIu64 ";\n"
            "\tprecision = 1;\n"
            "\toffset_s = %" PRId64 ";\n"
            "\toffset = %" PRIu64 ";\n"
            "\tabsolute = %s;\n"
            "};\n\n",
            hz, offset_s, offset_cycles, p->clock_offset_ns != 0 ? "true" : "false");
    fprintf(out,
            "typealias integer { size = 64; align = 32; signed = false; "
            "map = clock.emb_clock.value; } := uint64_clock_t;\n"
            "typealias integer { size = 32; align = 32; signed = false; "
            "map = clock.emb_clock.value; } := uint32_clock_t;\n\n");
}

/* The event header's flags word is declared as the stream's event context: same bytes
 * (offset 6 of the event), but babeltrace2 ignores, with a warning on every run, any
 * event header field other than id and timestamp. */
static void tsdl_stream(FILE *out)
{
    fprintf(out,
            "stream {\n"
            "\tid = 0;\n"
            "\tpacket.context := struct {\n"
            "\t\tuint32_t packet_seq_num;\n"
            "\t\tuint64_clock_t timestamp_begin;\n"
            "\t\tuint64_clock_t timestamp_end;\n"
            "\t\tuint32_t content_size;\n"
            "\t\tuint32_t packet_size;\n"
            "\t\tuint32_t events_discarded;\n"
            "\t\tuint16_t context_id;\n"
            "\t\tuint16_t context_kind;\n"
            "\t};\n"
            "\tevent.header := struct {\n"
            "\t\tuint32_clock_t timestamp;\n"
            "\t\tuint16_t id;\n"
            "\t};\n"
            "\tevent.context := struct {\n"
            "\t\tuint16_t flags;\n"
            "\t};\n"
            "};\n");
}

static void tsdl_event(FILE *out, const struct emb_catalog_event *ev)
{
    fprintf(out, "\nevent {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n", ev->name,
            (unsigned)ev->id);
    if (ev->nfields > 0) {
        fprintf(out, "\tfields := struct {\n");
        uint32_t pos = 0;
        for (size_t i = 0; i < ev->nfields; i++)
            tsdl_field(out, &ev->fields[i], &pos);
        /* babeltrace2 2.0 looks for the end of a packet's content before aligning to
         * the next event header, so a last event whose padding were left implicit
         * would send it reading a header out of the padding. */
        if (pos < ev->payload_size)
            tsdl_pad(out, ev->payload_size - pos, "");
        fprintf(out, "\t};\n");
    }
    fprintf(out, "};\n");
}

int emb_catalog_write_tsdl(const struct emb_catalog *cat, const struct emb_tsdl_params *p,
                           FILE *out)
{
    tsdl_trace(out, cat, p->uuid);
    tsdl_env(out, cat, p);
    tsdl_clock(out, p);
    tsdl_stream(out);
    for (uint32_t id = 1; id <= 65535u; id++)
        if (cat->by_id[id] != NULL)
            tsdl_event(out, cat->by_id[id]);
    return ferror(out) ? -1 : 0;
}
