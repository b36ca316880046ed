/* The crash report: what a crash record says once it is read with the firmware's ELF.
 * Which caller to believe (the unwound chain, the link register, the native port's
 * stack scan), each code address symbolised or the reason it is not, and what the flight
 * recorder shows (the last switches, the last interrupt, the locks still held, times
 * relative to the fault or the last event). Worked out once here, so `emb crash`'s text
 * and JSON writers and the tests read the same answers; nothing is printed. */
#ifndef EMB_HOST_CRASH_REPORT_H
#define EMB_HOST_CRASH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash_arch.h"
#include "crash_decode.h"
#include "elf_image.h"
#include "problem.h"
#include "trace_decode.h"

#define EMB_CRASH_REPORT_FRAMES 16u   /* inlined frames kept per code address */
#define EMB_CRASH_REPORT_CALLS 16u    /* return addresses unwound */
#define EMB_CRASH_REPORT_MINIS 256u   /* mini-records kept */
#define EMB_CRASH_REPORT_SWITCHES 5u  /* last switches kept */
#define EMB_CRASH_REPORT_LOCKS 32u    /* locks still held, kept */

struct emb_capture;

/* What `emb crash` reads: a crash record, a whole retained region (a record and the
 * mini-records after it, or the mini-records alone), or a sealed capture whose crash
 * section holds the record the target sent. */
struct emb_crash_input {
    const uint8_t *data;         /* the record's bytes (a capture's crash section) */
    size_t size;
    long long base;              /* where data starts in the file, for problems' offsets */
    bool has_record;
    struct emb_crash_record record;
    struct emb_crash_mini minis[EMB_CRASH_REPORT_MINIS];
    size_t nminis;               /* found; at most EMB_CRASH_REPORT_MINIS are kept */
    struct emb_capture *capture; /* holds the section's bytes while the input is used */
};

/* Reads bytes[0..size) (which must outlive the input) as the input. Returns 0, or -1
 * after reporting why to ps: not a crash record (unless the bytes hold mini-records), a
 * damaged record, a capture that does not decode or holds no crash section. */
int emb_crash_input_open(struct emb_crash_input *in, const uint8_t *bytes, size_t size,
                         struct emb_problems *ps);
void emb_crash_input_close(struct emb_crash_input *in);

/* Why a code address has frames, or has none. */
enum emb_crash_code_status {
    EMB_CRASH_CODE_SYMBOLISED, /* frames hold its function (and the ones it was inlined into) */
    EMB_CRASH_CODE_NO_SYMBOL,  /* in the image's code, but no symbol covers it */
    EMB_CRASH_CODE_OUTSIDE,    /* not in the image's code (native: a shared library?) */
    EMB_CRASH_CODE_PARTIAL,    /* a v2 field kept only its low bits: never symbolised */
};

/* A code address as the image sees it. */
struct emb_crash_code {
    uint64_t runtime;            /* as the record holds it */
    uint64_t address;            /* in the ELF (the native layouts' load bias removed) */
    enum emb_crash_code_status status;
    struct emb_elf_frame frames[EMB_CRASH_REPORT_FRAMES]; /* innermost first */
    size_t nframes;
    uint64_t offset;             /* from the start of the outermost function */
};

enum emb_crash_report_status {
    EMB_CRASH_REPORT_OK,
    EMB_CRASH_REPORT_FINDINGS, /* a valid record contradicts itself (the flight packets it
                                * announces are not the ones that decode); reported */
    EMB_CRASH_REPORT_DAMAGED,  /* the flight recorder is damaged or could not be decoded
                                * (reported); the record itself is shown */
    EMB_CRASH_REPORT_REFUSED,  /* another build's record, or another machine's (reported):
                                * nothing of it is to be shown */
};

/* What on a context took a lock: the thread the context's last switch ran, the interrupt
 * handler that ran on it, or the context itself when it records no switch (a thread
 * context of the native port, or a CPU before the first switch the recorder holds). */
enum emb_crash_holder {
    EMB_CRASH_HOLDER_CONTEXT = 0,
    EMB_CRASH_HOLDER_THREAD,
    EMB_CRASH_HOLDER_IRQ,
};

#define EMB_CRASH_IRQ_UNKNOWN 0xFFFFFFFFu /* a handler whose irq_enter the recorder lost */

/* A lock the flight recorder saw taken and not given back. */
struct emb_crash_lock {
    uint32_t mutex;
    uint16_t context_id;
    enum emb_crash_holder holder;
    uint32_t holder_id;  /* the thread's index, the interrupt's number (or unknown) */
    uint64_t ts;
    bool named;
    char name[64];   /* obj_init's name for it, escaped for a terminal */
};

/* What the flight recorder shows. Times are relative to reference_ts: the fault when the
 * record's clock and the trace's agree (within a minute after the last event), else the
 * last event. */
