/* The crash report (crash_report.h). */
#define _POSIX_C_SOURCE 200809L

#include "crash_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "stream_kind.h"
#include "capture.h"
#include "catalog.h"
#include "text.h"

/* A sealed capture: its crash section becomes the input. 0, or -1 after reporting why. */
static int open_capture(struct emb_crash_input *in, struct emb_problems *ps)
{
    const struct emb_catalog *cat = emb_catalog_builtin();
    /* Only the crash section is read: the trace is not decoded, its catalogue not needed. */
    struct emb_capture_options opt = {.catalog = cat, .name = ps->file, .skip_trace = true,
                                      .ignore_checksum = true};
    in->capture = cat ? emb_capture_decode(in->data, in->size, &opt) : NULL;
    long long off;
    const char *msg;
    if (in->capture == NULL) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return -1;
    }
    if (emb_capture_failed(in->capture, &off, &msg)) {
        emb_report(ps, EMB_ERROR, off, "%s", msg);
        return -1;
    }
    const struct emb_capture_section *s = emb_capture_section(in->capture, EMB_CAP_SEC_CRASH);
    if (s == NULL) {
        emb_report(ps, EMB_ERROR, -1, "the capture holds no crash section (the target sent "
                                      "no crash record, and none was given with --crash)");
        return -1;
    }
    in->base = (long long)s->offset;
    in->data = s->data;
    in->size = (size_t)s->length;
    return 0;
}

int emb_crash_input_open(struct emb_crash_input *in, const uint8_t *bytes, size_t size,
                         struct emb_problems *ps)
{
    memset(in, 0, sizeof *in);
    in->data = bytes;
    in->size = size;
    if (emb_stream_kind(bytes, size) == EMB_STREAM_CAPTURE && open_capture(in, ps) != 0)
        return -1;
    /* A retained region may hold mini-records and no record: its missing magic is no
     * problem then, so the record's problems wait until the mini-records are counted. */
    struct emb_problems held;
    emb_problems_init(&held, ps->file);
    in->has_record = emb_crash_decode_at(in->data, in->size, in->base, &in->record, &held) == 0;
    bool magic_missing = !in->has_record &&
                         (in->size == 0 || (in->size >= EMB_CRASH_PREFIX_SIZE &&
                                            emb_get_le32(in->data) != EMB_CRASH_MAGIC));
    in->nminis = emb_crash_mini_scan(in->data, in->size, in->has_record ? in->record.length : 0,
                                     in->minis, EMB_CRASH_REPORT_MINIS);
    bool refused = !in->has_record && (!magic_missing || in->nminis == 0 || in->capture);
    for (size_t i = 0; refused && i < held.n; i++)
        emb_report(ps, held.items[i].severity, held.items[i].offset, "%s", held.items[i].message);
    emb_problems_free(&held);
    return refused ? -1 : 0;
}

void emb_crash_input_close(struct emb_crash_input *in)
{
    emb_capture_free(in->capture);
    in->capture = NULL;
}

char *emb_crash_report_hex(const uint8_t *b, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 3 <= len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%02x", b[i]);
    return buf;
}

/* The record's build id against the ELF's (v2 keeps a prefix), and its registers'
 * machine against the ELF's. 0, or -1 after reporting the refusal. */
static int check_identity(struct emb_crash_report *rep, struct emb_problems *ps)
{
    const uint8_t *id;
    size_t n = emb_elf_build_id(rep->elf, &id);
    char a[80], b[160];
    const struct emb_crash_record *r = rep->record;
    long long base = rep->input->base;
    rep->elf_has_build_id = n != 0;
    if (n != 0) {
        size_t cmp = n < r->build_id_len ? n : r->build_id_len;
        bool rest_zero = true;
        for (size_t i = cmp; i < r->build_id_len; i++)
            rest_zero &= r->build_id[i] == 0;
        if (memcmp(id, r->build_id, cmp) != 0 || !rest_zero) {
            emb_report(ps, EMB_ERROR,
                       base + (r->version == 1 ? EMB_CRASH_V1_OFF_BUILD_ID : EMB_CRASH_V2_OFF_BUILD_ID),
                       "the record comes from another build: record build id %s, %s has %s",
                       emb_crash_report_hex(r->build_id, r->build_id_len, a, sizeof a),
                       emb_elf_path(rep->elf), emb_crash_report_hex(id, n, b, sizeof b));
            return -1;
        }
    }
    if (rep->view.elf_machine && rep->view.elf_machine != emb_elf_machine(rep->elf)) {
        emb_report(ps, EMB_ERROR, base + EMB_CRASH_V1_FIXED_SIZE,
                   "the record's registers are for ELF machine %u (%s), %s is machine %u",
                   rep->view.elf_machine, rep->view.name, emb_elf_path(rep->elf),
                   emb_elf_machine(rep->elf));
        return -1;
    }
    return 0;
}

