/* The fleet's report as a self-contained HTML page (fleet_report.h). */
#define _POSIX_C_SOURCE 200809L
#include "fleet_report.h"

#include "fleet_query.h"
#include "html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REFUSED_SHOWN 50u
#define VERSIONS_SHOWN 32u

/* The versions every bucket names, in order, each with a colour of the chart. */
struct palette {
    char names[VERSIONS_SHOWN][32];
    size_t n;
};

static const char *const COLOURS[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NCOLOURS (sizeof COLOURS / sizeof COLOURS[0])

static size_t colour_of(struct palette *p, const char *version)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->names[i], version) == 0)
            return i % NCOLOURS;
    if (p->n < VERSIONS_SHOWN)
        snprintf(p->names[p->n++], sizeof p->names[0], "%s", version);
    return (p->n - 1) % NCOLOURS;
}

static void utc(FILE *out, int64_t t)
{
    char buf[64];
    time_t tt = (time_t)t;
    struct tm tm;
    if (gmtime_r(&tt, &tm) && strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm))
        fputs(buf, out);
}

static void head(FILE *out, const struct emb_fleet_buckets *b)
{
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<title>emb fleet report</title>\n<style>\n"
            "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}\n"
            "h1{font-size:20px}h2{font-size:16px;margin-top:24px}\n"
            "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;text-align:left}\n"
            "th{background:#f0f0f0}tr:nth-child(even){background:#fafafa}\n"
            ".sig{font-family:monospace}.n{text-align:right}\n"
            "pre{background:#f6f6f6;border-left:3px solid #1f77b4;padding:8px;font-size:12px}\n"
            ".refused{color:#b00}.note{color:#555;font-size:13px}\n</style></head><body>\n"
            "<h1>Fleet report</h1>\n<p class=\"note\">%" PRIu64 " crash records in %zu buckets; %" PRIu64
            " files refused.</p>\n", b->records, b->n, b->refused);
}

static void ranking(FILE *out, const struct emb_fleet_buckets *b)
{
    fprintf(out, "<h2>Buckets, most records first</h2>\n<table id=\"buckets\"><tr><th>#</th><th>bucket</th>"
            "<th>signature</th><th>records</th><th>devices</th><th>first seen</th><th>last seen</th>"
            "<th>versions</th></tr>\n");
    for (size_t i = 0; i < b->n; i++) {
        const struct emb_fleet_bucket *k = &b->items[i];
        fprintf(out, "<tr><td class=\"n\">%zu</td><td class=\"sig\"><a href=\"#b%s\">%s</a></td>"
                "<td class=\"sig\">", i + 1, k->id, k->id);
        emb_html_text(out, k->signature);
        fprintf(out, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 "</td><td>", k->count,
                k->devices);
        utc(out, k->first_seen);
        fprintf(out, "</td><td>");
        utc(out, k->last_seen);
        fprintf(out, "</td><td>");
        for (size_t v = 0; v < k->nversions; v++) {
            fprintf(out, "%s", v ? ", " : "");
            emb_html_text(out, k->versions[v].version);
            fprintf(out, ": %" PRIu64, k->versions[v].count);
        }
        fprintf(out, "</td></tr>\n");
    }
    fprintf(out, "</table>\n");
}

/* One bar a bucket, its length its count, split by firmware version. */
static void chart(FILE *out, const struct emb_fleet_buckets *b)
{
    const unsigned label_w = 130, bar_w = 600, row_h = 22, top = 10;
    uint64_t most = b->n ? b->items[0].count : 1;
    struct palette p = {0};
    unsigned h = top + row_h * (unsigned)b->n + 40;
    fprintf(out, "<h2>Records per firmware version</h2>\n<svg id=\"versions\" xmlns=\"http://www.w3.org/2000/svg\""
            " width=\"%u\" height=\"%u\" font-family=\"sans-serif\" font-size=\"12\">\n",
            label_w + bar_w + 80, h);
    for (size_t i = 0; i < b->n; i++) {
        const struct emb_fleet_bucket *k = &b->items[i];
        unsigned y = top + row_h * (unsigned)i;
        double x = label_w;
        fprintf(out, "<text x=\"0\" y=\"%u\" font-family=\"monospace\">%s</text>\n", y + 14, k->id);
        for (size_t v = 0; v < k->nversions; v++) {
            double w = (double)bar_w * (double)k->versions[v].count / (double)most;
            fprintf(out, "<rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%u\" fill=\"%s\"><title>", x, y + 2, w,
                    row_h - 6, COLOURS[colour_of(&p, k->versions[v].version)]);
            emb_html_text(out, k->versions[v].version);
            fprintf(out, ": %" PRIu64 "</title></rect>\n", k->versions[v].count);
            x += w;
        }
        fprintf(out, "<text x=\"%.1f\" y=\"%u\">%" PRIu64 "</text>\n", x + 6, y + 14, k->count);
    }
    unsigned lx = label_w, ly = top + row_h * (unsigned)b->n + 16;
    for (size_t v = 0; v < p.n; v++, lx += 110) {
        fprintf(out, "<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%u\" y=\"%u\">",
                lx, ly, COLOURS[v % NCOLOURS], lx + 16, ly + 11);
        emb_html_text(out, p.names[v]);
        fprintf(out, "</text>\n");
    }
    fprintf(out, "</svg>\n");
}