struct emb_crash_flight {
    uint64_t reference_ts;
    bool reference_is_fault;
    const struct emb_trace_event *switches[EMB_CRASH_REPORT_SWITCHES]; /* oldest first */
    size_t nswitches;
    const struct emb_trace_event *irq_enter; /* the last interrupt, NULL for none */
    const struct emb_trace_event *irq_exit;  /* its end, NULL while it still ran */
    unsigned irq;
    struct emb_crash_lock locks[EMB_CRASH_REPORT_LOCKS];
    size_t nlocks;
    int32_t faulting_thread; /* the thread the faulting context last switched to, outside
                              * any handler at the end; -1 none (a context of its own) */
    size_t first_event; /* the last events listed: events[first_event..n) */
};

struct emb_crash_report_options {
    const struct emb_catalog *catalog; /* decodes the flight recorder; required */
    const char *name;                  /* the input, for the flight recorder's messages */
    size_t events;                     /* last events to list; 0: all */
};

struct emb_crash_report {
    const struct emb_crash_input *input;
    const struct emb_crash_record *record; /* NULL when the input holds mini-records only */
    struct emb_elf *elf;
    enum emb_crash_report_status status;
    bool elf_has_build_id;  /* false: nothing says the record comes from this image */
    struct emb_crash_view view; /* ra and ra_source: the caller believed */
    bool code_partial;      /* v2: pc and lr kept only their low bits */
    struct emb_crash_code pc;
    struct emb_crash_code caller;                  /* when view.ra_source is not NONE */
    struct emb_crash_code calls[EMB_CRASH_REPORT_CALLS]; /* the unwound chain, caller first */
    size_t ncalls;
    /* A Cortex-M fault whose caller is unknown: lr is no return address into another
     * function, and the record keeps no stack to unwind. */
    bool caller_unknown;
    const char *thread_name; /* the faulting thread's name in the flight recorder, or NULL */
    uint64_t clock_hz;       /* the flight recorder's clock; 0 without one */
    struct emb_trace *trace; /* the flight recorder, NULL when none (or not decodable) */
    struct emb_crash_flight flight;
};

/* Builds the report of `in` (its record and mini-records) with `elf`. The record is
 * checked against the image first (build id, machine); a refused record gets status
 * REFUSED and nothing more. Problems (refusal, a damaged flight recorder, a record that
 * contradicts itself) go to ps with offsets in the input file. Returns the report (free
 * it with emb_crash_report_free), or NULL when out of memory (reported). */
struct emb_crash_report *emb_crash_report_build(const struct emb_crash_input *in,
                                                struct emb_elf *elf,
                                                const struct emb_crash_report_options *opt,
                                                struct emb_problems *ps);
void emb_crash_report_free(struct emb_crash_report *rep);

/* Symbolises a runtime code address of the record (partial: a v2 field's low bits). */
void emb_crash_report_code(const struct emb_crash_report *rep, uint64_t runtime, bool partial,
                           struct emb_crash_code *out);
/* A runtime code address as the ELF sees it. */
uint64_t emb_crash_report_elf_address(const struct emb_crash_report *rep, uint64_t runtime);

/* Signed microseconds from the flight recorder's reference to ts (0 without a clock). */
double emb_crash_report_us(const struct emb_crash_report *rep, uint64_t ts);
/* The name of context `id` in the flight recorder, or NULL. */
const char *emb_crash_report_context_name(const struct emb_crash_report *rep, uint16_t id);
/* The name obj_init gave a handle in the flight recorder, escaped for a terminal into
 * buf, or NULL when it gave none. */
const char *emb_crash_report_handle_name(const struct emb_crash_report *rep, uint32_t handle,
                                         char *buf, size_t len);
/* An event's fields as "name=value ..." with what the report knows of each (the code at
 * a pc, the name obj_init gave a handle, a thread's name, escaped for a terminal); a
 * loss record in words. */
void emb_crash_report_event_fields(const struct emb_crash_report *rep,
                                   const struct emb_trace_event *e, char *buf, size_t len);
/* The first field of an event as a 16-bit number (an irq's vector). */
unsigned emb_crash_report_irq(const struct emb_trace_event *e);

/* Who holds `l`, for a person: "thread sensor", "irq 8", "thread 3" when the recorder
 * never named it, or the context's own name; escaped for a terminal. Returns buf. */
const char *emb_crash_report_lock_holder(const struct emb_crash_report *rep,
                                         const struct emb_crash_lock *l, char *buf, size_t len);
/* "thread", "irq" or "context". */
const char *emb_crash_holder_kind_name(enum emb_crash_holder h);

/* The record's build id (or the image's) in hex into buf. */
char *emb_crash_report_hex(const uint8_t *bytes, size_t n, char *buf, size_t len);

#endif /* EMB_HOST_CRASH_REPORT_H */