uint64_t emb_crash_report_elf_address(const struct emb_crash_report *rep, uint64_t runtime)
{
    const struct emb_crash_view *v = &rep->view;
    if (v->native && runtime >= v->bias && emb_elf_in_text(rep->elf, runtime - v->bias))
        return runtime - v->bias;
    return runtime;
}

void emb_crash_report_code(const struct emb_crash_report *rep, uint64_t runtime, bool partial,
                           struct emb_crash_code *out)
{
    memset(out, 0, sizeof *out);
    out->runtime = runtime;
    out->address = emb_crash_report_elf_address(rep, runtime);
    if (partial)
        out->status = EMB_CRASH_CODE_PARTIAL;
    else if (!emb_elf_in_text(rep->elf, out->address))
        out->status = EMB_CRASH_CODE_OUTSIDE;
    else if ((out->nframes = emb_elf_symbolize(rep->elf, out->address, out->frames,
                                               EMB_CRASH_REPORT_FRAMES, &out->offset)) == 0)
        out->status = EMB_CRASH_CODE_NO_SYMBOL;
    else
        out->status = EMB_CRASH_CODE_SYMBOLISED;
}

/* The outermost function holding `runtime` (inlined frames unwrapped); "" when unknown. */
static const char *function_of(const struct emb_crash_report *rep, uint64_t runtime,
                               struct emb_crash_code *scratch)
{
    emb_crash_report_code(rep, runtime, false, scratch);
    return scratch->nframes ? scratch->frames[scratch->nframes - 1].function : "";
}

/* The link register at a fault is the caller only in a function that has not reused it.
 * The call frame information says where the faulting function saved the return address,
 * so the unwound chain is believed first; without one, the link register only when it
 * points into another function's code. The native layouts name their caller themselves. */
static void choose_caller(struct emb_crash_report *rep)
{
    struct emb_crash_view *v = &rep->view;
    if (v->arch != EMB_CRASH_ARCH_CORTEX_M)
        return;
    uint64_t calls[EMB_CRASH_REPORT_CALLS];
    rep->ncalls = emb_crash_unwind(rep->record, v, rep->elf, calls, EMB_CRASH_REPORT_CALLS);
    for (size_t i = 0; i < rep->ncalls; i++)
        emb_crash_report_code(rep, calls[i], false, &rep->calls[i]);
    if (rep->ncalls > 0) {
        v->ra = calls[0];
        v->ra_source = EMB_CRASH_RA_CFI;
        return;
    }
    const char *pc_fn = function_of(rep, v->pc, &rep->caller);
    char pc_name[sizeof rep->caller.frames[0].function];
    snprintf(pc_name, sizeof pc_name, "%s", pc_fn);
    const char *lr_fn = function_of(rep, v->lr & ~(uint64_t)1, &rep->caller);
    if (v->lr != 0 && lr_fn[0] != '\0' && strcmp(lr_fn, pc_name) != 0) {
        v->ra = v->lr & ~(uint64_t)1;
        v->ra_source = EMB_CRASH_RA_REGISTER;
    } else {
        v->ra_source = EMB_CRASH_RA_NONE;
        rep->caller_unknown = true;
    }
}

static bool is_event(const struct emb_trace_event *e, const char *name)
{
    return e->type == EMB_TREC_EVENT && !strcmp(e->ev->name, name);
}

static uint32_t field_u32(const struct emb_trace_event *e, size_t i)
{
    return (uint32_t)emb_catalog_field_get_uint(&e->ev->fields[i], e->payload);
}

unsigned emb_crash_report_irq(const struct emb_trace_event *e)
{
    return (uint16_t)field_u32(e, 0);
}

/* The newest obj_init naming `handle` (threads: type 0 and the thread's index; objects:
 * any other type). */
static const char *obj_name(const struct emb_crash_report *rep, uint32_t handle, bool thread, char *buf,
                            size_t len)
{
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(rep->trace, &n);
    for (size_t i = n; i-- > 0;) {
        if (!is_event(ev[i], "obj_init") || field_u32(ev[i], 1) != handle ||
            (emb_catalog_field_get_uint(&ev[i]->ev->fields[0], ev[i]->payload) == 0) != thread)
            continue;
        const char *text;
        size_t tl = emb_trace_field_chars(&ev[i]->ev->fields[2], ev[i]->payload, &text);
        emb_text_escape(buf, len, text, tl); /* the target's bytes, bound for a terminal */
        return buf;
    }
    return NULL;
}

