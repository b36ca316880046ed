/* `emb crash`: a crash record (v1 or v2, and any mini-records with it) made readable with
 * the firmware's ELF: the faulting line and its inlined callers, the return address, the
 * stack, the registers decoded for the architecture, and the flight recorder's last
 * events (switches, the interrupt that ran, the locks held). */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include "crash_report.h"
#include "crash_threads.h"
#include "elf_image.h"
#include "input_file.h"
#include "trace_decode.h"
#include "trace_write.h"

#include <emb/trace_format.h>
#include <emb/wire.h>

static const char *const CMD = "emb crash";

#define MAX_INPUT (16u << 20) /* a record or a retained region, or a capture holding one */


struct args {
    const char *elf;
    const char *file;
    const char *catalog;
    uint64_t events;
    bool json;
};

enum { OPT_EVENTS = 256, OPT_DEBUGINFOD };
static const struct emb_cli_option OPTIONS[] = {
    EMB_CLI_OPTION_ELF(struct args),
    EMB_CLI_CALL("events", required_argument, OPT_EVENTS),
    EMB_CLI_OPTION_JSON(struct args),
    EMB_CLI_OPTION_CATALOG(struct args),
    EMB_CLI_CALL("debuginfod", no_argument, OPT_DEBUGINFOD),
    EMB_CLI_OPTIONS_END,
};
static const struct emb_cli_command COMMAND = {
    .name = CMD, .help = emb_help_crash, .options = OPTIONS,
    .usage = "emb crash --elf FW [options] RECORD", .operands = 1,
    .no_operands = "no crash record given", .too_many = "one crash record, please"};

static int on_option(void *arg, int opt, char *value)
{
    struct args *a = arg;
    switch (opt) {
    case OPT_EVENTS: return emb_cli_option_u64(CMD, "events", value, 0, SIZE_MAX, "a count", &a->events);
    case OPT_DEBUGINFOD: emb_elf_allow_debuginfod(true); return 0;
    default: return 0;
    }
}

