/* embgen: turns catalog/trace_events.yaml into the emitters header (emb/trace_events.h),
 * the reference CTF metadata, and the YAML embedded in the host tool.
 *
 *   embgen --catalog FILE [--header OUT.h] [--tsdl OUT.tsdl] [--embed OUT.c]
 *
 * Layout, validation and checksum all come from tools/lib/catalog/catalog.c, the same code the
 * host decoder runs, so an emitter and the decoder cannot disagree about an offset.
 * Exit status: 0 done, 2 bad catalogue or usage, 1 an output could not be written.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"

#define EMBGEN_WRAP 96 /* columns for generated comments and long expressions */

static const char *embgen_source = "catalog/trace_events.yaml";

static void embgen_upper(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < len; i++)
        dst[i] = (src[i] >= 'a' && src[i] <= 'z') ? (char)(src[i] - 'a' + 'A') : src[i];
    dst[i] = '\0';
}

/* Writes one logical line of code, broken after ", " where it would pass EMBGEN_WRAP
 * columns; continuation lines start at column `indent` (and end in a backslash inside a
 * macro). */
static void embgen_wrap(FILE *out, const char *s, int indent, bool macro)
{
    int limit = EMBGEN_WRAP - (macro ? 2 : 0);
    int col = 0;
    while (*s != '\0') {
        const char *comma = strstr(s, ", ");
        size_t len = comma != NULL ? (size_t)(comma - s) + 1 : strlen(s);
        if (col > indent && col + 1 + (int)len > limit) {
            fprintf(out, "%s\n%*s", macro ? " \\" : "", indent, "");
            col = indent;
        } else if (col > 0) {
            fputc(' ', out);
            col++;
        }
        fwrite(s, 1, len, out);
        col += (int)len;
        s += len;
        if (*s == ' ')
            s++;
    }
    fputc('\n', out);
}

/* A function-like macro: on one line if it fits, else the body on its own lines. */
static void embgen_define(FILE *out, const char *head, const char *body)
{
    if (strlen(head) + 1 + strlen(body) <= EMBGEN_WRAP) {
        fprintf(out, "%s %s\n", head, body);
        return;
    }
    char line[1024];
    snprintf(line, sizeof line, "%s \\", head);
    const char *paren = strchr(head, '(');
    int indent = paren != NULL && paren - head < 48 ? (int)(paren - head) + 1 : 8;
    if (strlen(line) <= EMBGEN_WRAP) {
        fprintf(out, "%s\n", line);
    } else {
        /* embgen_wrap ends the line; the head needs a trailing backslash instead. */
        char *nl;
        char buf[4096];
        FILE *m = fmemopen(buf, sizeof buf, "w");
        if (m == NULL)
            return;
        embgen_wrap(m, head, indent, true);
        fputc('\0', m);
        fclose(m);
        buf[sizeof buf - 1] = '\0';
        nl = strrchr(buf, '\n');
        if (nl != NULL)
            *nl = '\0';
        fprintf(out, "%s \\\n", buf);
    }
    fputs("    ", out);
    embgen_wrap(out, body, 4, true);
}

/* Writes `text` as comment lines of at most EMBGEN_WRAP columns, each starting with
 * `lead`. Runs of white space fold to one space; a comment terminator is broken up. */
static void embgen_comment_text(FILE *out, const char *lead, const char *text)
{
    char word[256];
    size_t col = 0;
    const char *s = text;
    while (*s != '\0') {
        while (*s == ' ' || *s == '\n' || *s == '\t')
            s++;
        size_t n = 0;
        while (*s != '\0' && *s != ' ' && *s != '\n' && *s != '\t') {
            if (n + 2 < sizeof word) {
                if (*s == '/' && n > 0 && word[n - 1] == '*')
                    word[n++] = ' ';
                word[n++] = *s;
            }
            s++;
        }
        word[n] = '\0';
        if (n == 0)
            break;
        if (col > 0 && col + 1 + n > EMBGEN_WRAP) {
            fputc('\n', out);
            col = 0;
        }
        if (col == 0)
            col = (size_t)fprintf(out, "%s", lead) + (size_t)fprintf(out, "%s", word);
        else
            col += (size_t)fprintf(out, " %s", word);
    }
    if (col > 0)
        fputc('\n', out);
}