const char *emb_crash_report_handle_name(const struct emb_crash_report *rep, uint32_t handle,
                                         char *buf, size_t len)
{
    return obj_name(rep, handle, false, buf, len);
}

/* A field's value with what the report knows of it: the code at a pc, an object's name,
 * a thread's name. */
static void field_text(const struct emb_crash_report *rep, const struct emb_catalog_field *f,
                       const uint8_t *payload, char *v, size_t len)
{
    char name[64], thread[4 * 64]; /* the sizes the text has always cut them to */
    emb_trace_field_text(f, payload, v, len);
    size_t l = strlen(v);
    if (f->meaning == EMB_CAT_MEANING_PC) {
        uint64_t pc = emb_catalog_field_get_uint(f, payload);
        emb_elf_describe(rep->elf, emb_crash_report_elf_address(rep, pc), v, len);
    } else if (f->meaning == EMB_CAT_MEANING_HANDLE &&
               emb_crash_report_handle_name(rep, (uint32_t)emb_catalog_field_get_uint(f, payload),
                                            name, sizeof name)) {
        snprintf(v + l, len - l, " \"%s\"", name);
    } else if (f->meaning == EMB_CAT_MEANING_THREAD) {
        /* A kernel's thread as its obj_init names it, else the context of that id. */
        uint32_t id = (uint32_t)emb_catalog_field_get_uint(f, payload);
        const char *cn = obj_name(rep, id, true, name, sizeof name);
        if (cn == NULL)
            cn = emb_crash_report_context_name(rep, (uint16_t)id);
        if (cn)
            snprintf(v + l, len - l, " (%s)", emb_text_escape_str(thread, sizeof thread, cn));
    }
}