static int parse_args(int argc, char **argv, struct args *a)
{
    int rc = emb_cli_parse_options(&COMMAND, argc, argv, on_option, a);
    if (rc != 0)
        return rc;
    a->file = argv[optind];
    if (!a->elf) {
        emb_cli_error(CMD, "--elf FW is needed: the image the record came from");
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

/* Target-derived text made safe for a terminal, in one of a few rotating buffers (a
 * line prints at most two). */
static const char *esc(const char *text)
{
    static char buf[4][4 * 64];
    static unsigned next;
    return emb_text_escape_str(buf[next++ % 4u], sizeof buf[0], text);
}

/* A context's name escaped for a terminal, or NULL. */
static const char *context_name(const struct emb_crash_report *rep, uint16_t id)
{
    const char *name = emb_crash_report_context_name(rep, id);
    return name ? esc(name) : NULL;
}

static const char *color(enum emb_color k)
{
    return emb_color_code(stdout, k);
}

static void print_frames(const struct emb_crash_report *rep, const char *label,
                         const struct emb_crash_code *code, const char *note)
{
    printf("%s%-10s%s 0x%08" PRIx64, color(EMB_C_BOLD), label, color(EMB_C_RESET), code->address);
    if (rep->view.native && code->address != code->runtime)
        printf(" (runtime 0x%" PRIx64 ")", code->runtime);
    if (code->status == EMB_CRASH_CODE_OUTSIDE) {
        printf("  %soutside %s%s%s\n", color(EMB_C_YELLOW), emb_elf_path(rep->elf),
               rep->view.native ? " (a shared library?)" : "", color(EMB_C_RESET));
        return;
    }
    if (code->nframes == 0) {
        printf("  (no symbol)%s%s\n", note ? "  " : "", note ? note : "");
        return;
    }
    const struct emb_elf_frame *f = code->frames;
    size_t n = code->nframes;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            printf("%-10s   %*s", "", 8, "");
        printf("  %s%s%s", color(EMB_C_GREEN), f[i].function[0] ? f[i].function : "??",
               color(EMB_C_RESET));
        if (i == n - 1 && code->offset)
            printf("+0x%" PRIx64, code->offset);
        if (f[i].line)
            printf("  %s%s:%d%s", color(EMB_C_CYAN), f[i].file, f[i].line, color(EMB_C_RESET));
        if (f[i].inlined)
            printf("  %s(inlined into %s)%s", color(EMB_C_DIM), f[i + 1 < n ? i + 1 : i].function,
                   color(EMB_C_RESET));
        if (i == 0 && note)
            printf("  %s%s%s", color(EMB_C_DIM), note, color(EMB_C_RESET));
        printf("\n");
    }
}

static void print_event(const struct emb_crash_report *rep, const struct emb_trace_event *e)
{
    char fields[1024];
    emb_crash_report_event_fields(rep, e, fields, sizeof fields);
    const struct emb_trace_context *ctx = emb_trace_context(rep->trace, e->ctx);
    const char *kind = e->kind == EMB_EVT_KIND_ISR ? "isr" : e->kind == EMB_EVT_KIND_FAULT ? "FAULT" : "";
    printf("  %+14.3f us  %-12s %-5s %s%-16s%s %s\n", emb_crash_report_us(rep, e->ts), esc(ctx->name),
           kind, color(EMB_C_BOLD), e->type == EMB_TREC_EVENT ? e->ev->name : "(loss)",
           color(EMB_C_RESET), fields);
}

/* The faulting thread: the one a kernel ran on the record's context, or that context
 * itself where each context is a thread. */
static bool holds_faulting(const struct emb_crash_report *rep, const struct emb_crash_lock *l)
{
    if (l->holder == EMB_CRASH_HOLDER_THREAD)
        return l->context_id == rep->record->thread_index &&
               (int64_t)l->holder_id == rep->flight.faulting_thread;
    return l->holder == EMB_CRASH_HOLDER_CONTEXT && l->context_id == rep->record->thread_index;
}

static void print_interrupt_and_locks(const struct emb_crash_report *rep)
{
    const struct emb_crash_flight *f = &rep->flight;
    printf("\n%sLast interrupt%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!f->irq_enter) {
        printf("  (none in the flight recorder)\n");
    } else {
        const struct emb_trace_context *ctx = emb_trace_context(rep->trace, f->irq_enter->ctx);
        double at = emb_crash_report_us(rep, f->irq_enter->ts);
        printf("  irq %u on %s at %+.3f us", f->irq, esc(ctx->name), at);
        if (f->irq_exit)
            printf(", ran %.3f us\n", emb_crash_report_us(rep, f->irq_exit->ts) - at);
        else
            printf(", still running\n");
    }
    printf("\n%sLocks held%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!f->nlocks)
        printf("  (none taken in the flight recorder and still held)\n");
    for (size_t i = 0; i < f->nlocks; i++) {
        const struct emb_crash_lock *l = &f->locks[i];
        const char *cn = context_name(rep, l->context_id);
        char holder[160];
        emb_crash_report_lock_holder(rep, l, holder, sizeof holder);
        printf("  mutex 0x%" PRIx32 "%s%s%s held by %s", l->mutex, l->named ? " \"" : "",
               l->named ? l->name : "", l->named ? "\"" : "", holder);
        if (l->holder != EMB_CRASH_HOLDER_CONTEXT)
            printf(" on %s", cn ? cn : "?");
        printf("%s since %+.3f us\n", holds_faulting(rep, l) ? " (the faulting thread)" : "",
               emb_crash_report_us(rep, l->ts));
    }
}

static void print_flight(const struct emb_crash_report *rep)
{
    const struct emb_crash_flight *f = &rep->flight;
    const struct emb_trace_summary *s = emb_trace_summary(rep->trace);
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(rep->trace, &n);
    printf("\n%sFlight recorder%s: %" PRIu64 " events in %" PRIu64 " packets from %zu contexts; "
           "times are relative to %s\n",
           color(EMB_C_BOLD), color(EMB_C_RESET), s->events, s->packets,
           emb_trace_context_count(rep->trace), f->reference_is_fault ? "the fault" : "the last event");
    if (s->discarded || s->lost_packets)
        printf("  %s%" PRIu64 " events discarded, %" PRIu64 " packets lost before these%s\n",
               color(EMB_C_YELLOW), s->discarded, s->lost_packets, color(EMB_C_RESET));
    printf("\n%sLast switches%s\n", color(EMB_C_BOLD), color(EMB_C_RESET));
    if (!f->nswitches)
        printf("  (none in the flight recorder)\n");
    for (size_t i = 0; i < f->nswitches; i++)
        print_event(rep, f->switches[i]);
    print_interrupt_and_locks(rep);
    emb_crash_print_threads(stdout, rep);
    printf("\n%sLast events%s (%zu of %zu)\n", color(EMB_C_BOLD), color(EMB_C_RESET),
           n - f->first_event, n);
    for (size_t i = f->first_event; i < n; i++)
        print_event(rep, ev[i]);
}

static void print_mini(const struct emb_crash_report *rep)
{
    const struct emb_crash_input *in = rep->input;
    if (!in->nminis)
        return;
    printf("\n%sMini-records%s (%zu contained faults, oldest first)\n", color(EMB_C_BOLD),
           color(EMB_C_RESET), in->nminis);
    for (size_t i = 0; i < in->nminis && i < EMB_CRASH_REPORT_MINIS; i++) {
        const struct emb_crash_mini *m = &in->minis[i];
        char d[256];
        printf("  #%-4" PRIu32 " partition %u thread %u.%u  %s code %u  pc %s  at tick %" PRIu64 "\n",
               m->sequence, m->partition, m->thread, m->generation,
               emb_crash_fault_class_name(m->fault_class), m->fault_code,
               emb_elf_describe(rep->elf, m->pc, d, sizeof d), m->uptime_ticks);
    }
}

/* Cycles as time, when the flight recorder gives the clock. */
static void print_cycles(const struct emb_crash_report *rep, uint32_t cycles)
{
    printf("%" PRIu32 " cycles", cycles);
    if (rep->clock_hz)
        printf(" (%.1f us)", (double)emb_trace_ticks_to_ns(cycles, rep->clock_hz) / 1000.0);
}

/* What raised the fault: the monitor and its numbers, the signal, or the class's code. */
static void print_cause(const struct emb_crash_report *rep)
{
    const struct emb_crash_record *r = rep->record;
    const struct emb_crash_view *v = &rep->view;
    char name[32];
    if (r->fault_class == EMB_FAULT_MONITOR) {
        printf(" %s: an interval of ", emb_crash_monitor_name(r->fault_code, name, sizeof name));
        print_cycles(rep, r->monitor_interval);
        printf(" crossed the threshold of ");
        print_cycles(rep, r->monitor_threshold);
        printf("\n");
        return;
    }
    if (v->native && v->signo == 0)
        printf(", raised by the library (no signal), code %u", r->fault_code);
    else if (v->native)
        printf(", %s, %s", emb_crash_signal_name(v->signo), emb_crash_si_code_text(v->signo, v->si_code));
    else
        printf(", code %u", r->fault_code);
    printf(", at address 0x%" PRIx64 "%s\n", v->fault_address,
           r->addr_lost & EMB_CRASH_V2_LOST_DATA ? " (partial)" : "");
}

/* A v2 record whose 16-bit fields could not hold an address says so; such an address is
 * shown as the bits it kept, never symbolised as if it were whole. */
static void print_partial(const char *label, uint64_t value)
{
    printf("%s%-10s%s 0x%08" PRIx64 "  %sPARTIAL: only the low bits the 16-bit field kept; "
           "not symbolised%s\n",
           color(EMB_C_BOLD), label, color(EMB_C_RESET), value, color(EMB_C_YELLOW),
           color(EMB_C_RESET));
}

/* The record's identity, the fault, the thread and the reset. */
static void print_header(const struct emb_crash_report *rep)
{
    const struct emb_crash_record *r = rep->record;
    char hex[80];
    printf("%sCrash record v%u%s, %u bytes, CRC %08" PRIx32 " ok\n", color(EMB_C_BOLD), r->version,
           color(EMB_C_RESET), r->length, r->crc);
    printf("%-10s %s%s\n", "build id", emb_crash_report_hex(r->build_id, r->build_id_len, hex, sizeof hex),
           r->version == 2 ? " (prefix)" : "");
    if (r->fw_version[0])
        printf("%-10s %s\n", "firmware", esc(r->fw_version));
    printf("%-10s %s%s%s", "fault", color(EMB_C_RED), emb_crash_fault_class_name(r->fault_class),
           color(EMB_C_RESET));
    print_cause(rep);
    if (r->addr_lost)
        printf("%-10s %s%s%s%sdid not fit the v2 record's 16-bit fields: their high bits are lost%s\n",
               "addresses", color(EMB_C_YELLOW),
               r->addr_lost & EMB_CRASH_V2_LOST_CODE ? "pc or lr " : "",
               r->addr_lost == (EMB_CRASH_V2_LOST_CODE | EMB_CRASH_V2_LOST_DATA) ? "and " : "",
               r->addr_lost & EMB_CRASH_V2_LOST_DATA ? "fault address, sp or stack base " : "",
               color(EMB_C_RESET));
    const char *tname = rep->thread_name ? esc(rep->thread_name) : NULL;
    printf("%-10s %u%s%s%s, generation %u", "thread", r->thread_index, tname ? " \"" : "",
           tname ? tname : "", tname ? "\"" : "", r->thread_generation);
    if (r->version == 1)
        printf(", cpu %u, partition %u", r->cpu_id, r->partition_id);
    printf("\n%-10s %s; uptime %" PRIu64 " ticks", "reset", emb_crash_reset_reason_name(r->reset_reason),
           r->uptime_ticks);
    if (rep->clock_hz)
        printf(" (%.6f s at %" PRIu64 " Hz)", (double)r->uptime_ticks / (double)rep->clock_hz,
               rep->clock_hz);
    printf("\n\n");
}

/* The faulting code and the caller believed, or why none is. */
static void print_code(const struct emb_crash_report *rep)
{
    const struct emb_crash_view *v = &rep->view;
    if (rep->code_partial)
        print_partial("pc", v->pc);
    else
        print_frames(rep, "pc", &rep->pc,
                     rep->record->fault_class == EMB_FAULT_MONITOR ? "(the code that opened the interval)"
                                                                   : NULL);
    if (rep->code_partial) {
        if (v->ra)
            print_partial("caller", v->ra);
    } else if (v->ra_source != EMB_CRASH_RA_NONE) {
        char note[96];
        if (v->ra_source == EMB_CRASH_RA_STACK_SCAN)
            snprintf(note, sizeof note, "(return address found on the stack, sp+%u)", v->ra_offset);
        else if (v->ra_source == EMB_CRASH_RA_CFI)
            snprintf(note, sizeof note, "(unwound with the image's call frame information)");
        else
            snprintf(note, sizeof note, "(link register)");
        print_frames(rep, "caller", &rep->caller, note);
        for (size_t i = 1; i < rep->ncalls; i++)
            print_frames(rep, "called by", &rep->calls[i], NULL);
    } else if (rep->caller_unknown) {
        printf("%s%-10s%s unknown: lr 0x%08" PRIx64 " is no return address into a caller, and the "
               "record keeps no stack to unwind\n", color(EMB_C_BOLD), "caller", color(EMB_C_RESET), v->lr);
    }
}

/* The stack, the status registers decoded, the general registers. */
static void print_registers(const struct emb_crash_report *rep)
{
    const struct emb_crash_view *v = &rep->view;
    printf("%-10s sp 0x%" PRIx64, "stack", v->sp);
    if (v->stack_low && v->stack_size) {
        uint64_t high = v->stack_low + v->stack_size;
        printf(" in 0x%" PRIx64 "..0x%" PRIx64 " (%u KiB)", v->stack_low, high, v->stack_size / 1024);
        if (v->sp >= v->stack_low && v->sp <= high)
            printf(", %" PRIu64 " bytes in use", high - v->sp);
        else
            printf(", %sOUTSIDE the stack%s", color(EMB_C_RED), color(EMB_C_RESET));
    }
    printf("\n");
    struct emb_crash_status_item st[16];
    size_t ns = emb_crash_status_decode(rep->record, v, st, 16);
    for (size_t i = 0; i < ns; i++)
        printf("%-10s %-10s 0x%08" PRIx64 "  %s\n", i == 0 ? "status" : "", st[i].name, st[i].value,
               st[i].text);
    struct emb_crash_reg regs[64];
    size_t nr = emb_crash_registers(rep->record, v, regs, 64);
    for (size_t i = 0; i < nr; i++) {
        if (i % 4 == 0)
            printf("%-10s", i == 0 ? "registers" : "");
        printf(" %-4s %0*" PRIx64, regs[i].name, v->native ? 16 : 8, regs[i].value);
        if (i % 4 == 3 || i + 1 == nr)
            printf("\n");
    }
}

/* The other harts of a RISC-V record: where each was when the record was written. */
static void print_harts(const struct emb_crash_report *rep)
{
    struct emb_crash_hart harts[256];
    size_t n = emb_crash_harts(rep->record, &rep->view, harts, 256);
    static struct emb_crash_code pc; /* large: kept off the stack */
    for (size_t i = 0; i < n; i++) {
        const struct emb_crash_hart *h = &harts[i];
        char label[32];
        snprintf(label, sizeof label, "hart %u", h->hart);
        printf("%-10s %-9s", i == 0 ? "harts" : "", label);
        printf(" %s", emb_crash_hart_state_name(h->state));
        if (h->state == EMB_CRASH_HART_NO_ANSWER) {
            printf("  (where it was is unknown)\n");
            continue;
        }
        emb_crash_report_code(rep, h->pc, false, &pc);
        printf("  pc 0x%08" PRIx32 " %s%s%s  ra 0x%08" PRIx32 "  mcause 0x%08" PRIx32 " %s",
               h->pc, color(EMB_C_GREEN), pc.nframes ? pc.frames[pc.nframes - 1].function : "??",
               color(EMB_C_RESET), h->ra, h->cause, emb_crash_rv_cause_text(h->cause));
        if (h->irq_depth)
            printf(", in %u interrupt%s", h->irq_depth, h->irq_depth == 1 ? "" : "s");
        printf("\n");
    }
}

static void print_text(const struct emb_crash_report *rep, const char *file)
{
    if (!rep->record) {
        printf("%s: no crash record\n", file);
        print_mini(rep);
        return;
    }
    print_header(rep);
    print_code(rep);
    print_registers(rep);
    print_harts(rep);
    if (rep->trace)
        print_flight(rep);
    else
        printf("\n(no flight recorder in this record)\n");
    print_mini(rep);
}

/* The runs of fields the JSON takes as they are (the others are written one by one). */
#define FRAME(member, kind) EMB_JSON_FIELD(struct emb_elf_frame, member, #member, kind)
static const struct emb_json_field FRAME_FIELDS[] = {
    FRAME(function, TEXT), FRAME(file, TEXT), FRAME(line, INT), FRAME(inlined, BOOL),
};
#undef FRAME
#define MINI(member) EMB_JSON_FIELD(struct emb_crash_mini, member, #member, UINT)
static const struct emb_json_field MINI_FIELDS[] = {
    MINI(sequence), MINI(partition), MINI(thread), MINI(generation),
};
#undef MINI

/* A code address and its frames; a partial one (a v2 field that could not hold it) is
 * not symbolised. */
static void json_code(struct emb_json *j, const char *key, const struct emb_crash_code *code)
{
    emb_json_begin_object(j, key);
    emb_json_hex(j, "address", code->address);
    emb_json_hex(j, "runtime", code->runtime);
    emb_json_bool(j, "partial", code->status == EMB_CRASH_CODE_PARTIAL);
    emb_json_bool(j, "in_image", code->status == EMB_CRASH_CODE_SYMBOLISED ||
                                     code->status == EMB_CRASH_CODE_NO_SYMBOL);
    emb_json_uint(j, "offset", code->offset);
    EMB_JSON_FIELD_ARRAY(j, "frames", code->frames, code->nframes, FRAME_FIELDS);
    emb_json_end_object(j);
}

static void json_interrupt_and_locks(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_flight *f = &rep->flight;
    if (f->irq_enter) {
        double at = emb_crash_report_us(rep, f->irq_enter->ts);
        emb_json_begin_object(j, "last_interrupt");
        emb_json_uint(j, "irq", f->irq);
        emb_json_string(j, "context", emb_trace_context(rep->trace, f->irq_enter->ctx)->name);
        emb_json_double(j, "us", at);
        if (f->irq_exit)
            emb_json_double(j, "ran_us", emb_crash_report_us(rep, f->irq_exit->ts) - at);
        else
            emb_json_null(j, "ran_us");
        emb_json_end_object(j);
    } else {
        emb_json_null(j, "last_interrupt");
    }
    emb_json_begin_array(j, "locks_held");
    for (size_t i = 0; i < f->nlocks; i++) {
        const struct emb_crash_lock *l = &f->locks[i];
        const char *cn = context_name(rep, l->context_id);
        emb_json_begin_object(j, NULL);
        emb_json_hex(j, "mutex", l->mutex);
        emb_json_string(j, "name", l->named ? l->name : NULL);
        emb_json_uint(j, "context_id", l->context_id);
        emb_json_string(j, "context", cn ? cn : "");
        char holder[160];
        emb_json_string(j, "holder_kind", emb_crash_holder_kind_name(l->holder));
        if (l->holder == EMB_CRASH_HOLDER_CONTEXT || l->holder_id == EMB_CRASH_IRQ_UNKNOWN)
            emb_json_null(j, "holder_id");
        else
            emb_json_uint(j, "holder_id", l->holder_id);
        emb_json_string(j, "holder", emb_crash_report_lock_holder(rep, l, holder, sizeof holder));
        emb_json_bool(j, "faulting", holds_faulting(rep, l));
        emb_json_double(j, "us", emb_crash_report_us(rep, l->ts));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

/* The events are the trace's own record objects ({"ts", "ns", "context", "event",
 * "fields", ...}); reference_ts gives the time they are relative to in the text. */
static void json_flight(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_flight *f = &rep->flight;
    const struct emb_trace_summary *s = emb_trace_summary(rep->trace);
    size_t n;
    const struct emb_trace_event *const *ev = emb_trace_events(rep->trace, &n);
    emb_json_begin_object(j, "flight");
    emb_json_uint(j, "packets", s->packets);
    emb_json_uint(j, "events", s->events);
    emb_json_uint(j, "discarded", s->discarded);
    emb_json_uint(j, "lost_packets", s->lost_packets);
    emb_json_string(j, "reference", f->reference_is_fault ? "fault" : "last_event");
    emb_json_uint(j, "reference_ts", f->reference_ts);
    emb_trace_json_contexts(j, rep->trace);
    emb_json_begin_array(j, "switches");
    for (size_t i = 0; i < f->nswitches; i++)
        emb_trace_json_record(j, rep->trace, f->switches[i]);
    emb_json_end_array(j);
    json_interrupt_and_locks(j, rep);
    emb_json_begin_array(j, "last_events");
    for (size_t i = f->first_event; i < n; i++)
        emb_trace_json_record(j, rep->trace, ev[i]);
    emb_json_end_array(j);
    emb_json_end_object(j);
}

static void json_record(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_record *r = rep->record;
    char hex[160];
    emb_json_begin_object(j, "record");
    emb_json_uint(j, "version", r->version);
    emb_json_uint(j, "length", r->length);
    emb_json_hex(j, "crc", r->crc);
    emb_json_string(j, "build_id", emb_crash_report_hex(r->build_id, r->build_id_len, hex, sizeof hex));
    emb_json_string(j, "fw_version", r->fw_version);
    emb_json_uint(j, "uptime_ticks", r->uptime_ticks);
    emb_json_string(j, "reset_reason", emb_crash_reset_reason_name(r->reset_reason));
    emb_json_uint(j, "cpu", r->cpu_id);
    emb_json_uint(j, "partition", r->partition_id);
    /* v2: which addresses its 16-bit fields could not hold whole */
    emb_json_bool(j, "code_addresses_partial", r->addr_lost & EMB_CRASH_V2_LOST_CODE);
    emb_json_bool(j, "data_addresses_partial", r->addr_lost & EMB_CRASH_V2_LOST_DATA);
    emb_json_end_object(j);
    const uint8_t *id;
    size_t idn = emb_elf_build_id(rep->elf, &id);
    emb_json_begin_object(j, "elf");
    emb_json_string(j, "path", emb_elf_path(rep->elf));
    emb_json_string(j, "build_id", emb_crash_report_hex(id, idn, hex, sizeof hex));
    emb_json_end_object(j);
}

static void json_fault(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_record *r = rep->record;
    const struct emb_crash_view *v = &rep->view;
    emb_json_begin_object(j, "fault");
    emb_json_string(j, "class", emb_crash_fault_class_name(r->fault_class));
    emb_json_uint(j, "code", r->fault_code);
    if (v->native && v->signo == 0) {
        emb_json_null(j, "signal");
        emb_json_string(j, "cause", "raised by the library");
    } else if (v->native) {
        emb_json_string(j, "signal", emb_crash_signal_name(v->signo));
        emb_json_string(j, "cause", emb_crash_si_code_text(v->signo, v->si_code));
    }
    if (r->fault_class == EMB_FAULT_MONITOR) {
        char name[32];
        emb_json_null(j, "address");
        emb_json_begin_object(j, "monitor");
        emb_json_string(j, "category", emb_crash_monitor_name(r->fault_code, name, sizeof name));
        emb_json_uint(j, "interval_cycles", r->monitor_interval);
        emb_json_uint(j, "threshold_cycles", r->monitor_threshold);
        emb_json_end_object(j);
    } else {
        emb_json_hex(j, "address", v->fault_address);
    }
    emb_json_end_object(j);
    emb_json_begin_object(j, "thread");
    emb_json_uint(j, "index", r->thread_index);
    emb_json_uint(j, "generation", r->thread_generation);
    emb_json_string(j, "name", rep->thread_name ? esc(rep->thread_name) : NULL);
    emb_json_end_object(j);
}

static void json_caller(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_view *v = &rep->view;
    json_code(j, "pc", &rep->pc);
    if (v->ra_source == EMB_CRASH_RA_NONE) {
        emb_json_null(j, "caller");
        return;
    }
    json_code(j, "caller", &rep->caller);
    emb_json_string(j, "caller_source",
                    v->ra_source == EMB_CRASH_RA_STACK_SCAN ? "stack_scan"
                    : v->ra_source == EMB_CRASH_RA_CFI      ? "call_frame_information"
                                                            : "link_register");
    emb_json_begin_array(j, "backtrace");
    for (size_t i = 0; i < rep->ncalls; i++)
        json_code(j, NULL, &rep->calls[i]);
    emb_json_end_array(j);
}

static void json_registers(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_view *v = &rep->view;
    emb_json_begin_object(j, "stack");
    emb_json_hex(j, "sp", v->sp);
    emb_json_hex(j, "low", v->stack_low);
    emb_json_uint(j, "size", v->stack_size);
    emb_json_end_object(j);
    emb_json_begin_array(j, "status");
    struct emb_crash_status_item st[16];
    size_t ns = emb_crash_status_decode(rep->record, v, st, 16);
    for (size_t i = 0; i < ns; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_string(j, "name", st[i].name);
        emb_json_hex(j, "value", st[i].value);
        emb_json_string(j, "text", st[i].text);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
    emb_json_begin_object(j, "registers");
    struct emb_crash_reg regs[64];
    size_t nr = emb_crash_registers(rep->record, v, regs, 64);
    for (size_t i = 0; i < nr; i++)
        emb_json_hex(j, regs[i].name, regs[i].value);
    emb_json_end_object(j);
}

static void json_harts(struct emb_json *j, const struct emb_crash_report *rep)
{
    struct emb_crash_hart harts[256];
    size_t n = emb_crash_harts(rep->record, &rep->view, harts, 256);
    static struct emb_crash_code pc; /* large: kept off the stack */
    emb_json_begin_array(j, "harts");
    for (size_t i = 0; i < n; i++) {
        emb_json_begin_object(j, NULL);
        emb_json_uint(j, "hart", harts[i].hart);
        emb_json_string(j, "state", emb_crash_hart_state_name(harts[i].state));
        emb_json_uint(j, "irq_depth", harts[i].irq_depth);
        if (harts[i].state == EMB_CRASH_HART_NO_ANSWER) {
            emb_json_null(j, "pc");
        } else {
            emb_crash_report_code(rep, harts[i].pc, false, &pc);
            json_code(j, "pc", &pc);
        }
        emb_json_hex(j, "ra", harts[i].ra);
        emb_json_hex(j, "mcause", harts[i].cause);
        emb_json_string(j, "cause", emb_crash_rv_cause_text(harts[i].cause));
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

static void json_minis(struct emb_json *j, const struct emb_crash_report *rep)
{
    const struct emb_crash_input *in = rep->input;
    static struct emb_crash_code pc; /* large: kept off the stack */
    emb_json_begin_array(j, "mini_records");
    for (size_t i = 0; i < in->nminis && i < EMB_CRASH_REPORT_MINIS; i++) {
        const struct emb_crash_mini *m = &in->minis[i];
        emb_json_begin_object(j, NULL);
        EMB_JSON_FIELDS(j, m, MINI_FIELDS);
        emb_json_string(j, "class", emb_crash_fault_class_name(m->fault_class));
        emb_json_uint(j, "code", m->fault_code);
        emb_crash_report_code(rep, m->pc, false, &pc);
        json_code(j, "pc", &pc);
        emb_json_uint(j, "uptime_ticks", m->uptime_ticks);
        emb_json_end_object(j);
    }
    emb_json_end_array(j);
}

static void print_json(const struct emb_crash_report *rep, const char *file)
{
    struct emb_json j;
    emb_json_begin_document(&j, stdout);
    j.flat_depth = 4;
    emb_json_string(&j, "file", file);
    if (rep->record) {
        json_record(&j, rep);
        json_fault(&j, rep);
        emb_json_string(&j, "arch", rep->view.name);
        json_caller(&j, rep);
        json_registers(&j, rep);
        if (rep->view.arch == EMB_CRASH_ARCH_RISCV)
            json_harts(&j, rep);
        if (rep->trace) {
            json_flight(&j, rep);
            emb_crash_json_threads(&j, rep);
        } else
            emb_json_null(&j, "flight");
    } else {
        emb_json_null(&j, "record");
    }
    json_minis(&j, rep);
    emb_json_end_object(&j);
    emb_json_end(&j);
}

/* Builds the report and shows it (unless refused). Returns the exit status. */
static int show(const struct args *a, const struct emb_crash_input *in, struct emb_elf *elf,
                const struct emb_catalog *cat, struct emb_problems *ps)
{
    struct emb_crash_report_options opt = {.catalog = cat, .name = a->file,
                                           .events = (size_t)a->events};
    struct emb_crash_report *rep = emb_crash_report_build(in, elf, &opt, ps);
    if (rep && rep->record && !rep->elf_has_build_id)
        fprintf(stderr, "%s: %s has no build id: cannot check that the record comes from it\n",
                CMD, emb_elf_path(elf));
    emb_cli_problems(CMD, ps);
    if (!rep)
        return EMB_EXIT_BAD;
    int rc = rep->status == EMB_CRASH_REPORT_OK         ? EMB_EXIT_OK
             : rep->status == EMB_CRASH_REPORT_FINDINGS ? EMB_EXIT_FINDINGS
                                                        : EMB_EXIT_BAD;
    if (rep->status != EMB_CRASH_REPORT_REFUSED) {
        if (a->json)
            print_json(rep, a->file);
        else
            print_text(rep, a->file);
    }
    emb_crash_report_free(rep);
    return rc;
}

/* The catalogue of the flight recorder: --catalog, else the one the input names or carries
 * (a capture's catalog section, checked), unless the flight recorder itself names another
 * this tool knows: a record written by firmware of the built-in catalogue decodes so even
 * in a capture whose trace was recorded with a user's catalogue. NULL after saying why. */
static const struct emb_catalog *flight_catalog(const struct args *a, const struct emb_crash_input *in,
                                                const uint8_t *bytes, size_t size,
                                                struct emb_catalog **own)
{
    const struct emb_catalog *cat = emb_catalog_choose_named(CMD, a->catalog, a->file, bytes, size, own);
    const struct emb_crash_record *r = in->has_record ? &in->record : NULL;
    if (r == NULL || r->flight == NULL || r->flight_len < EMB_TSF_OFF_CATALOG + 4u)
        return cat;
    return emb_catalog_for_part(a->catalog, cat, emb_get_le32(r->flight + EMB_TSF_OFF_CATALOG));
}

int emb_cmd_crash(int argc, char **argv)
{
    struct args a = {.events = 24};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    char msg[512];
    size_t size;
    uint8_t *bytes = emb_input_read_max(a.file, MAX_INPUT, &size, msg, sizeof msg);
    if (!bytes) {
        emb_cli_error_at(CMD, a.file, -1, "%s", msg);
        return EMB_EXIT_BAD;
    }
    struct emb_problems ps;
    emb_problems_init(&ps, a.file);
    ps.max_kept = SIZE_MAX; /* every problem is shown */
    struct emb_crash_input *in = malloc(sizeof *in);
    struct emb_elf *elf = NULL;
    struct emb_catalog *own = NULL;
    const struct emb_catalog *cat = NULL;
    rc = EMB_EXIT_BAD;
    if (!in) {
        emb_cli_error_at(CMD, a.file, -1, "out of memory");
    } else if (emb_crash_input_open(in, bytes, size, &ps) != 0) {
        emb_cli_problems(CMD, &ps);
    } else if (!(elf = emb_elf_open(a.elf, msg, sizeof msg))) {
        emb_cli_error(CMD, "%s", msg);
    } else if ((cat = flight_catalog(&a, in, bytes, size, &own)) != NULL) {
        rc = show(&a, in, elf, cat, &ps);
    }
    fflush(stdout);
    if (in)
        emb_crash_input_close(in);
    free(in);
    emb_catalog_free(own);
    emb_elf_close(elf);
    emb_problems_free(&ps);
    free(bytes);
    return rc;
}
