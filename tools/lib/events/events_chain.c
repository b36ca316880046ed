#define _POSIX_C_SOURCE 200809L
#include "events_chain.h"

#include "buffer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct emb_svc_event *call_event(const struct emb_events_call *c,
                                                   const struct emb_svc_event *ev)
{
    return &ev[c->request != EMB_EVENTS_NONE ? c->request : c->outcome];
}

static int push(struct emb_events_calls *out, size_t *cap, struct emb_events_call c)
{
    struct emb_events_call *grown = emb_array_grow(out->call, cap, out->count + 1, sizeof c);
    if (grown == NULL)
        return -1;
    out->call = grown;
    out->call[out->count++] = c;
    return 0;
}

int emb_events_calls_build(const struct emb_svc_event *ev, size_t n, struct emb_events_calls *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0, open_count = 0;
    size_t *open = malloc((n ? n : 1) * sizeof *open); /* outstanding calls, oldest first */
    out->of_event = malloc((n ? n : 1) * sizeof *out->of_event);
    if (open == NULL || out->of_event == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const struct emb_svc_event *e = &ev[i];
        if (e->kind == EMB_SVC_KIND_REQUEST) {
            struct emb_events_call c = {.request = i, .outcome = EMB_EVENTS_NONE,
                                        .parent = EMB_EVENTS_NONE, .kind = EMB_SVC_KIND_REQUEST};
            /* The most recent outstanding call into this caller is the one it serves. */
            for (size_t k = open_count; k-- > 0;) {
                const struct emb_svc_event *pe = call_event(&out->call[open[k]], ev);
                if (strcmp(pe->peer, e->caller) == 0) {
                    c.parent = open[k];
                    c.depth = out->call[open[k]].depth + 1;
                    break;
                }
            }
            if (push(out, &cap, c) != 0)
                goto fail;
            out->of_event[i] = out->count - 1;
            open[open_count++] = out->count - 1;
            continue;
        }
        size_t match = EMB_EVENTS_NONE, at = 0;
        for (size_t k = open_count; k-- > 0;) {
            const struct emb_svc_event *re = call_event(&out->call[open[k]], ev);
            if (re->op == e->op && strcmp(re->caller, e->caller) == 0 &&
                strcmp(re->peer, e->peer) == 0) {
                match = open[k];
                at = k;
                break;
            }
        }
        if (match == EMB_EVENTS_NONE) {
            /* Its REQUEST left the ring (or never arrived): a call known by its end only. */
            struct emb_events_call c = {.request = EMB_EVENTS_NONE, .outcome = i,
                                        .parent = EMB_EVENTS_NONE, .kind = e->kind};
            if (push(out, &cap, c) != 0)
                goto fail;
            out->of_event[i] = out->count - 1;
            continue;
        }
        out->call[match].outcome = i;
        out->call[match].kind = e->kind;
        out->of_event[i] = match;
        memmove(&open[at], &open[at + 1], (open_count - at - 1) * sizeof *open);
        open_count--;
    }
    free(open);
    return 0;
fail:
    free(open);
    emb_events_calls_free(out);
    return -1;
}

void emb_events_calls_free(struct emb_events_calls *c)
{
    free(c->call);
    free(c->of_event);
    memset(c, 0, sizeof *c);
}

struct op_name {
    char peer[EMB_SVC_PEER_LEN + 1];
    uint8_t op;
    char *name;
};

struct emb_events_ops {
    struct op_name *v;
    size_t count;
};

void emb_events_ops_free(struct emb_events_ops *ops)
{
    if (ops == NULL)
        return;
    for (size_t i = 0; i < ops->count; i++)
        free(ops->v[i].name);
    free(ops->v);
    free(ops);
}