static const char *embgen_ctype(const struct emb_catalog_field *f)
{
    switch (f->type) {
    case EMB_CAT_U8:
        return "uint8_t";
    case EMB_CAT_U16:
        return "uint16_t";
    case EMB_CAT_U32:
        return "uint32_t";
    case EMB_CAT_U64:
        return "uint64_t";
    case EMB_CAT_I8:
        return "int8_t";
    case EMB_CAT_I16:
        return "int16_t";
    case EMB_CAT_I32:
        return "int32_t";
    case EMB_CAT_I64:
        return "int64_t";
    case EMB_CAT_BOOL:
        return "bool";
    case EMB_CAT_CHARS:
        return "const char *";
    }
    return "?";
}

static bool embgen_signed(const struct emb_catalog_field *f)
{
    return f->type == EMB_CAT_I8 || f->type == EMB_CAT_I16 || f->type == EMB_CAT_I32 ||
           f->type == EMB_CAT_I64;
}

/* The part of field f that lies in the store window [s, s + w) (w = 4 or 8 bytes), as an
 * unsigned expression of the window's width. Bytes of the window that no field covers
 * stay zero because nothing is or'ed into them; signed fields go through their unsigned
 * type of the same size so sign extension cannot spill into a neighbour. */
static void embgen_term(char *buf, size_t len, const struct emb_catalog_field *f, uint32_t s,
                        uint32_t w, bool alone)
{
    const char *wt = w == 8 ? "uint64_t" : "uint32_t";
    if (f->size == 8) {
        const char *v64 = f->type == EMB_CAT_I64 ? "(uint64_t)" : "";
        if (w == 8 && f->offset == s)
            snprintf(buf, len, "%s%s", v64, f->name);
        else if (w == 8 && f->offset == s + 4)
            snprintf(buf, len, "(uint64_t)%s << 32", f->name);
        else if (w == 8)
            snprintf(buf, len, "(uint64_t)%s >> 32", f->name);
        else if (f->offset == s)
            snprintf(buf, len, "(uint32_t)%s", f->name);
        else
            snprintf(buf, len, "(uint32_t)(%s%s >> 32)", v64, f->name);
        return;
    }
    unsigned shift = 8u * (f->offset - s);
    const char *narrow = "";
    if (embgen_signed(f))
        narrow = f->size == 1 ? "(uint8_t)" : f->size == 2 ? "(uint16_t)" : "(uint32_t)";
    if (shift == 0 && alone)
        snprintf(buf, len, "%s%s", narrow, f->name);
    else if (shift == 0)
        snprintf(buf, len, "(%s)%s%s", wt, narrow, f->name);
    else
        snprintf(buf, len, "(%s)%s%s << %u", wt, narrow, f->name, shift);
}

/* One store of w bytes at payload offset s, composed of every integer field in it. */
static void embgen_store(FILE *out, const struct emb_catalog_event *ev, uint32_t s, uint32_t w)
{
    const struct emb_catalog_field *in[64];
    size_t n = 0;
    for (size_t i = 0; i < ev->nfields; i++) {
        const struct emb_catalog_field *f = &ev->fields[i];
        if (f->type != EMB_CAT_CHARS && f->offset < s + w && f->offset + f->size > s)
            in[n++] = f;
    }
    char lead[64];
    int col = snprintf(lead, sizeof lead, "    emb_put_le%u(emb__p%s", w * 8u, s ? " + " : "");
    if (s)
        col += snprintf(lead + col, sizeof lead - (size_t)col, "%u", (unsigned)s);
    col += snprintf(lead + col, sizeof lead - (size_t)col, ", ");
    fputs(lead, out);
    if (n == 0)
        fputs("0u", out);
    for (size_t i = 0; i < n; i++) {
        char term[160];
        embgen_term(term, sizeof term, in[i], s, w, n == 1);
        int len = (int)strlen(term);
        if (i > 0) {
            if (col + 3 + len + 2 > EMBGEN_WRAP) {
                fprintf(out, " |\n%*s", (int)strlen(lead), "");
                col = (int)strlen(lead);
            } else {
                fputs(" | ", out);
                col += 3;
            }
        }
        fputs(term, out);
        col += len;
    }
    fputs(");\n", out);
}

