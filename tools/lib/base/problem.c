/* The problem sink (problem.h). */
#define _POSIX_C_SOURCE 200809L

#include "problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

void emb_problems_init(struct emb_problems *ps, const char *file)
{
    memset(ps, 0, sizeof *ps);
    ps->file = file;
}

void emb_problems_init_callback(struct emb_problems *ps, const char *file,
                                void (*report)(void *arg, const struct emb_problem *p),
                                void *arg)
{
    emb_problems_init(ps, file);
    ps->report = report;
    ps->arg = arg;
}

void emb_problems_free(struct emb_problems *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free((char *)ps->items[i].message);
    free(ps->items);
    ps->items = NULL;
    ps->n = ps->cap = 0;
}

static void keep(struct emb_problems *ps, const struct emb_problem *p)
{
    size_t max = ps->max_kept ? ps->max_kept : EMB_PROBLEMS_KEPT;
    if (ps->n >= max)
        return;
    struct emb_problem *items = emb_array_grow(ps->items, &ps->cap, ps->n + 1, sizeof *items);
    char *message = strdup(p->message);
    if (items == NULL || message == NULL) {
        free(message);
        return;
    }
    ps->items = items;
    ps->items[ps->n] = *p;
    ps->items[ps->n++].message = message;
}

void emb_vreport_in(struct emb_problems *ps, const char *file, enum emb_severity severity,
                    long long offset, const char *fmt, va_list ap)
{
    if (ps == NULL)
        return;
    if (severity > EMB_ERROR)
        severity = EMB_ERROR;
    ps->count[severity]++;
    char message[512];
    vsnprintf(message, sizeof message, fmt, ap);
    struct emb_problem p = {file, offset < 0 ? -1 : offset, severity, message};
    if (ps->report != NULL)
        ps->report(ps->arg, &p);
    else
        keep(ps, &p);
}

void emb_vreport(struct emb_problems *ps, enum emb_severity severity, long long offset,
                 const char *fmt, va_list ap)
{
    emb_vreport_in(ps, ps != NULL ? ps->file : NULL, severity, offset, fmt, ap);
}

void emb_report(struct emb_problems *ps, enum emb_severity severity, long long offset,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(ps, severity, offset, fmt, ap);
    va_end(ap);
}

void emb_report_in(struct emb_problems *ps, const char *file, enum emb_severity severity,
                   long long offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport_in(ps, file, severity, offset, fmt, ap);
    va_end(ap);
}

size_t emb_problems_at_least(const struct emb_problems *ps, enum emb_severity severity)
{
    size_t n = 0;
    for (unsigned s = severity; s <= EMB_ERROR; s++)
        n += ps->count[s];
    return n;
}

size_t emb_problems_dropped(const struct emb_problems *ps)
{
    return ps->report != NULL ? 0 : emb_problems_at_least(ps, EMB_NOTE) - ps->n;
}

const char *emb_severity_name(enum emb_severity s)
{
    return s == EMB_ERROR ? "error" : s == EMB_WARNING ? "warning" : "note";
}
