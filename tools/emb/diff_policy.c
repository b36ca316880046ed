/* Policies, pairs and anchor candidates for `emb diff` (diff_policy.h). */
#define _POSIX_C_SOURCE 200809L
#include "diff_policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli.h"
#include "ctf_import.h"
#include "trace_decode.h"

static const char *const CMD = "emb diff";

void emb_diff_spec_name(const char *spec, bool ctf, const struct emb_catalog *cat, char *out, size_t len)
{
    char ev[160];
    if (!ctf) {
        snprintf(out, len, "%s", spec);
        return;
    }
    /* the whole spec an event's name first (CTF names may hold dots), else EVENT.FIELD */
    emb_ctf_name(spec, ev, sizeof ev);
    const char *dot = strrchr(spec, '.');
    if (emb_catalog_find(cat, ev) != NULL || dot == NULL) {
        snprintf(out, len, "%s", ev);
        return;
    }
    char raw[160], field[96];
    snprintf(raw, sizeof raw, "%.*s", (int)(dot - spec), spec);
    emb_ctf_name(raw, ev, sizeof ev);
    emb_ctf_field_name(dot + 1, field, sizeof field);
    snprintf(out, len, "%s.%s", ev, field);
}

static int rules_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *source,
                      const char *line)
{
    struct emb_problems ps;
    emb_problems_init_callback(&ps, source, emb_cli_problem, (void *)CMD);
    return emb_diff_rules_line(r, cat, line, &ps) != 0 ? EMB_EXIT_BAD : EMB_EXIT_OK;
}

/* exact, ignore, tol:N or tol:N% as the rules language says it; NULL when neither. */
static const char *policy_words(const char *policy, char *buf, size_t len)
{
    if (!strcmp(policy, "exact") || !strcmp(policy, "ignore"))
        return policy;
    if (strncmp(policy, "tol:", 4) != 0 || policy[4] == '\0')
        return NULL;
    size_t n = strlen(policy + 4);
    bool pct = policy[4 + n - 1] == '%';
    snprintf(buf, len, "%s %.*s", pct ? "tolerance_pct" : "tolerance", (int)(n - pct), policy + 4);
    return buf;
}

static int field_policy(struct emb_diff_rules *r, const struct emb_catalog *cat, bool ctf,
                        const char *source, const char *spec, const char *policy)
{
    char name[256], words[64], line[600];
    const char *p = policy_words(policy, words, sizeof words);
    if (p == NULL) {
        emb_cli_error(CMD, "%s: policy '%s' for %s: exact, ignore, tol:N or tol:N%%", source,
                      policy, spec);
        return EMB_EXIT_BAD;
    }
    emb_diff_spec_name(spec, ctf, cat, name, sizeof name);
    snprintf(line, sizeof line, "compare %s %s", name, p);
    return rules_line(r, cat, source, line);
}

int emb_diff_field_option(struct emb_diff_rules *r, const struct emb_catalog *cat, bool ctf,
                          const char *value)
{
    const char *eq = strrchr(value, '=');
    if (eq == NULL) {
        emb_cli_error(CMD, "--field: EVENT.FIELD=POLICY, not '%s'", value);
        return EMB_EXIT_BAD;
    }
    char spec[256];
    snprintf(spec, sizeof spec, "%.*s", (int)(eq - value), value);
    return field_policy(r, cat, ctf, "--field", spec, eq + 1);
}

static int pair(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *source,
                const char *good, const char *bad)
{
    char line[600];
    snprintf(line, sizeof line, "pair \"%s\" \"%s\"", good, bad);
    return rules_line(r, cat, source, line);
}

int emb_diff_pair_option(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *value)
{
    const char *eq = strchr(value, '=');
    if (eq == NULL) {
        emb_cli_error(CMD, "--pair: GOOD=BAD (a context of the good run, then of the bad one), "
                      "not '%s'", value);
        return EMB_EXIT_BAD;
    }
    char good[128];
    snprintf(good, sizeof good, "%.*s", (int)(eq - value), value);
    return pair(r, cat, "--pair", good, eq + 1);
}

/* The policy file's document and where each node is, for its messages. */
struct policy_doc {
    yaml_document_t doc;
    const char *path;
    struct emb_diff_rules *r;
    const struct emb_catalog *cat;
    bool ctf;
};