static void embgen_chars(FILE *out, const struct emb_catalog_field *f)
{
    fprintf(out,
            "    emb__i = 0u;\n"
            "    if (%s != NULL)\n"
            "        for (; emb__i < %" PRIu32 "u && %s[emb__i] != '\\0'; emb__i++)\n"
            "            emb__p[%" PRIu32 "u + emb__i] = (uint8_t)%s[emb__i];\n"
            "    for (; emb__i < %" PRIu32 "u; emb__i++)\n"
            "        emb__p[%" PRIu32 "u + emb__i] = 0u;\n",
            f->name, f->size, f->name, f->offset, f->name, f->size, f->offset);
}

/* The payload as few stores as possible: whole little-endian words built from the fields
 * in them, a 64-bit field as one 64-bit store, char[N] by a bounded loop. */
static void embgen_payload(FILE *out, const struct emb_catalog_event *ev)
{
    uint32_t words = ev->payload_size / 4u;
    bool chars[16] = {false};
    for (size_t i = 0; i < ev->nfields; i++) {
        const struct emb_catalog_field *f = &ev->fields[i];
        if (f->type == EMB_CAT_CHARS)
            for (uint32_t b = f->offset; b < f->offset + f->size; b += 4u)
                chars[b / 4u] = true;
    }
    uint32_t wi = 0;
    while (wi < words) {
        if (chars[wi]) {
            for (size_t i = 0; i < ev->nfields; i++)
                if (ev->fields[i].type == EMB_CAT_CHARS && ev->fields[i].offset == wi * 4u) {
                    embgen_chars(out, &ev->fields[i]);
                    wi += ev->fields[i].size / 4u;
                }
            continue;
        }
        /* A 64-bit field is one 64-bit store; other words are stored one by one: composing
         * two words into one store costs a shift and an or on x86-64, and an ARM compiler
         * pairs adjacent stores into STRD by itself. */
        bool pair = false;
        for (size_t i = 0; i < ev->nfields; i++)
            pair |= ev->fields[i].size == 8u && ev->fields[i].offset == wi * 4u;
        embgen_store(out, ev, wi * 4u, pair ? 8u : 4u);
        wi += pair ? 2u : 1u;
    }
}

static void embgen_params(FILE *out, const struct emb_catalog_event *ev, const char *fmt)
{
    for (size_t i = 0; i < ev->nfields; i++) {
        if (i > 0)
            fputs(", ", out);
        fprintf(out, fmt, ev->fields[i].name, ev->fields[i].name);
    }
}

/* "PREFIX<event>(type name, ...)" into line. */
static void embgen_signature(char *line, size_t len, const char *prefix,
                             const struct emb_catalog_event *ev)
{
    size_t n = (size_t)snprintf(line, len, "%s%s(", prefix, ev->name);
    if (ev->nfields == 0)
        n += (size_t)snprintf(line + n, len - n, "void");
    for (size_t i = 0; i < ev->nfields && n < len; i++) {
        const char *ct = embgen_ctype(&ev->fields[i]);
        size_t l = strlen(ct);
        n += (size_t)snprintf(line + n, len - n, "%s%s%s%s", i ? ", " : "", ct,
                              ct[l - 1] == '*' ? "" : " ", ev->fields[i].name);
    }
    if (n < len)
        snprintf(line + n, len - n, ")");
}

/* The payload stores and the commit, once the slot is known (emb__slot, emb__p); the
 * function's closing brace is the caller's. */
static void embgen_emit_body_open(FILE *out, const struct emb_catalog_event *ev, const char *up)
{
    for (size_t i = 0; i < ev->nfields; i++) {
        if (ev->fields[i].type == EMB_CAT_CHARS) {
            fputs("    uint32_t emb__i;\n", out);
            break;
        }
    }
    embgen_payload(out, ev);
    fprintf(out, "    emb_trace_commit(emb__slot, EMB_TRACE_SIZE_%s);\n", up);
}

static void embgen_emit_body(FILE *out, const struct emb_catalog_event *ev, const char *up)
{
    embgen_emit_body_open(out, ev, up);
    fputs("}\n", out);
}

/* PREFIX, the event's parameters each written with `param` ("%s", "(%s)"), and SUFFIX,
 * as one string in buf. False when it cannot be built. */
static bool embgen_call(char *buf, size_t len, const char *prefix,
                        const struct emb_catalog_event *ev, const char *param, const char *suffix)
{
    FILE *m = fmemopen(buf, len, "w");
    if (m == NULL)
        return false;
    fputs(prefix, m);
    embgen_params(m, ev, param);
    fputs(suffix, m);
    fputc('\0', m);
    fclose(m);
    buf[len - 1] = '\0';
    return true;
}

