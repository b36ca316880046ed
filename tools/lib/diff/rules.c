/* The significance rules (docs/diff.md): their defaults, one rules-file line, a rules file,
 * and the --anchor choice of epoch marker. */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "diff_internal.h"
#include "input_file.h"
#include "parse_number.h"

static const char *const rule_names[EMB_DIFF_NRULES] = {
    "missing", "extra", "reorder", "argument", "epoch-duration", "interval", "drops",
};

const char *emb_diff_rule_name(enum emb_diff_rule rule)
{
    return (unsigned)rule < EMB_DIFF_NRULES ? rule_names[rule] : "?";
}


void emb_diff_rules_default(struct emb_diff_rules *r)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < EMB_DIFF_NRULES; i++)
        r->enabled[i] = true;
    r->margin_pct = 25.0;
    r->margin_us = 20.0;
    r->quantile_pct = 5.0;
    r->repeat = 10;
    r->context_lines = 3;
    r->anchor_field = -2;
}

void emb_diff_rules_free(struct emb_diff_rules *r)
{
    EMB_FREE_ALL(r->policies, r->switches, r->pairs);
    r->pairs = NULL;
    r->npairs = 0;
    r->policies = NULL;
    r->npolicies = 0;
    r->switches = NULL;
    r->nswitches = 0;
}

static long find_field(const struct emb_catalog_event *ev, const char *name, size_t len)
{
    for (size_t f = 0; f < ev->nfields; f++)
        if (strlen(ev->fields[f].name) == len && !strncmp(ev->fields[f].name, name, len))
            return (long)f;
    return -1;
}

/* "EVENT.FIELD" or "EVENT": the event, and the field index (-1 none given). */
static int parse_event_field(const struct emb_catalog *cat, const char *spec,
                             const struct emb_catalog_event **ev, long *field, struct emb_problems *ps)
{
    const char *dot = strchr(spec, '.');
    size_t n = dot ? (size_t)(dot - spec) : strlen(spec);
    char name[80];
    if (n == 0 || n >= sizeof name)
        return emb_diff_report_error(ps, ps->file, -1, "'%s' is not EVENT or EVENT.FIELD", spec);
    memcpy(name, spec, n);
    name[n] = 0;
    if (!(*ev = emb_catalog_find(cat, name)))
        return emb_diff_report_error(ps, ps->file, -1, "no event '%s' in the catalogue", name);
    *field = -1;
    if (dot && (*field = find_field(*ev, dot + 1, strlen(dot + 1))) < 0)
        return emb_diff_report_error(ps, ps->file, -1, "event %s has no field '%s'", name, dot + 1);
    return 0;
}

int emb_diff_rules_anchor(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *spec,
                          struct emb_problems *ps)
{
    const struct emb_catalog_event *ev;
    long f;
    if (parse_event_field(cat, spec, &ev, &f, ps) != 0)
        return -1;
    if (f >= 0 && ev->fields[f].type == EMB_CAT_CHARS)
        return emb_diff_report_error(ps, ps->file, -1, "the anchor field must be an integer, not %s", spec);
    r->anchor_event = ev;
    r->anchor_field = f;
    r->anchor_given = true;
    return 0;
}

/* A number that is not negative. */
static bool parse_amount(const char *s, double *v)
{
    return emb_parse_double(s, 0, DBL_MAX, v) == 0;
}

/* Splits a line into at most 8 words; "double quotes" keep spaces in a word; '#' outside
 * quotes starts a comment. Returns the count, or -1 (too many words, an open quote). */
static int split(char *line, char **w)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            return n;
        if (n == 8)
            return -1;
        if (*p == '"') {
            w[n++] = ++p;
            while (*p && *p != '"')
                p++;
            if (!*p)
                return -1;
        } else {
            w[n++] = p;
            while (*p && !isspace((unsigned char)*p) && *p != '#')
                p++;
            if (*p == '#') {
                *p = 0;
                return n;
            }
        }
        if (*p)
            *p++ = 0;
    }
}

/* Adds `item` (`size` bytes) at the end of a rules list: `list` points to the list's
 * pointer, *n counts its items. -1 (reported) when out of memory: the list is unchanged. */
static int append(void *list, size_t *n, const void *item, size_t size, struct emb_problems *ps)
{
    void *items;
    memcpy(&items, list, sizeof items);
    unsigned char *grown = realloc(items, (*n + 1) * size);
    if (!grown)
        return emb_diff_report_error(ps, ps->file, -1, "out of memory");
    memcpy(grown + *n * size, item, size);
    memcpy(list, &grown, sizeof grown);
    ++*n;
    return 0;
}

