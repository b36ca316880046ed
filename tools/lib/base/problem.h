/* The one way a host decoder reports a problem with its input: a problem names the file,
 * the byte offset, how bad it is and what is wrong, and goes to a sink the caller chose:
 * a list kept for later (inspect, diff, JSON outputs) or a function called at once (a
 * live capture). Decoders never print; the command that called them decides how a problem
 * reaches the user and what exit status it makes. */
#ifndef EMB_BASE_PROBLEM_H
#define EMB_BASE_PROBLEM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum emb_severity {
    EMB_NOTE,    /* worth knowing, nothing lost (a clock adjustment, a skipped extension) */
    EMB_WARNING, /* data lost or doubtful, the rest decoded (a torn packet, a bad frame) */
    EMB_ERROR,   /* the input cannot be decoded (bad magic, a truncated header) */
};

struct emb_problem {
    const char *file;  /* the input, or NULL when it has no name */
    long long offset;  /* byte offset in the input, -1 when none */
    enum emb_severity severity;
    const char *message;
};

/* Where problems go. Zero-initialised (or emb_problems_init) it keeps a list; with
 * `report` set it calls that instead and keeps only the counts. */
struct emb_problems {
    void (*report)(void *arg, const struct emb_problem *p);
    void *arg;
    const char *file; /* stamped on every problem reported here */
    size_t max_kept;  /* the list keeps at most this many (0: EMB_PROBLEMS_KEPT) */
    struct emb_problem *items;
    size_t n, cap;
    size_t count[EMB_ERROR + 1]; /* every problem reported, kept or not */
};

#define EMB_PROBLEMS_KEPT 1000u

void emb_problems_init(struct emb_problems *ps, const char *file);
void emb_problems_init_callback(struct emb_problems *ps, const char *file,
                                void (*report)(void *arg, const struct emb_problem *p),
                                void *arg);
void emb_problems_free(struct emb_problems *ps);

/* Reports one problem; offset < 0 for none. Never fails: when memory runs out the problem
 * is counted but not kept. A NULL sink takes nothing (a caller that wants no messages).
 * emb_vreport() takes the arguments as a va_list, for a decoder's own reporting function;
 * the _in forms report about another input than the sink's own (file NULL: about none,
 * such as a network address the message names itself). */
void emb_report(struct emb_problems *ps, enum emb_severity severity, long long offset,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void emb_vreport(struct emb_problems *ps, enum emb_severity severity, long long offset,
                 const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
void emb_report_in(struct emb_problems *ps, const char *file, enum emb_severity severity,
                   long long offset, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void emb_vreport_in(struct emb_problems *ps, const char *file, enum emb_severity severity,
                    long long offset, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Problems reported of at least this severity (kept or not). */
size_t emb_problems_at_least(const struct emb_problems *ps, enum emb_severity severity);
/* Problems reported but not kept (past max_kept, or without memory). */
size_t emb_problems_dropped(const struct emb_problems *ps);

const char *emb_severity_name(enum emb_severity s); /* "note", "warning", "error" */

#endif /* EMB_BASE_PROBLEM_H */