static void example(FILE *out, const struct emb_fleet_bucket *k, const struct emb_fleet_example *e)
{
    fprintf(out, "<h2 id=\"b%s\">Bucket %s</h2>\n<p class=\"sig\">", k->id, k->id);
    emb_html_text(out, k->signature);
    fprintf(out, "</p>\n<pre>newest example  %s (%s)\ndevice          ", e->hash, e->kind);
    emb_html_text(out, e->device);
    fprintf(out, "\nfirmware        ");
    emb_html_text(out, e->fw_version[0] ? e->fw_version : "?");
    fprintf(out, ", build %s\nfault           %s, code %u, at address 0x%" PRIx64 "; reset %s\n"
            "pc              0x%" PRIx64 " in thread ", e->build_id[0] ? e->build_id : "?", e->fault_class,
            e->fault_code, e->fault_address, e->reset_reason, e->pc);
    emb_html_text(out, e->thread);
    fprintf(out, "\nchain%s\n", e->symbolised ? "" : "           not symbolised: no ELF of this build in the store");
    for (const char *line = e->chain; *line;) {
        size_t n = strcspn(line, "\n");
        char one[512];
        snprintf(one, sizeof one, "  %.*s\n", (int)n, line);
        emb_html_text(out, one);
        line += n + (line[n] == '\n');
    }
    if (e->flight[0]) {
        fprintf(out, "flight recorder ");
        emb_html_text(out, e->flight);
        fprintf(out, "\n");
    }
    fprintf(out, "</pre>\n");
}

static int refused(FILE *out, struct emb_fleet_db *db)
{
    struct emb_fleet_example *items = malloc(REFUSED_SHOWN * sizeof *items);
    long n = items ? emb_fleet_refused_query(db, items, REFUSED_SHOWN) : -1;
    if (n > 0) {
        fprintf(out, "<h2>Refused files</h2>\n<table id=\"refused\"><tr><th>file</th><th>device</th>"
                "<th>kind</th><th>reason</th></tr>\n");
        for (long i = 0; i < n; i++) {
            fprintf(out, "<tr><td>");
            emb_html_text(out, items[i].source);
            fprintf(out, "</td><td>");
            emb_html_text(out, items[i].device);
            fprintf(out, "</td><td>%s</td><td class=\"refused\">", items[i].kind);
            emb_html_text(out, items[i].reason);
            fprintf(out, "</td></tr>\n");
        }
        fprintf(out, "</table>\n");
    }
    free(items);
    return n < 0 ? -1 : 0;
}

int emb_fleet_report_html(struct emb_fleet_db *db, FILE *out)
{
    struct emb_fleet_buckets b;
    if (emb_fleet_buckets_query(db, &b) != 0)
        return -1;
    head(out, &b);
    ranking(out, &b);
    chart(out, &b);
    int rc = 0;
    struct emb_fleet_example *e = malloc(sizeof *e);
    for (size_t i = 0; e && rc == 0 && i < b.n; i++) {
        int found = emb_fleet_bucket_example(db, b.items[i].id, e);
        if (found < 0)
            rc = -1;
        else if (found)
            example(out, &b.items[i], e);
    }
    if (rc == 0)
        rc = refused(out, db);
    fprintf(out, "</body></html>\n");
    free(e);
    emb_fleet_buckets_free(&b);
    return e ? rc : -1;
}