static int doc_error(const struct policy_doc *d, const yaml_node_t *n, const char *what)
{
    emb_cli_error(CMD, "%s:%zu: %s", d->path, n ? n->start_mark.line + 1 : 1, what);
    return EMB_EXIT_BAD;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Each KEY: VALUE pair of a mapping node handed to `each`. */
static int each_pair(struct policy_doc *d, const yaml_node_t *map,
                     int (*each)(struct policy_doc *, const yaml_node_t *, const char *, const char *))
{
    if (map->type != YAML_MAPPING_NODE)
        return doc_error(d, map, "expected a mapping of KEY: VALUE");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(&d->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(&d->doc, p->value);
        if (!scalar(k) || !scalar(v))
            return doc_error(d, k, "expected KEY: VALUE with both plain text");
        int rc = each(d, k, scalar(k), scalar(v));
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int on_field(struct policy_doc *d, const yaml_node_t *k, const char *key, const char *value)
{
    char source[300];
    snprintf(source, sizeof source, "%s:%zu", d->path, k->start_mark.line + 1);
    return field_policy(d->r, d->cat, d->ctf, source, key, value);
}

static int on_pair(struct policy_doc *d, const yaml_node_t *k, const char *key, const char *value)
{
    char source[300];
    snprintf(source, sizeof source, "%s:%zu", d->path, k->start_mark.line + 1);
    return pair(d->r, d->cat, source, key, value);
}

static int on_rule(struct policy_doc *d, const yaml_node_t *k, const char *key, const char *value)
{
    char source[300], line[300];
    snprintf(source, sizeof source, "%s:%zu", d->path, k->start_mark.line + 1);
    snprintf(line, sizeof line, "rule %s %s", key, value);
    return rules_line(d->r, d->cat, source, line);
}

static int on_top(struct policy_doc *d, const yaml_node_t *k, const yaml_node_t *v)
{
    const char *key = scalar(k);
    char source[300], name[256], line[300];
    snprintf(source, sizeof source, "%s:%zu", d->path, k->start_mark.line + 1);
    if (key && !strcmp(key, "anchor") && scalar(v)) {
        emb_diff_spec_name(scalar(v), d->ctf, d->cat, name, sizeof name);
        snprintf(line, sizeof line, "anchor %s", name);
        return rules_line(d->r, d->cat, source, line);
    }
    if (key && !strcmp(key, "fields"))
        return each_pair(d, v, on_field);
    if (key && !strcmp(key, "pair"))
        return each_pair(d, v, on_pair);
    if (key && !strcmp(key, "rules"))
        return each_pair(d, v, on_rule);
    return doc_error(d, k, "expected anchor: EVENT[.FIELD], fields: {EVENT.FIELD: POLICY}, "
                           "pair: {GOOD: BAD} or rules: {RULE: on|off}");
}

int emb_diff_policy_file(struct emb_diff_rules *r, const struct emb_catalog *cat, bool ctf,
                         const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        emb_cli_error_at(CMD, path, -1, "cannot read the policy file");
        return EMB_EXIT_BAD;
    }
    struct policy_doc d = {.path = path, .r = r, .cat = cat, .ctf = ctf};
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int rc = EMB_EXIT_OK;
    if (!yaml_parser_load(&parser, &d.doc)) {
        emb_cli_error(CMD, "%s:%zu: %s", path, parser.problem_mark.line + 1,
                      parser.problem ? parser.problem : "not YAML");
        rc = EMB_EXIT_BAD;
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&d.doc);
        if (root != NULL && root->type != YAML_MAPPING_NODE)
            rc = doc_error(&d, root, "expected a mapping (anchor, fields, pair, rules)");
        for (yaml_node_pair_t *p = root ? root->data.mapping.pairs.start : NULL;
             rc == 0 && p && p < root->data.mapping.pairs.top; p++)
            rc = on_top(&d, yaml_document_get_node(&d.doc, p->key),
                        yaml_document_get_node(&d.doc, p->value));
        yaml_document_delete(&d.doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}

/* Per event of one run: how often, in which context first, and which integer fields rose
 * at every occurrence there. */
struct candidate {
    uint64_t count;
    uint32_t ctx;
    uint64_t rising;   /* bit per field (the first 64) */
    uint64_t in_ctx;   /* occurrences in ctx */
    int64_t last[64];
};

static void watch(struct candidate *c, const struct emb_trace_event *rec)
{
    const struct emb_catalog_event *ev = rec->ev;
    if (c->count == 0 || rec->ctx < c->ctx) {
        /* the first ring that has the event decides, whenever the walk meets it */
        uint64_t count = c->count;
        memset(c, 0, sizeof *c);
        c->count = count;
        c->ctx = rec->ctx;
        for (size_t f = 0; f < ev->nfields && f < 64; f++)
            if (ev->fields[f].type != EMB_CAT_CHARS && ev->fields[f].type != EMB_CAT_BOOL)
                c->rising |= UINT64_C(1) << f;
    }
    c->count++;
    if (rec->ctx != c->ctx)
        return;
    for (size_t f = 0; f < ev->nfields && f < 64; f++) {
        if (!(c->rising >> f & 1u))
            continue;
        int64_t v = emb_catalog_field_get_int(&ev->fields[f], rec->payload);
        if (c->in_ctx > 0 && v <= c->last[f])
            c->rising &= ~(UINT64_C(1) << f);
        c->last[f] = v;
    }
    c->in_ctx++;
}

void emb_diff_anchor_candidates(const struct emb_capture *cap, char *buf, size_t len)
{
    const struct emb_trace *t = emb_capture_trace(cap);
    const struct emb_catalog *cat = emb_trace_catalog(t);
    struct candidate *c = calloc(65536, sizeof *c);
    buf[0] = '\0';
    if (c == NULL)
        return;
    struct emb_trace_cursor *cur = emb_trace_cursor_open(t);
    for (const struct emb_trace_event *e; cur && (e = emb_trace_cursor_next(cur)) != NULL;)
        if (e->type == EMB_TREC_EVENT)
            watch(&c[e->id], e);
    emb_trace_cursor_close(cur);
    size_t used = 0;
    unsigned shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned id = 0; id < 65536 && shown < 5; id++) {
            const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id);
            if (ev == NULL || c[id].count < 2 || (pass == 0) != (c[id].rising != 0))
                continue;
            unsigned f = 0;
            while (pass == 0 && !(c[id].rising >> f & 1u))
                f++;
            int n = pass == 0 ? snprintf(buf + used, len - used, "%s%s.%s (%" PRIu64 " times, %s rising)",
                                         shown ? ", " : "", ev->name, ev->fields[f].name, c[id].count,
                                         ev->fields[f].name)
                              : snprintf(buf + used, len - used, "%s%s (%" PRIu64 " times)",
                                         shown ? ", " : "", ev->name, c[id].count);
            if (n < 0 || (size_t)n >= len - used)
                break;
            used += (size_t)n;
            shown++;
        }
    free(c);
}
