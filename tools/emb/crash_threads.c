#include "crash_threads.h"

#include <inttypes.h>
#include <string.h>

#include "text.h"
#include "trace_threads.h"

static const char *lock_name(const struct emb_crash_report *rep, uint32_t handle, char *buf, size_t len)
{
    if (emb_crash_report_handle_name(rep, handle, buf, len) == NULL)
        snprintf(buf, len, "0x%08" PRIx32, handle);
    return buf;
}

/* "woken at T by irq N (notify_set bits=B at T)" or by a thread, or "". */
static void woken_text(const struct emb_crash_report *rep, const struct emb_trace_threads *th,
                       const struct emb_trace_thread *t, char *buf, size_t len)
{
    buf[0] = '\0';
    if (t->woken_by == NULL)
        return;
    size_t used = (size_t)snprintf(buf, len, "last woken at %+.3f us by ", emb_crash_report_us(rep, t->woken_by->ts));
    uint32_t waker = (uint32_t)emb_catalog_field_get_uint(&t->woken_by->ev->fields[1], t->woken_by->payload);
    const struct emb_trace_thread *w = emb_trace_thread_find(th, waker);
    if (t->woken_in_irq >= 0)
        used += (size_t)snprintf(buf + used, len - used, "irq %" PRId32, t->woken_in_irq);
    else if (w != NULL)
        used += (size_t)snprintf(buf + used, len - used, "%s", w->name[0] ? w->name : "a thread");
    else
        used += (size_t)snprintf(buf + used, len - used, "a timeout");
    if (t->notified_by != NULL && t->notified_by->ts <= t->woken_by->ts && used < len) {
        char bits[32];
        emb_trace_field_text(&t->notified_by->ev->fields[2], t->notified_by->payload, bits, sizeof bits);
        snprintf(buf + used, len - used, ": notify_set bits=%s", bits);
    }
}

static void held_text(const struct emb_crash_report *rep, const struct emb_trace_thread *t, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->nheld && used < len; i++) {
        char name[64];
        used += (size_t)snprintf(buf + used, len - used, "%sholds %s since %+.3f us", i ? ", " : "",
                                 lock_name(rep, t->held[i], name, sizeof name),
                                 emb_crash_report_us(rep, t->held_since[i]));
    }
}

#define STANDING_MAX 8u

/* The chains standing at the fault, their mutexes named as the report names them. */
static size_t standing_chains(const struct emb_crash_report *rep, const struct emb_trace_threads *th,
                              struct emb_trace_pi_chain *c)
{
    size_t n = emb_trace_pi_standing(th, c, STANDING_MAX);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < c[i].links; k++)
            if (emb_crash_report_handle_name(rep, c[i].mutex[k], c[i].mutex_name[k], sizeof c[i].mutex_name[k]) == NULL)
                c[i].mutex_name[k][0] = '\0';
    return n;
}

/* The chain whose last holder is the faulting thread: the threads it keeps waiting. */
static const struct emb_trace_pi_chain *blocked_by(const struct emb_trace_pi_chain *c, size_t n,
                                                   const struct emb_trace_thread *faulting)
{
    for (size_t i = 0; faulting != NULL && i < n; i++)
        if (c[i].thread[c[i].links] == faulting->index)
            return &c[i];
    return NULL;
}

static void print_chains(FILE *out, const struct emb_trace_threads *th, const struct emb_trace_pi_chain *c,
                         size_t n, const struct emb_trace_thread *faulting)
{
    if (n == 0)
        return;
    const char *bold = emb_color_code(out, EMB_C_BOLD), *reset = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "\n%sPriority inheritance at the fault%s (waiter -> mutex -> holder ...)\n", bold, reset);
    for (size_t i = 0; i < n; i++) {
        char text[512];
        fprintf(out, "  %zu link%s  %s%s\n", c[i].links, c[i].links == 1 ? " " : "s",
                emb_trace_pi_chain_text(th, &c[i], text, sizeof text),
                faulting != NULL && c[i].thread[c[i].links] == faulting->index ? "  (the faulting thread holds the last)" : "");
    }
}

