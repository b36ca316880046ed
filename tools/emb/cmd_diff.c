/* `emb diff`: compare a good and a bad capture and report the earliest significant
 * difference (docs/diff.md). */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include <float.h>
#include <math.h>

#include "capture.h"
#include "catalog_known.h"
#include "diff.h"
#include "diff_policy.h"
#include "input_file.h"

static const char *const CMD = "emb diff";


struct args {
    const char *files[2];
    const char *html, *catalog;
    bool json;
};

enum { OPT_HTML = 256, OPT_ANCHOR, OPT_SAME, OPT_RULES, OPT_RULE, OPT_COMPARE, OPT_MARGIN_PCT,
       OPT_MARGIN_US, OPT_QUANTILE, OPT_REPEAT, OPT_LINES, OPT_FIELD, OPT_PAIR, OPT_POLICY };

static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_JSON_CALL,
    EMB_CLI_CALL("html", required_argument, OPT_HTML),
    EMB_CLI_CALL("anchor", required_argument, OPT_ANCHOR),
    EMB_CLI_CALL("same-build", no_argument, OPT_SAME),
    EMB_CLI_CALL("rules", required_argument, OPT_RULES),
    EMB_CLI_CALL("rule", required_argument, OPT_RULE),
    EMB_CLI_CALL("compare", required_argument, OPT_COMPARE),
    EMB_CLI_CALL("margin-pct", required_argument, OPT_MARGIN_PCT),
    EMB_CLI_CALL("quantile", required_argument, OPT_QUANTILE),
    EMB_CLI_CALL("margin-us", required_argument, OPT_MARGIN_US),
    EMB_CLI_CALL("repeat", required_argument, OPT_REPEAT),
    EMB_CLI_CALL("context-lines", required_argument, OPT_LINES),
    EMB_CLI_CALL("field", required_argument, OPT_FIELD),
    EMB_CLI_CALL("pair", required_argument, OPT_PAIR),
    EMB_CLI_CALL("policy", required_argument, OPT_POLICY),
    EMB_CLI_OPTION_CATALOG_CALL,
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_diff, .options = OPTIONS, .usage = "emb diff [options] GOOD BAD (captures, or CTF trace directories)"};

/* What the options fill in: the first pass's output and input, the second's rules. */
struct parse {
    struct args *args;
    struct emb_diff_rules *rules;
    const struct emb_catalog *catalog;
    bool ctf;       /* CTF traces: names given as the trace spells them */
};

/* A problem of the rules from `source` (an option, or none for a rules file, whose
 * problems name it): "emb diff: --rule: message". */
static void rules_problems(struct emb_problems *ps, const char *source)
{
    emb_problems_init_callback(ps, source, emb_cli_problem, (void *)CMD);
}

/* One rules line an option stands for ("--rule NAME=on" is "rule NAME on"). */
static int apply_rule_line(struct emb_diff_rules *r, const struct emb_catalog *cat, const char *opt,
                           const char *line)
{
    struct emb_problems ps;
    rules_problems(&ps, opt);
    return emb_diff_rules_line(r, cat, line, &ps) != 0 ? EMB_EXIT_BAD : EMB_EXIT_OK;
}

/* A count of the rules (--repeat, --context-lines): read as the rules file reads it, a
 * number ("1e1" is ten) that must be whole. */
static int count_option(const char *name, const char *arg, unsigned *out)
{
    static const char what[] = "a whole number from 1 to 1000";
    double v;
    if (emb_cli_option_double(CMD, name, arg, 1, 1000, what, &v) != 0)
        return EMB_EXIT_BAD;
    if (v != floor(v))
        return emb_cli_bad_value(CMD, name, what, arg);
    *out = (unsigned)v;
    return EMB_EXIT_OK;
}

/* The first pass: the options that say what to read and how to write. */
static int output_option(void *arg, int opt, char *value)
{
    struct parse *p = arg;
    switch (opt) {
    case EMB_OPT_CATALOG: p->args->catalog = value; break;
    case EMB_OPT_JSON: p->args->json = true; break;
    case OPT_HTML: p->args->html = value; break;
    case OPT_SAME: p->rules->same_build = true; break;
    default: break;
    }
    return EMB_EXIT_OK;
}

/* One option of the rules, applied in order once the catalogue is known. */
static int rules_option(void *arg, int opt, char *value)
{
    struct parse *p = arg;
    struct emb_diff_rules *r = p->rules;
    const struct emb_catalog *cat = p->catalog;
    char line[600];
    struct emb_problems ps;
    switch (opt) {
    case OPT_ANCHOR:
        rules_problems(&ps, "--anchor");
        emb_diff_spec_name(value, p->ctf, cat, line, sizeof line);
        return emb_diff_rules_anchor(r, cat, line, &ps) != 0 ? EMB_EXIT_BAD : EMB_EXIT_OK;
    case OPT_FIELD: return emb_diff_field_option(r, cat, p->ctf, value);
    case OPT_PAIR: return emb_diff_pair_option(r, cat, value);
    case OPT_POLICY: return emb_diff_policy_file(r, cat, p->ctf, value);
    case OPT_RULES:
        rules_problems(&ps, NULL);
        return emb_diff_rules_load(r, cat, value, &ps) != 0 ? EMB_EXIT_BAD : EMB_EXIT_OK;
    case OPT_RULE: {
        const char *eq = strchr(value, '=');
        snprintf(line, sizeof line, "rule %.*s %s", eq ? (int)(eq - value) : 0, value,
                 eq ? eq + 1 : "");
        return apply_rule_line(r, cat, "--rule", eq ? line : "rule");
    }
    case OPT_COMPARE:
        snprintf(line, sizeof line, "compare %s", value);
        return apply_rule_line(r, cat, "--compare", line);
    case OPT_MARGIN_PCT:
        return emb_cli_option_double(CMD, "margin-pct", value, 0, DBL_MAX,
                                     "a number that is not negative", &r->margin_pct);
    case OPT_MARGIN_US:
        return emb_cli_option_double(CMD, "margin-us", value, 0, DBL_MAX,
                                     "a number that is not negative", &r->margin_us);
    case OPT_QUANTILE:
        return emb_cli_option_double(CMD, "quantile", value, 0, nextafter(50.0, 0.0),
                                     "a percentage below 50", &r->quantile_pct);
    case OPT_REPEAT: return count_option("repeat", value, &r->repeat);
    case OPT_LINES: return count_option("context-lines", value, &r->context_lines);
    default: return EMB_EXIT_OK;
    }
}