/* The comment over an event's emitter: class, id, size, doc and payload layout. */
static void embgen_event_comment(FILE *out, const struct emb_catalog_event *ev)
{
    char type[16];
    fprintf(out, "\n/* %s: class %s, id 0x%04X, %" PRIu32 " bytes.", ev->name, ev->cls->name,
            (unsigned)ev->id, ev->size);
    fputs("\n", out);
    if (ev->doc != NULL)
        embgen_comment_text(out, " * ", ev->doc);
    if (ev->nfields > 0) {
        char layout[1024];
        size_t n = 0;
        n += (size_t)snprintf(layout + n, sizeof layout - n, "Payload:");
        for (size_t i = 0; i < ev->nfields && n < sizeof layout; i++)
            n += (size_t)snprintf(layout + n, sizeof layout - n, " %s %s @%" PRIu32 "%s",
                                  ev->fields[i].name,
                                  emb_catalog_field_type_name(&ev->fields[i], type, sizeof type),
                                  ev->fields[i].offset, i + 1 < ev->nfields ? "," : ".");
        embgen_comment_text(out, " * ", layout);
    }
    fputs(" */\n", out);
}

static void embgen_event_enums(FILE *out, const struct emb_catalog_event *ev, const char *up)
{
    char fup[80], lup[80];
    for (size_t i = 0; i < ev->nfields; i++) {
        const struct emb_catalog_field *f = &ev->fields[i];
        if (f->nvalues == 0)
            continue;
        embgen_upper(fup, sizeof fup, f->name);
        fprintf(out, "enum emb_trace_%s_%s {\n", ev->name, f->name);
        for (size_t v = 0; v < f->nvalues; v++) {
            embgen_upper(lup, sizeof lup, f->values[v].name);
            fprintf(out, "    EMB_TRACE_%s_%s_%s = %" PRId64 ",\n", up, fup, lup,
                    f->values[v].value);
        }
        fputs("};\n", out);
    }
}

/* The inline emitter: the class test, then a call out of line (CONFIG_EMB_TRACE_INLINE 0)
 * or the fast reservation with the slow path as its fallback. */
static void embgen_event_inline(FILE *out, const struct emb_catalog_event *ev, const char *up,
                                const char *cls_up)
{
    char line[2048], slow[96];
    embgen_signature(line, sizeof line, "static inline void emb_trace_emit_", ev);
    const char *paren = strchr(line, '(');
    embgen_wrap(out, line, paren - line < 60 ? (int)(paren - line) + 1 : 8, false);
    fprintf(out,
            "{\n"
            "    if (EMB_LIKELY((__atomic_load_n(&emb_trace_class_mask, __ATOMIC_RELAXED) &\n"
            "                    (1u << EMB_TRACE_CLASS_%s)) == 0u))\n"
            "        return;\n",
            cls_up);
    /* Out of line: the call site is the class test and a call. */
    snprintf(slow, sizeof slow, "    emb_trace_emit_slow_%s(", ev->name);
    if (!embgen_call(line, sizeof line, slow, ev, "%s", ");"))
        return;
    fputs("#if !CONFIG_EMB_TRACE_INLINE\n", out);
    embgen_wrap(out, line, 4 + (int)strlen("emb_trace_emit_slow_") + (int)strlen(ev->name) + 1, false);
    fputs("#else\n", out);
    snprintf(line, sizeof line,
             "    struct emb_trace_slot emb__slot = emb_trace_reserve_fast(EMB_TRACE_ID_%s, "
             "EMB_TRACE_SIZE_%s);",
             up, up);
    embgen_wrap(out, line, 44, false);
    fputs("    uint8_t *emb__p = emb__slot.payload;\n"
          "    if (EMB_UNLIKELY(emb__p == NULL)) {\n", out);
    snprintf(slow, sizeof slow, "        emb_trace_emit_slow_%s(", ev->name);
    if (!embgen_call(line, sizeof line, slow, ev, "%s", ");"))
        return;
    embgen_wrap(out, line, 8 + (int)strlen("emb_trace_emit_slow_") + (int)strlen(ev->name) + 1, false);
    fputs("        return;\n"
          "    }\n", out);
    embgen_emit_body_open(out, ev, up);
    fputs("#endif\n"
          "}\n", out);
}