void emb_crash_print_threads(FILE *out, const struct emb_crash_report *rep)
{
    struct emb_trace_threads th;
    if (rep->trace == NULL || emb_trace_threads_compute(rep->trace, &th) != 0 || th.n == 0) {
        if (rep->trace != NULL)
            emb_trace_threads_free(&th);
        return;
    }
    const char *bold = emb_color_code(out, EMB_C_BOLD), *reset = emb_color_code(out, EMB_C_RESET);
    fprintf(out, "\n%sThreads at the fault%s (as the flight recorder leaves them)\n", bold, reset);
    const struct emb_trace_thread *faulting = th.running >= 0 ? emb_trace_thread_find(&th, (uint32_t)th.running) : NULL;
    for (size_t i = 0; i < th.n; i++) {
        const struct emb_trace_thread *t = &th.items[i];
        char held[256], woken[160], wait[96] = "";
        held_text(rep, t, held, sizeof held);
        woken_text(rep, &th, t, woken, sizeof woken);
        if (t->state == EMB_TRACE_THREAD_BLOCKED) {
            char name[64] = "";
            if (t->wait_object && emb_crash_report_handle_name(rep, t->wait_object, name, sizeof name) == NULL)
                name[0] = '\0';
            snprintf(wait, sizeof wait, " on %s%s%s", t->wait_reason, name[0] ? " " : "", name);
        }
        fprintf(out, "  %3" PRIu32 " %-12s %s%s%s%s%s%s\n", t->index, t->name[0] ? t->name : "?",
                emb_trace_thread_state_name(t->state), wait, held[0] ? "; " : "", held,
                woken[0] ? "; " : "", woken);
    }
    struct emb_trace_pi_chain chains[STANDING_MAX];
    size_t nchains = standing_chains(rep, &th, chains);
    print_chains(out, &th, chains, nchains, faulting);
    if (faulting != NULL) {
        char held[256], woken[160], chain[512] = "";
        held_text(rep, faulting, held, sizeof held);
        woken_text(rep, &th, faulting, woken, sizeof woken);
        const struct emb_trace_pi_chain *b = blocked_by(chains, nchains, faulting);
        if (b != NULL)
            emb_trace_pi_chain_text(&th, b, chain, sizeof chain);
        fprintf(out, "\n%sSummary%s: %s faulted%s%s%s%s%s%s\n", bold, reset, faulting->name[0] ? faulting->name : "?",
                held[0] ? " while it " : "", held, woken[0] ? ", " : "", woken,
                chain[0] ? "; it keeps waiting " : "", chain);
    }
    emb_trace_threads_free(&th);
}

void emb_crash_json_threads(struct emb_json *j, const struct emb_crash_report *rep)
{
    struct emb_trace_threads th;
    if (rep->trace == NULL || emb_trace_threads_compute(rep->trace, &th) != 0)
        return;
    if (th.n == 0) { /* no kernel's switches: nothing to say */
        emb_trace_threads_free(&th);
        return;
    }
    emb_json_begin_array(j, "threads");
    for (size_t i = 0; i < th.n; i++) {
        const struct emb_trace_thread *t = &th.items[i];
        char buf[256];
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "index", t->index);
        emb_json_string(j, "name", t->name);
        emb_json_string(j, "state", emb_trace_thread_state_name(t->state));
        emb_json_bool(j, "faulting", th.running >= 0 && t->index == (uint32_t)th.running);
        emb_json_string(j, "wait_reason", t->wait_reason);
        emb_json_begin_array(j, "holds");
        for (size_t k = 0; k < t->nheld; k++)
            emb_json_string(j, NULL, lock_name(rep, t->held[k], buf, sizeof buf));
        emb_json_end_array(j);
        if (t->woken_in_irq >= 0)
            emb_json_int(j, "woken_in_irq", t->woken_in_irq);
        if (t->notified_by != NULL)
            emb_json_uint(j, "notified_bits",
                          emb_catalog_field_get_uint(&t->notified_by->ev->fields[2], t->notified_by->payload));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    struct emb_trace_pi_chain chains[STANDING_MAX];
    size_t nchains = standing_chains(rep, &th, chains);
    emb_json_begin_array(j, "pi_chains");
    for (size_t i = 0; i < nchains; i++) {
        char text[512];
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "links", chains[i].links);
        emb_json_begin_array(j, "threads");
        for (size_t k = 0; k <= chains[i].links; k++)
            emb_json_uint(j, NULL, chains[i].thread[k]);
        emb_json_end_array(j);
        emb_json_begin_array(j, "mutexes");
        for (size_t k = 0; k < chains[i].links; k++)
            emb_json_string(j, NULL, chains[i].mutex_name[k]);
        emb_json_end_array(j);
        emb_json_string(j, "text", emb_trace_pi_chain_text(&th, &chains[i], text, sizeof text));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_trace_threads_free(&th);
}