/* Options are applied in order, after the catalogue is known: a second pass. Returns
 * EMB_EXIT_OK, -1 after --help, or EMB_EXIT_BAD. */
static int parse_args(int argc, char **argv, struct args *a, struct emb_diff_rules *r,
                      const struct emb_catalog **cat, struct emb_catalog **own,
                      struct emb_command_input in[2])
{
    struct parse p = {a, r, NULL, false};
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, output_option, &p);
    if (rc != 0)
        return rc;
    static const char two[] = "two capture files (or CTF trace directories), please: GOOD BAD";
    if (emb_cli_operands(&COMMAND, argc, 2, two, two) != 0)
        return EMB_EXIT_BAD;
    a->files[0] = argv[optind];
    a->files[1] = argv[optind + 1];
    for (int s = 0; s < 2; s++)
        if (emb_command_input_map(CMD, a->files[s], 0, &in[s]) != 0)
            return EMB_EXIT_BAD;
    if (!(*cat = emb_catalog_choose_named(CMD, a->catalog, a->files[0], in[0].bytes, in[0].size,
                                         own)))
        return EMB_EXIT_BAD;
    p.catalog = *cat;
    p.ctf = in[0].ctf;
    /* A CTF trace stamps no build identity: two runs claim no configuration to refuse. */
    r->same_build = r->same_build || (in[0].ctf && in[1].ctf);
    return emb_cli_parse_options(&COMMAND, argc, argv, rules_option, &p);
}

static int write_html(void *arg, FILE *f)
{
    return emb_diff_write_html(arg, f);
}

int emb_cmd_diff(int argc, char **argv)
{
    struct args a = {0};
    struct emb_diff_rules rules;
    emb_diff_rules_default(&rules);
    const struct emb_catalog *cat = NULL;
    struct emb_catalog *own = NULL;
    struct emb_capture *cap[2] = {NULL, NULL};
    struct emb_diff *d = NULL;
    struct emb_command_input in[2] = {{0}, {0}};
    int rc = parse_args(argc, argv, &a, &rules, &cat, &own, in);
    if (rc != EMB_EXIT_OK) {
        rc = rc < 0 ? EMB_EXIT_OK : rc;
        goto out;
    }
    rc = EMB_EXIT_BAD;
    for (int s = 0; s < 2; s++) {
        struct emb_progress *progress = NULL;
        /* No record kept: the comparison packs each event as the cursor reads it. */
        struct emb_capture_options opt = {.catalog = cat, .name = a.files[s], .no_merge = true,
                                          .stream = true, .mapped = in[s].mapped,
                                          .progress = emb_progress_decoding, .progress_arg = &progress};
        cap[s] = emb_capture_decode(in[s].bytes, in[s].size, &opt);
        emb_progress_finish(progress);
        long long off;
        const char *msg;
        if (!cap[s]) {
            emb_cli_error_at(CMD, a.files[s], -1, "out of memory");
            goto out;
        }
        if (emb_capture_failed(cap[s], &off, &msg)) {
            emb_cli_error_at(CMD, a.files[s], off, "%s", msg);
            goto out;
        }
        /* The checks read the whole file: its pages are given back, read again only where
         * the comparison looks at a payload. */
        if (in[s].mapped)
            emb_input_map_release(in[s].bytes, in[s].size);
    }
    if (rules.anchor_event == NULL && emb_catalog_find(cat, "frame_start") == NULL) {
        char could[600];
        emb_diff_anchor_candidates(cap[0], could, sizeof could);
        emb_cli_error(CMD, "these traces have no frame_start event: choose an epoch marker with "
                      "--anchor EVENT[.FIELD]%s%s", could[0] ? "; could serve: " : "", could);
        goto out;
    }
    struct emb_problems problems;
    emb_problems_init_callback(&problems, NULL, emb_cli_problem, (void *)CMD);
    if (!(d = emb_diff_run(cap[0], cap[1], &rules, &problems)))
        goto out;
    int wrc = a.json ? emb_diff_write_json(d, stdout) : emb_diff_write_text(d, stdout);
    if (fflush(stdout) != 0 || wrc != 0) {
        emb_cli_error_at(CMD, "stdout", -1, "write error: %s", strerror(errno));
        goto out;
    }
    if (a.html && emb_cli_write_output(CMD, a.html, write_html, d) != 0)
        goto out;
    rc = emb_diff_significant(d) ? EMB_EXIT_FINDINGS : EMB_EXIT_OK;
out:
    emb_diff_free(d);
    emb_capture_free(cap[0]);
    emb_capture_free(cap[1]);
    emb_command_input_free(&in[0]);
    emb_command_input_free(&in[1]);
    emb_diff_rules_free(&rules);
    if (own)
        emb_catalog_free(own);
    return rc;
}