static int parse_compare(struct emb_diff_rules *r, const struct emb_catalog *cat, char **w, int n,
                         struct emb_problems *ps)
{
    /* compare EVENT.FIELD exact|ignore|tolerance N|tolerance_pct N [when FIELD=VALUE] */
    struct emb_diff_policy p = {0};
    long f;
    if (n < 3)
        return emb_diff_report_error(ps, ps->file, -1, "compare EVENT.FIELD POLICY [when FIELD=VALUE]");
    if (parse_event_field(cat, w[1], &p.event, &f, ps) != 0)
        return -1;
    if (f < 0)
        return emb_diff_report_error(ps, ps->file, -1, "compare needs EVENT.FIELD, not '%s'", w[1]);
    p.field = (size_t)f;
    int at = 3;
    if (!strcmp(w[2], "exact")) {
        p.compare = EMB_CAT_COMPARE_EXACT;
    } else if (!strcmp(w[2], "ignore")) {
        p.compare = EMB_CAT_COMPARE_IGNORE;
    } else if (!strcmp(w[2], "tolerance") || !strcmp(w[2], "tolerance_pct")) {
        p.compare = w[2][9] ? EMB_CAT_COMPARE_TOLERANCE_PCT : EMB_CAT_COMPARE_TOLERANCE;
        if (n < 4 || !parse_amount(w[3], &p.tolerance))
            return emb_diff_report_error(ps, ps->file, -1, "%s needs a number that is not negative", w[2]);
        if (p.event->fields[f].type == EMB_CAT_CHARS)
            return emb_diff_report_error(ps, ps->file, -1, "a tolerance needs an integer field");
        at = 4;
    } else {
        return emb_diff_report_error(ps, ps->file, -1, "policy '%s': exact, ignore, tolerance N or tolerance_pct N",
                          w[2]);
    }
    if (at < n) {
        char *eq = at + 1 < n ? strchr(w[at + 1], '=') : NULL;
        if (strcmp(w[at], "when") || !eq || at + 2 != n)
            return emb_diff_report_error(ps, ps->file, -1, "expected 'when FIELD=VALUE' after the policy");
        long wf = find_field(p.event, w[at + 1], (size_t)(eq - w[at + 1]));
        if (wf < 0 || p.event->fields[wf].type == EMB_CAT_CHARS)
            return emb_diff_report_error(ps, ps->file, -1, "event %s has no integer field '%.*s'", p.event->name,
                              (int)(eq - w[at + 1]), w[at + 1]);
        if (emb_parse_i64(eq + 1, INT64_MIN, INT64_MAX, &p.when_value) != 0)
            return emb_diff_report_error(ps, ps->file, -1, "'%s' is not a number", eq + 1);
        p.has_when = true;
        p.when_field = (size_t)wf;
    }
    return append(&r->policies, &r->npolicies, &p, sizeof p, ps);
}

static int parse_pair(struct emb_diff_rules *r, char **w, int n, struct emb_problems *ps)
{
    /* pair GOOD BAD */
    if (n != 3 || !w[1][0] || !w[2][0] || strlen(w[1]) >= sizeof r->pairs[0].good ||
        strlen(w[2]) >= sizeof r->pairs[0].bad)
        return emb_diff_report_error(ps, ps->file, -1, "pair GOOD BAD: the good run's context name, "
                                     "then the bad run's (quote a NAME with spaces)");
    struct emb_diff_pair p = {{0}, {0}};
    snprintf(p.good, sizeof p.good, "%s", w[1]);
    snprintf(p.bad, sizeof p.bad, "%s", w[2]);
    return append(&r->pairs, &r->npairs, &p, sizeof p, ps);
}