/* EMB_TRACE_<event>(...): the emitter, or, with the class compiled out, nothing that
 * still uses each argument in sizeof (so no variable goes unused). */
static void embgen_event_macro(FILE *out, const struct emb_catalog_event *ev)
{
    char line[2048], body[2048], prefix[96];
    snprintf(prefix, sizeof prefix, "#define EMB_TRACE_%s(", ev->name);
    if (!embgen_call(line, sizeof line, prefix, ev, "%s", ")"))
        return;
    snprintf(prefix, sizeof prefix, "emb_trace_emit_%s(", ev->name);
    if (!embgen_call(body, sizeof body, prefix, ev, "(%s)", ")"))
        return;
    embgen_define(out, line, body);
    fputs("#else\n", out);
    FILE *m = fmemopen(body, sizeof body, "w");
    if (m == NULL)
        return;
    if (ev->nfields == 0) {
        fputs("((void)0)", m);
    } else {
        fputs("(", m);
        for (size_t i = 0; i < ev->nfields; i++)
            fprintf(m, "%s(void)sizeof(%s)", i ? ", " : "", ev->fields[i].name);
        fputs(")", m);
    }
    fputc('\0', m);
    fclose(m);
    body[sizeof body - 1] = '\0';
    embgen_define(out, line, body);
    fputs("#endif\n", out);
}

static void embgen_event(FILE *out, const struct emb_catalog_event *ev)
{
    char up[80], cls_up[80], line[2048];
    embgen_upper(up, sizeof up, ev->name);
    embgen_upper(cls_up, sizeof cls_up, ev->cls->name);
    embgen_event_comment(out, ev);
    embgen_event_enums(out, ev, up);
    embgen_signature(line, sizeof line, "void emb_trace_emit_slow_", ev);
    fprintf(out, "%s;\n", line);
    fprintf(out, "#if (CONFIG_EMB_TRACE_CLASSES) & (1u << %u)\n", ev->cls->id);
    embgen_event_inline(out, ev, up, cls_up);
    embgen_event_macro(out, ev);
}

static int embgen_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every identifier the header defines, so two catalogue names that generate the same C
 * name are refused here rather than by a compiler somewhere else. */