void emb_crash_report_event_fields(const struct emb_crash_report *rep,
                                   const struct emb_trace_event *e, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (e->type != EMB_TREC_EVENT) {
        snprintf(buf, len, e->type == EMB_TREC_UNKNOWN ? "unknown event id %u"
                           : e->type == EMB_TREC_DISCARDED ? "%u events discarded"
                                                           : "%u packets lost",
                 e->type == EMB_TREC_UNKNOWN ? e->id : e->count);
        return;
    }
    for (size_t k = 0; k < e->ev->nfields && used < len; k++) {
        const struct emb_catalog_field *f = &e->ev->fields[k];
        char v[320];
        field_text(rep, f, e->payload, v, sizeof v);
        int w = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "", f->name, v);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* A mutex given back by its context is no longer held. */
static void unlock(struct emb_crash_flight *f, uint16_t ctx, uint32_t mutex)
{
    for (size_t k = f->nlocks; k-- > 0;)
        if (f->locks[k].context_id == ctx && f->locks[k].mutex == mutex) {
            memmove(&f->locks[k], &f->locks[k + 1], (f->nlocks - k - 1) * sizeof f->locks[0]);
            f->nlocks--;
            return;
        }
}

#define CPU_IRQ_NEST 16

/* What runs on one context as the events go by: the thread its last switch ran (-1 none
 * seen) and the interrupt handlers running on it, innermost last. */
struct cpu_now {
    int32_t thread;
    uint16_t irqs[CPU_IRQ_NEST];
    unsigned nirq;
};

/* Whoever on the context recorded `e`: the event's kind says whether a handler did (its
 * number from the irq_enter events, unknown when the recorder lost them). */
static void holder_of(const struct cpu_now *c, const struct emb_trace_event *e, struct emb_crash_lock *l)
{
    if (e->kind != EMB_EVT_KIND_THREAD) {
        l->holder = EMB_CRASH_HOLDER_IRQ;
        l->holder_id = c != NULL && c->nirq > 0 && c->nirq <= CPU_IRQ_NEST ? c->irqs[c->nirq - 1]
                                                                         : EMB_CRASH_IRQ_UNKNOWN;
    } else if (c != NULL && c->thread >= 0) {
        l->holder = EMB_CRASH_HOLDER_THREAD;
        l->holder_id = (uint32_t)c->thread;
    } else {
        l->holder = EMB_CRASH_HOLDER_CONTEXT;
        l->holder_id = e->context_id;
    }
}

static void follow_cpu(struct cpu_now *c, const struct emb_trace_event *e)
{
    if (c == NULL)
        return;
    if (is_event(e, "switch")) {
        uint32_t to = field_u32(e, 1);
        c->thread = to == 0xFFFFu ? -1 : (int32_t)to;
    } else if (is_event(e, "irq_enter")) {
        if (c->nirq < CPU_IRQ_NEST)
            c->irqs[c->nirq] = (uint16_t)emb_crash_report_irq(e);
        c->nirq++;
    } else if (is_event(e, "irq_exit") && c->nirq > 0) {
        c->nirq--;
    }
}

/* One event's part in the last switches, the last interrupt and the locks held. */
static void follow(struct emb_crash_flight *f, struct cpu_now *cpu, const struct emb_trace_event *e)
{
    if (is_event(e, "switch")) {
        if (f->nswitches == EMB_CRASH_REPORT_SWITCHES)
            memmove(f->switches, f->switches + 1, (f->nswitches - 1) * sizeof f->switches[0]);
        else
            f->nswitches++;
        f->switches[f->nswitches - 1] = e;
    } else if (is_event(e, "irq_enter")) {
        f->irq_enter = e;
        f->irq_exit = NULL;
    } else if (is_event(e, "irq_exit") && f->irq_enter && e->ctx == f->irq_enter->ctx &&
               emb_crash_report_irq(e) == emb_crash_report_irq(f->irq_enter)) {
        f->irq_exit = e;
    } else if (is_event(e, "mutex_lock") && f->nlocks < EMB_CRASH_REPORT_LOCKS) {
        struct emb_crash_lock *l = &f->locks[f->nlocks++];
        *l = (struct emb_crash_lock){.mutex = field_u32(e, 0), .context_id = e->context_id, .ts = e->ts};
        holder_of(cpu, e, l);
    } else if (is_event(e, "mutex_unlock")) {
        unlock(f, e->context_id, field_u32(e, 0));
    }
    follow_cpu(cpu, e);
}

/* The reference time, and what the flight recorder's events leave standing. */
static void analyse_flight(struct emb_crash_report *rep, size_t events)
{
    struct emb_crash_flight *f = &rep->flight;
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(rep->trace, &n);
    uint64_t hz = rep->clock_hz;
    uint64_t last = n ? ev[n - 1]->ts : 0;
    uint64_t uptime = rep->record->uptime_ticks;
    f->reference_is_fault = rep->record->version == 1 && uptime >= last &&
                            uptime - last <= 60u * (hz ? hz : 1u);
    f->reference_ts = f->reference_is_fault ? uptime : last;
    size_t nctx = emb_trace_context_count(rep->trace);
    struct cpu_now *cpu = calloc(nctx ? nctx : 1u, sizeof *cpu); /* NULL: holders unknown */
    for (size_t c = 0; cpu != NULL && c < nctx; c++)
        cpu[c].thread = -1;
    for (size_t i = 0; i < n; i++)
        follow(f, cpu != NULL && ev[i]->ctx < nctx ? &cpu[ev[i]->ctx] : NULL, ev[i]);
    f->faulting_thread = -1; /* the thread the faulting context ran, outside any handler */
    for (size_t c = 0; cpu != NULL && c < nctx; c++)
        if (emb_trace_context(rep->trace, c)->id == rep->record->thread_index && cpu[c].nirq == 0)
            f->faulting_thread = cpu[c].thread;
    free(cpu);
    if (f->irq_enter)
        f->irq = emb_crash_report_irq(f->irq_enter);
    for (size_t i = 0; i < f->nlocks; i++)
        f->locks[i].named = emb_crash_report_handle_name(rep, f->locks[i].mutex, f->locks[i].name,
                                                         sizeof f->locks[i].name) != NULL;
    f->first_event = events > 0 && events < n ? n - events : 0;
}

/* The flight recorder's problems, and whether the record holds what it announces. */
static void flight_problems(struct emb_crash_report *rep, struct emb_problems *ps)
{
    const struct emb_crash_record *r = rep->record;
    const struct emb_trace_summary *s = emb_trace_summary(rep->trace);
    if (s->packets != r->flight_packets && !s->fatal) {
        emb_report(ps, EMB_WARNING,
                   rep->input->base + (r->version == 1 ? EMB_CRASH_V1_OFF_FLIGHT_COUNT
                                                       : EMB_CRASH_V2_OFF_FLIGHT_COUNT),
                   "the record announces %u flight packets, %" PRIu64 " decode",
                   r->flight_packets, s->packets);
        rep->status = EMB_CRASH_REPORT_FINDINGS; /* CRC-valid, yet not what it says it holds */
    }
    if (s->fatal || s->errors) {
        const struct emb_problems *found = emb_trace_problems(rep->trace);
        for (size_t i = 0; i < found->n; i++)
            emb_report(ps, EMB_ERROR, found->items[i].offset, "flight recorder: %s",
                       found->items[i].message);
        rep->status = EMB_CRASH_REPORT_DAMAGED;
    }
}

static void decode_flight(struct emb_crash_report *rep, const struct emb_crash_report_options *opt,
                          struct emb_problems *ps)
{
    const struct emb_crash_record *r = rep->record;
    if (!r->flight)
        return;
    struct emb_trace_options topt = {
        .catalog = opt->catalog,
        .name = opt->name,
        .base_offset = (uint64_t)rep->input->base + r->flight_offset,
    };
    rep->trace = emb_trace_decode(r->flight, r->flight_len, &topt);
    if (!rep->trace) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        rep->status = EMB_CRASH_REPORT_DAMAGED;
        return;
    }
    flight_problems(rep, ps);
    if (emb_trace_summary(rep->trace)->fatal) {
        emb_trace_free(rep->trace);
        rep->trace = NULL;
        return;
    }
    rep->clock_hz = emb_trace_info(rep->trace)->clock_hz;
    rep->thread_name = emb_crash_report_context_name(rep, r->thread_index);
    analyse_flight(rep, opt->events);
}

