/* libFuzzer target: the `emb diff --rules` file parser (tools/lib/diff/rules.c) over the built-in
 * catalogue, then the --anchor parser on the file's first line. Every parsed rule must
 * name a real rule, event and field. Seeds: examples/console/diff.rules and the rules
 * files of docs/diff.md and tests/emb/test_emb_diff.sh. */
#include "fuzz_file.h"

#include "catalog.h"
#include "diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct emb_catalog *cat;
    if (!cat && !(cat = emb_catalog_builtin()))
        abort();
    struct emb_diff_rules r;
    emb_diff_rules_default(&r);
    struct emb_problems ps;
    emb_problems_init(&ps, NULL);
    if (emb_diff_rules_load(&r, cat, emb_fuzz_file(data, size), &ps) == 0) {
        for (size_t i = 0; i < r.nswitches; i++)
            if (r.switches[i].rule >= EMB_DIFF_NRULES ||
                !memchr(r.switches[i].context, 0, sizeof r.switches[i].context))
                abort();
    } else if (emb_problems_at_least(&ps, EMB_ERROR) == 0) {
        abort(); /* a refused file says why */
    }
    emb_problems_free(&ps);
    char line[128];
    size_t n = 0;
    while (n < size && n < sizeof line - 1 && data[n] != '\n' && data[n] != 0) {
        line[n] = (char)data[n];
        n++;
    }
    line[n] = 0;
    emb_diff_rules_anchor(&r, cat, line, &ps);
    emb_problems_free(&ps);
    emb_diff_rules_free(&r);
    return 0;
}