static bool embgen_check_names(const struct emb_catalog *cat)
{
    size_t cap = 16, n = 0;
    char **names = malloc(cap * sizeof *names);
    bool ok = names != NULL;
    char up[80], fup[80], lup[80], buf[320];
#define EMBGEN_ADD(...)                                                                    \
    do {                                                                                   \
        snprintf(buf, sizeof buf, __VA_ARGS__);                                            \
        if (ok && n == cap) {                                                              \
            char **bigger = realloc(names, 2 * cap * sizeof *names);                       \
            if (bigger == NULL)                                                            \
                ok = false;                                                                \
            else                                                                           \
                names = bigger, cap *= 2;                                                  \
        }                                                                                  \
        if (ok && (names[n] = strdup(buf)) != NULL)                                        \
            n++;                                                                           \
        else                                                                               \
            ok = false;                                                                    \
    } while (0)
    EMBGEN_ADD("EMB_TRACE_CATALOG_CHECKSUM");
    EMBGEN_ADD("EMB_TRACE_CATALOG_VERSION");
    EMBGEN_ADD("EMB_TRACE_CLASSES_ALL");
    for (size_t c = 0; c < cat->nclasses; c++) {
        embgen_upper(up, sizeof up, cat->classes[c].name);
        EMBGEN_ADD("EMB_TRACE_CLASS_%s", up);
        for (size_t e = 0; e < cat->classes[c].nevents; e++) {
            const struct emb_catalog_event *ev = &cat->classes[c].events[e];
            embgen_upper(up, sizeof up, ev->name);
            EMBGEN_ADD("EMB_TRACE_ID_%s", up);
            EMBGEN_ADD("EMB_TRACE_SIZE_%s", up);
            EMBGEN_ADD("EMB_TRACE_%s", ev->name);
            for (size_t i = 0; i < ev->nfields; i++) {
                const struct emb_catalog_field *f = &ev->fields[i];
                if (f->nvalues == 0)
                    continue;
                embgen_upper(fup, sizeof fup, f->name);
                EMBGEN_ADD("emb_trace_%s_%s", ev->name, f->name);
                for (size_t v = 0; v < f->nvalues; v++) {
                    embgen_upper(lup, sizeof lup, f->values[v].name);
                    EMBGEN_ADD("EMB_TRACE_%s_%s_%s", up, fup, lup);
                }
            }
        }
    }
#undef EMBGEN_ADD
    if (ok) {
        qsort(names, n, sizeof *names, embgen_cmp_str);
        for (size_t i = 1; i < n; i++) {
            if (strcmp(names[i - 1], names[i]) == 0) {
                fprintf(stderr, "embgen: %s: two catalogue names generate `%s`\n",
                        embgen_source, names[i]);
                ok = false;
                break;
            }
        }
    } else {
        fprintf(stderr, "embgen: out of memory\n");
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return ok;
}

static int embgen_header(FILE *out, const struct emb_catalog *cat)
{
    char up[80];
    fprintf(out,
            "/* The trace events of %s: ids, sizes and the inline emitters.\n"
            " * Generated by embgen; edit the catalogue, not this file.\n"
            " *\n"
            " * Call sites use EMB_TRACE_<event>(fields...). A class outside\n"
            " * CONFIG_EMB_TRACE_CLASSES expands to code that evaluates none of its arguments;\n"
            " * an enabled one costs a load and a branch while its class is off at run time\n"
            " * (emb_trace_set_classes()), and the reservation and a few stores when it is on.\n"
            " * char[N] fields take a string, copied up to N bytes and NUL-padded (NULL is\n"
            " * empty). Layouts follow docs/formats/trace.md.\n"
            " */\n"
            "#ifndef EMB_TRACE_EVENTS_H\n"
            "#define EMB_TRACE_EVENTS_H\n\n"
            "#include <stdbool.h>\n"
            "#include <stddef.h>\n"
            "#include <stdint.h>\n\n"
            "#include <emb/trace.h>\n\n"
            "#ifdef __cplusplus\n"
            "extern \"C\" {\n"
            "#endif\n\n"
            "/* CRC-32 of the catalogue's canonical text: every trace file carries it. */\n"
            "#define EMB_TRACE_CATALOG_CHECKSUM 0x%08" PRIX32 "u\n"
            "#define EMB_TRACE_CATALOG_VERSION %u\n\n"
            "/* Classes: bit n of CONFIG_EMB_TRACE_CLASSES and of the run-time class mask. */\n"
            "enum emb_trace_class {\n",
            embgen_source, cat->checksum, cat->version);
    uint32_t all = 0;
    for (size_t c = 0; c < cat->nclasses; c++) {
        const struct emb_catalog_class *cls = &cat->classes[c];
        embgen_upper(up, sizeof up, cls->name);
        all |= 1u << cls->id;
        fprintf(out, "    EMB_TRACE_CLASS_%s = %u,", up, cls->id);
        if (cls->doc != NULL) {
            /* Only the first sentence: the rest is in the catalogue. */
            const char *dot = strstr(cls->doc, ". ");
            size_t len = dot != NULL ? (size_t)(dot - cls->doc + 1) : strlen(cls->doc);
            char first[160];
            snprintf(first, sizeof first, "%.*s", (int)len, cls->doc);
            for (char *q = first; *q != '\0'; q++)
                if (*q == '\n' || (*q == '*' && q[1] == '/'))
                    *q = ' ';
            fprintf(out, " /* %s */", first);
        }
        fputs("\n", out);
    }
    fprintf(out, "};\n#define EMB_TRACE_CLASSES_ALL 0x%08" PRIX32 "u\n\n", all);

    fputs("enum emb_trace_event_id {\n", out);
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id);
        if (ev == NULL)
            continue;
        embgen_upper(up, sizeof up, ev->name);
        fprintf(out, "    EMB_TRACE_ID_%s = 0x%04X,\n", up, (unsigned)id);
    }
    fputs("};\n\n/* Bytes each event takes in a packet, the 8-byte event header included. */\n",
          out);
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id);
        if (ev == NULL)
            continue;
        embgen_upper(up, sizeof up, ev->name);
        fprintf(out, "#define EMB_TRACE_SIZE_%s %" PRIu32 "u\n", up, ev->size);
    }
    for (size_t c = 0; c < cat->nclasses; c++) {
        const struct emb_catalog_class *cls = &cat->classes[c];
        fprintf(out, "\n/* ---- Class %s (%u) ---- */\n", cls->name, cls->id);
        for (size_t e = 0; e < cls->nevents; e++)
            embgen_event(out, &cls->events[e]);
    }
    fputs("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* EMB_TRACE_EVENTS_H */\n", out);
    return 0;
}