int emb_diff_rules_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *text,
                        struct emb_problems *ps)
{
    char line[512], *w[8];
    if (strlen(text) >= sizeof line)
        return emb_diff_report_error(ps, ps->file, -1, "line too long");
    strcpy(line, text);
    int n = split(line, w);
    if (n < 0)
        return emb_diff_report_error(ps, ps->file, -1, "too many words");
    if (n == 0)
        return 0;
    double v;
    if (!strcmp(w[0], "rule")) {
        if (n != 3 || (strcmp(w[2], "on") && strcmp(w[2], "off")))
            return emb_diff_report_error(ps, ps->file, -1, "rule NAME on|off");
        for (int i = 0; i < EMB_DIFF_NRULES; i++)
            if (!strcmp(w[1], rule_names[i])) {
                r->enabled[i] = !strcmp(w[2], "on");
                return 0;
            }
        return emb_diff_report_error(ps, ps->file, -1, "no rule '%s' (missing, extra, reorder, argument, "
                          "epoch-duration, interval, drops)", w[1]);
    }
    if (!strcmp(w[0], "context")) {
        /* context NAME RULE on|off */
        if (n != 4 || (strcmp(w[3], "on") && strcmp(w[3], "off")) || !w[1][0] ||
            strlen(w[1]) >= sizeof r->switches[0].context)
            return emb_diff_report_error(ps, ps->file, -1, "context NAME RULE on|off (quote a NAME with spaces)");
        int rule = -1;
        for (int i = 0; i < EMB_DIFF_NRULES; i++)
            if (!strcmp(w[2], rule_names[i]))
                rule = i;
        if (rule < 0)
            return emb_diff_report_error(ps, ps->file, -1, "no rule '%s'", w[2]);
        struct emb_diff_switch sw = {.rule = (uint8_t)rule, .enabled = !strcmp(w[3], "on")};
        snprintf(sw.context, sizeof sw.context, "%s", w[1]);
        return append(&r->switches, &r->nswitches, &sw, sizeof sw, ps);
    }
    if (!strcmp(w[0], "margin-pct") || !strcmp(w[0], "margin-us") || !strcmp(w[0], "repeat") ||
        !strcmp(w[0], "context-lines") || !strcmp(w[0], "quantile")) {
        if (n != 2 || !parse_amount(w[1], &v))
            return emb_diff_report_error(ps, ps->file, -1, "%s needs one number that is not negative", w[0]);
        if (!strcmp(w[0], "quantile")) {
            if (v >= 50)
                return emb_diff_report_error(ps, ps->file, -1, "quantile takes a percentage below 50");
            r->quantile_pct = v;
        } else if (!strcmp(w[0], "margin-pct"))
            r->margin_pct = v;
        else if (!strcmp(w[0], "margin-us"))
            r->margin_us = v;
        else if (v < 1 || v > 1000 || v != floor(v))
            return emb_diff_report_error(ps, ps->file, -1, "%s takes a whole number from 1 to 1000", w[0]);
        else if (!strcmp(w[0], "repeat"))
            r->repeat = (unsigned)v;
        else
            r->context_lines = (unsigned)v;
        return 0;
    }
    if (!strcmp(w[0], "anchor")) {
        if (n != 2)
            return emb_diff_report_error(ps, ps->file, -1, "anchor EVENT[.FIELD]");
        return emb_diff_rules_anchor(r, cat, w[1], ps);
    }
    if (!strcmp(w[0], "compare"))
        return parse_compare(r, cat, w, n, ps);
    if (!strcmp(w[0], "pair"))
        return parse_pair(r, w, n, ps);
    return emb_diff_report_error(ps, ps->file, -1, "unknown setting '%s' (rule, context, margin-pct, margin-us, "
                      "quantile, repeat, context-lines, anchor, compare, pair)", w[0]);
}

/* One line of a rules file: its problem placed "PATH:LINE: message", as an editor reads it
 * (a problem's file and byte offset cannot say a line), with no file of its own. */
static int load_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *line,
                     const char *path, unsigned no, struct emb_problems *ps)
{
    if (strlen(line) >= 1024)
        return emb_diff_report_error(ps, NULL, -1, "%s:%u: a line longer than 1023 bytes", path, no);
    struct emb_problems line_problems;
    emb_problems_init(&line_problems, NULL);
    line_problems.max_kept = 1;
    int rc = emb_diff_rules_line(r, cat, line, &line_problems);
    if (rc != 0)
        emb_diff_report_error(ps, NULL, -1, "%s:%u: %s", path, no,
                              line_problems.n ? line_problems.items[0].message : "out of memory");
    emb_problems_free(&line_problems);
    return rc;
}

int emb_diff_rules_load(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *path,
                        struct emb_problems *ps)
{
    /* Read whole and bounded: a directory or /dev/zero is refused, never read as no rules
     * or forever. */
    char why[400];
    size_t len = 0;
    uint8_t *text = emb_input_read_max(path, EMB_DIFF_RULES_MAX_BYTES, &len, why, sizeof why);
    if (!text)
        return emb_diff_report_error(ps, path, -1, "%s", why);
    const uint8_t *nul = memchr(text, 0, len);
    if (nul) {
        size_t at = (size_t)(nul - text);
        free(text);
        return emb_diff_report_error(ps, path, (long long)at, "a NUL byte: not a text file");
    }
    unsigned no = 0;
    int rc = 0;
    for (char *line = (char *)text; rc == 0 && line < (char *)text + len;) {
        char *eol = strchr(line, '\n');
        char *next = eol ? eol + 1 : (char *)text + len;
        if (eol)
            *eol = 0;
        no++;
        line[strcspn(line, "\r")] = 0;
        rc = load_line(r, cat, line, path, no, ps);
        line = next;
    }
    free(text);
    return rc;
}