/* Parses one non-comment line "peer op name"; returns the column of a problem, or -1. */
static long parse_op_line(char *line, struct op_name *out, const char **why)
{
    const char *sep = " \t\r";
    char *save = NULL;
    char *peer = strtok_r(line, sep, &save);
    char *op = peer ? strtok_r(NULL, sep, &save) : NULL;
    char *name = op ? strtok_r(NULL, sep, &save) : NULL;
    char *extra = name ? strtok_r(NULL, sep, &save) : NULL;
    if (name == NULL) {
        *why = "expected PEER OPCODE NAME";
        return 0;
    }
    if (extra != NULL) {
        *why = "unexpected text after the name";
        return extra - line;
    }
    if (strlen(peer) > EMB_SVC_PEER_LEN) {
        *why = "peer name longer than 12 bytes";
        return peer - line;
    }
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(op, &end, 0);
    if (errno != 0 || *end != '\0' || v > 255 || op[0] == '-') {
        *why = "opcode is not a number from 0 to 255";
        return op - line;
    }
    snprintf(out->peer, sizeof out->peer, "%s", peer);
    out->op = (uint8_t)v;
    out->name = strdup(name);
    if (out->name == NULL) {
        *why = "out of memory";
        return 0;
    }
    return -1;
}

/* Adds the line at `line_at` (number lineno) unless it is blank or a comment. false, with
 * the problem reported, when it is not a line of the ops file. */
static bool take_line(struct emb_events_ops *ops, size_t *cap, char *line, size_t len,
                      long lineno, long line_at, struct emb_problems *ps)
{
    if (len != strlen(line)) {
        emb_report(ps, EMB_ERROR, line_at, "line %ld (byte %ld): NUL byte in text", lineno,
                   line_at);
        return false;
    }
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (line[strspn(line, " \t\r")] == '\0')
        return true;
    struct op_name *grown = emb_array_grow(ops->v, cap, ops->count + 1, sizeof *grown);
    if (grown == NULL) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return false;
    }
    ops->v = grown;
    const char *why = NULL;
    long col = parse_op_line(line, &ops->v[ops->count], &why);
    if (col >= 0) {
        emb_report(ps, EMB_ERROR, line_at + col, "line %ld (byte %ld): %s", lineno,
                   line_at + col, why);
        return false;
    }
    ops->count++;
    return true;
}

struct emb_events_ops *emb_events_ops_load(const char *path, struct emb_problems *ps)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        emb_report(ps, EMB_ERROR, -1, "%s", strerror(errno));
        return NULL;
    }
    struct emb_events_ops *ops = calloc(1, sizeof *ops);
    char *line = NULL;
    size_t linecap = 0, cap = 0;
    long offset = 0, lineno = 0;
    ssize_t len;
    bool failed = ops == NULL;
    if (failed)
        emb_report(ps, EMB_ERROR, -1, "out of memory");
    while (!failed && (len = getline(&line, &linecap, f)) >= 0) {
        failed = !take_line(ops, &cap, line, (size_t)len, ++lineno, offset, ps);
        offset += len;
    }
    free(line);
    fclose(f);
    if (failed) {
        emb_events_ops_free(ops);
        return NULL;
    }
    return ops;
}

const char *emb_events_op_name(const struct emb_events_ops *ops, const char *peer, uint8_t op)
{
    if (ops == NULL)
        return NULL;
    for (size_t i = 0; i < ops->count; i++)
        if (ops->v[i].op == op && strcmp(ops->v[i].peer, peer) == 0)
            return ops->v[i].name;
    return NULL;
}

const char *emb_events_target(const struct emb_events_ops *ops, const char *peer, uint8_t op,
                              char *buf, size_t cap)
{
    const char *name = emb_events_op_name(ops, peer, op);
    if (name)
        snprintf(buf, cap, "%s.%s", peer, name);
    else
        snprintf(buf, cap, "%s.%u", peer, (unsigned)op);
    return buf;
}

const char *emb_events_chain(const struct emb_events_calls *calls, const struct emb_svc_event *ev,
                             const struct emb_events_ops *ops, size_t c, char *buf, size_t cap)
{
    size_t path[64];
    size_t depth = 0;
    for (size_t k = c; k != EMB_EVENTS_NONE && depth < 64; k = calls->call[k].parent)
        path[depth++] = k;
    size_t used = 0;
    buf[0] = '\0';
    const struct emb_svc_event *root = call_event(&calls->call[path[depth - 1]], ev);
    used += (size_t)snprintf(buf, cap, "%s", root->caller);
    for (size_t i = depth; i-- > 0 && used < cap;) {
        const struct emb_svc_event *e = call_event(&calls->call[path[i]], ev);
        char target[64];
        emb_events_target(ops, e->peer, e->op, target, sizeof target);
        used += (size_t)snprintf(buf + used, cap - used, " -> %s", target);
    }
    return buf;
}