static int embgen_tsdl(FILE *out, const struct emb_catalog *cat)
{
    struct emb_tsdl_params p = {.clock_hz = 1000000000u};
    return emb_catalog_write_tsdl(cat, &p, out);
}

/* The out-of-line half of every emitter: what runs when the inline fast path cannot
 * reserve (a packet to open, a ring to claim, an event to drop). One function per event,
 * in the library; with -ffunction-sections a firmware image keeps only those it calls. */
static int embgen_source_file(FILE *out, const struct emb_catalog *cat)
{
    fprintf(out,
            "/* The slow paths of the trace emitters of %s.\n"
            " * Generated by embgen; edit the catalogue, not this file. */\n"
            "#include <emb/trace_events.h>\n",
            embgen_source);
    char line[2048], up[80];
    for (size_t c = 0; c < cat->nclasses; c++) {
        for (size_t e = 0; e < cat->classes[c].nevents; e++) {
            const struct emb_catalog_event *ev = &cat->classes[c].events[e];
            embgen_upper(up, sizeof up, ev->name);
            embgen_signature(line, sizeof line, "void emb_trace_emit_slow_", ev);
            fputc('\n', out);
            const char *paren = strchr(line, '(');
            embgen_wrap(out, line, paren - line < 60 ? (int)(paren - line) + 1 : 8, false);
            snprintf(line, sizeof line,
                     "    struct emb_trace_slot emb__slot = emb__trace_reserve_out("
                     "EMB_TRACE_ID_%s, EMB_TRACE_SIZE_%s);",
                     up, up);
            fputs("{\n", out);
            embgen_wrap(out, line, 44, false);
            fputs("    uint8_t *emb__p = emb__slot.payload;\n"
                  "    if (emb__p == NULL)\n"
                  "        return;\n",
                  out);
            embgen_emit_body(out, ev, up);
        }
    }
    /* The ring's slow path counts the events of a packet it overwrites unread: a table,
     * so the walk costs a load per event. */
    uint32_t end = 1;
    for (uint32_t id = 1; id <= 65535u; id++)
        if (emb_catalog_event(cat, (uint16_t)id) != NULL)
            end = id + 1u;
    fprintf(out, "\nconst uint32_t emb_trace_event_words_len = %" PRIu32 "u;\n"
            "EMB_PORT_ROM const uint8_t emb_trace_event_words[%" PRIu32 "] = {\n", end, end);
    for (uint32_t id = 1; id < end; id++) {
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id);
        if (ev == NULL)
            continue;
        embgen_upper(up, sizeof up, ev->name);
        fprintf(out, "    [EMB_TRACE_ID_%s] = EMB_TRACE_SIZE_%s / 4u,\n", up, up);
    }
    fputs("};\n", out);
    return ferror(out) ? -1 : 0;
}

static const char *embgen_yaml;
static size_t embgen_yaml_len;

/* The YAML as one string literal, a line of the file per line of source. Octal escapes
 * are three digits so a following digit cannot join them. */
static int embgen_embed(FILE *out, const struct emb_catalog *cat)
{
    (void)cat;
    fprintf(out,
            "/* %s, embedded for emb_catalog_builtin() (tools/lib/catalog/catalog_builtin.c).\n"
            " * Generated by embgen; edit the catalogue, not this file. */\n\n"
            "extern const char emb_catalog_yaml[];\n"
            "extern const unsigned long emb_catalog_yaml_len;\n\n"
            "const char emb_catalog_yaml[] =\n",
            embgen_source);
    bool open = false;
    for (size_t i = 0; i < embgen_yaml_len; i++) {
        unsigned char c = (unsigned char)embgen_yaml[i];
        if (!open) {
            fputs("    \"", out);
            open = true;
        }
        if (c == '\n')
            fputs("\\n", out);
        else if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7F || c == '?')
            fprintf(out, "\\%03o", c); /* '?' too: no trigraphs */
        else
            fputc(c, out);
        if (c == '\n' || i + 1 == embgen_yaml_len) {
            fputs("\"\n", out);
            open = false;
        }
    }
    if (embgen_yaml_len == 0)
        fputs("    \"\"\n", out);
    fprintf(out, "    ;\nconst unsigned long emb_catalog_yaml_len = %zuu;\n", embgen_yaml_len);
    return 0;
}