struct emb_crash_report *emb_crash_report_build(const struct emb_crash_input *in,
                                                struct emb_elf *elf,
                                                const struct emb_crash_report_options *opt,
                                                struct emb_problems *ps)
{
    struct emb_crash_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        emb_report(ps, EMB_ERROR, -1, "out of memory");
        return NULL;
    }
    rep->input = in;
    rep->elf = elf;
    rep->elf_has_build_id = true;
    if (!in->has_record)
        return rep;
    rep->record = &in->record;
    emb_crash_view(rep->record, &rep->view);
    if (check_identity(rep, ps) != 0) {
        rep->status = EMB_CRASH_REPORT_REFUSED; /* nothing of another build's record is shown */
        return rep;
    }
    choose_caller(rep);
    const struct emb_crash_view *v = &rep->view;
    rep->code_partial = rep->record->addr_lost & EMB_CRASH_V2_LOST_CODE;
    emb_crash_report_code(rep, v->pc, rep->code_partial, &rep->pc);
    if (v->ra_source != EMB_CRASH_RA_NONE)
        emb_crash_report_code(rep, v->ra, rep->code_partial, &rep->caller);
    else
        memset(&rep->caller, 0, sizeof rep->caller); /* choose_caller's scratch */
    decode_flight(rep, opt, ps);
    return rep;
}

void emb_crash_report_free(struct emb_crash_report *rep)
{
    if (rep)
        emb_trace_free(rep->trace);
    free(rep);
}

double emb_crash_report_us(const struct emb_crash_report *rep, uint64_t ts)
{
    uint64_t hz = rep->clock_hz, ref = rep->flight.reference_ts;
    if (!hz)
        return 0;
    double d = ts >= ref ? (double)emb_trace_ticks_to_ns(ts - ref, hz)
                         : -(double)emb_trace_ticks_to_ns(ref - ts, hz);
    return d / 1000.0;
}

const char *emb_crash_report_context_name(const struct emb_crash_report *rep, uint16_t id)
{
    long i = rep->trace ? emb_trace_context_index(rep->trace, id) : -1;
    return i >= 0 ? emb_trace_context(rep->trace, (size_t)i)->name : NULL;
}

const char *emb_crash_holder_kind_name(enum emb_crash_holder h)
{
    return h == EMB_CRASH_HOLDER_THREAD ? "thread" : h == EMB_CRASH_HOLDER_IRQ ? "irq" : "context";
}

const char *emb_crash_report_lock_holder(const struct emb_crash_report *rep,
                                         const struct emb_crash_lock *l, char *buf, size_t len)
{
    char name[64];
    if (l->holder == EMB_CRASH_HOLDER_IRQ && l->holder_id == EMB_CRASH_IRQ_UNKNOWN) {
        snprintf(buf, len, "an interrupt handler");
    } else if (l->holder == EMB_CRASH_HOLDER_IRQ) {
        snprintf(buf, len, "irq %" PRIu32, l->holder_id);
    } else if (l->holder == EMB_CRASH_HOLDER_THREAD) {
        const char *tn = obj_name(rep, l->holder_id, true, name, sizeof name);
        if (tn != NULL)
            snprintf(buf, len, "thread %s", tn);
        else
            snprintf(buf, len, "thread %" PRIu32, l->holder_id);
    } else {
        const char *cn = emb_crash_report_context_name(rep, l->context_id);
        emb_text_escape_str(buf, len, cn ? cn : "?");
    }
    return buf;
}