/* Writes through a temporary file and a rename, so a failed run never leaves a half
 * header behind for the next build to pick up. */
static int embgen_write(const char *path, int (*fn)(FILE *, const struct emb_catalog *),
                        const struct emb_catalog *cat)
{
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (tmp == NULL) {
        fprintf(stderr, "embgen: out of memory\n");
        return 1;
    }
    snprintf(tmp, len, "%s.tmp%ld", path, (long)getpid());
    FILE *out = fopen(tmp, "w");
    if (out == NULL) {
        fprintf(stderr, "embgen: %s: %s\n", tmp, strerror(errno));
        free(tmp);
        return 1;
    }
    int rc = fn(out, cat);
    if (ferror(out))
        rc = -1;
    if (fclose(out) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "embgen: %s: %s\n", path, strerror(errno ? errno : EIO));
        remove(tmp);
    }
    free(tmp);
    return rc == 0 ? 0 : 1;
}

static char *embgen_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

static void embgen_usage(FILE *out)
{
    fputs("usage: embgen --catalog FILE [--header OUT.h] [--source OUT.c] [--tsdl OUT.tsdl]\n"
          "              [--embed OUT.c]\n"
          "\n"
          "Validates a trace event catalogue and generates from it:\n"
          "  --header OUT.h     the event ids, sizes and inline emitters (emb/trace_events.h)\n"
          "  --source OUT.c     the emitters' out-of-line slow paths, for the target library\n"
          "  --tsdl OUT.tsdl    reference CTF 1.8 metadata (zero uuid, 1 GHz clock)\n"
          "  --embed OUT.c      the YAML as C data for the host tool's built-in catalogue\n"
          "  --help             this text\n"
          "\n"
          "Exit status: 0 done, 1 an output could not be written, 2 bad catalogue or usage.\n",
          out);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"catalog", required_argument, NULL, 'c'}, {"header", required_argument, NULL, 'H'},
        {"tsdl", required_argument, NULL, 't'},    {"embed", required_argument, NULL, 'e'},
        {"source", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *catalog = NULL, *header = NULL, *tsdl = NULL, *embed = NULL, *source = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "c:H:t:e:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            catalog = optarg;
            break;
        case 'H':
            header = optarg;
            break;
        case 't':
            tsdl = optarg;
            break;
        case 'e':
            embed = optarg;
            break;
        case 's':
            source = optarg;
            break;
        case 'h':
            embgen_usage(stdout);
            return 0;
        default:
            embgen_usage(stderr);
            return 2;
        }
    }
    if (catalog == NULL || optind != argc) {
        fprintf(stderr, "embgen: %s\n",
                catalog == NULL ? "--catalog FILE is required" : "unexpected argument");
        embgen_usage(stderr);
        return 2;
    }
    const char *base = strrchr(catalog, '/');
    const char *dir_end = base;
    /* Name the catalogue as catalog/NAME when it lives in a catalog directory, so the
     * generated files do not depend on where the source tree is. */
    if (base != NULL) {
        while (dir_end > catalog && dir_end[-1] != '/')
            dir_end--;
        embgen_source = strncmp(dir_end, "catalog/", 8) == 0 ? dir_end : base + 1;
    } else {
        embgen_source = catalog;
    }

    embgen_yaml = embgen_read(catalog, &embgen_yaml_len);
    if (embgen_yaml == NULL) {
        fprintf(stderr, "embgen: %s: %s\n", catalog, errno ? strerror(errno) : "read error");
        return 2;
    }
    char err[512];
    struct emb_catalog *cat = emb_catalog_parse(embgen_yaml, embgen_yaml_len, catalog, err,
                                                sizeof err);
    if (cat == NULL) {
        fprintf(stderr, "%s\n", err);
        free((char *)embgen_yaml);
        return 2;
    }
    int rc = embgen_check_names(cat) ? 0 : 2;
    if (rc == 0 && header != NULL)
        rc = embgen_write(header, embgen_header, cat);
    if (rc == 0 && source != NULL)
        rc = embgen_write(source, embgen_source_file, cat);
    if (rc == 0 && tsdl != NULL)
        rc = embgen_write(tsdl, embgen_tsdl, cat);
    if (rc == 0 && embed != NULL)
        rc = embgen_write(embed, embgen_embed, cat);
    emb_catalog_free(cat);
    free((char *)embgen_yaml);
    return rc;
}
