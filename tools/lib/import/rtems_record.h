/* The reader of RTEMS record item streams (docs/formats/rtems-record.md): what that
 * system's record server sends over TCP and its fatal dump writes, in all four item
 * formats (32/64-bit data, little/big endian) and record versions 1 to 10 (RTEMS 5 sends
 * version 9; RTEMS 6.1, 6.2 and main send version 10, whose event numbers differ).
 *
 * The reader is incremental: feed it bytes as they arrive, in pieces of any size. It
 * rebuilds each item's time from the 22-bit time field and the per-processor uptime
 * events the way the system's own client does (accumulated deltas from the last uptime
 * pair, items held back until a processor's uptime is known), detects overflows, and hands
 * every item to a handler in per-processor order. It allocates only the per-processor
 * hold-back storage, bounded by EMB_RTEMS_RECORD_MAX_HOLD_ITEMS.
 */
#ifndef EMB_HOST_RTEMS_RECORD_H
#define EMB_HOST_RTEMS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"
#include "stream_kind.h" /* the stream header: EMB_RTEMS_RECORD_MAGIC, _FORMAT_* */

#define EMB_RTEMS_RECORD_EVENT_BITS 10u
#define EMB_RTEMS_RECORD_TIME_BITS 22u
#define EMB_RTEMS_RECORD_EVENTS 1024u            /* event numbers 0..1023 */
#define EMB_RTEMS_RECORD_MAX_CPUS 32u            /* processors a stream may name */
#define EMB_RTEMS_RECORD_VERSION_MIN 1u
#define EMB_RTEMS_RECORD_VERSION_MAX 10u
#define EMB_RTEMS_RECORD_MAX_HOLD_ITEMS 0x100000u /* items held per processor before its uptime is known */
#define EMB_RTEMS_RECORD_INFO_MAX 256u           /* bytes kept of each header text (ARCH, BSP, ...) */

/* Events the reader makes itself, numbered above the stream's 10-bit range, for versions
 * whose list has no event of that name (version 10 has TIME_ADJUSTMENT and UNRELIABLE_TIME,
 * and every built-in list an overflow event: the reader then reports the list's numbers, as
 * the system's client does). */
#define EMB_RTEMS_RECORD_EV_OVERFLOW 0x400u        /* items lost on a processor (data: how many) */
#define EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT 0x401u /* time went back; later items clamped (data: bt) */
#define EMB_RTEMS_RECORD_EV_UNRELIABLE_TIME 0x402u /* no uptime followed: times are a best effort */

/* What an event number means to the reader. */
enum emb_rtems_record_role {
    EMB_RTEMS_RECORD_ROLE_OTHER,
    EMB_RTEMS_RECORD_ROLE_VERSION,
    EMB_RTEMS_RECORD_ROLE_PROCESSOR,      /* the items that follow belong to processor `data` */
    EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX,  /* highest processor index */
    EMB_RTEMS_RECORD_ROLE_COUNT,          /* items per processor ring */
    EMB_RTEMS_RECORD_ROLE_FREQUENCY,      /* counter frequency, Hz */
    EMB_RTEMS_RECORD_ROLE_TAIL,           /* ring tail at a drain (record versions before 10) */
    EMB_RTEMS_RECORD_ROLE_HEAD,           /* ring head at a drain (record versions before 10) */
    EMB_RTEMS_RECORD_ROLE_OVERFLOW,       /* items lost (in the stream from version 10 on) */
    EMB_RTEMS_RECORD_ROLE_UPTIME_LOW,
    EMB_RTEMS_RECORD_ROLE_UPTIME_HIGH,
    EMB_RTEMS_RECORD_ROLE_INFO,           /* header text packed into data words */
    EMB_RTEMS_RECORD_ROLE_THREAD_INFO,    /* THREAD_ID, THREAD_NAME: timeless when their time is 0 */
    EMB_RTEMS_RECORD_ROLE_EMPTY,
    EMB_RTEMS_RECORD_ROLE_TIME_ADJUSTMENT, /* made by the client, never sent (version 10) */
    EMB_RTEMS_RECORD_ROLE_UNRELIABLE_TIME, /* made by the client, never sent (version 10) */
    EMB_RTEMS_RECORD_ROLES,
};

/* The event names of one record version: `named` names for 0..named-1; the rest of the
 * 512 system events are SYSTEM_<n>, and 512..1023 are USER_<n-512>. */
struct emb_rtems_record_table {
    unsigned version;
    unsigned named;
    const char *const *names;
    uint16_t role_event[EMB_RTEMS_RECORD_ROLES]; /* first event number of each role, 0xFFFF none */
    /* VERSION_CONTROL_KEY's number, 0xFFFF none: from version 10 on, the events up to and
     * including it (RTEMS_RECORD_NO_TIME_LAST) have no time, all others have one. */
    uint16_t no_time_last;
    uint8_t roles[EMB_RTEMS_RECORD_EVENTS];      /* enum emb_rtems_record_role of each event number */
};

/* The table for a stream's version: exact for 1, 4, 9 and 10; for the versions between,
 * the nearest later table that is known, with *exact set false. NULL outside 1..10. */
const struct emb_rtems_record_table *emb_rtems_record_table_for_version(unsigned version, bool *exact);
/* One of the built-in tables, by its own version (1, 4, 9 or 10); NULL for others. */
const struct emb_rtems_record_table *emb_rtems_record_table_builtin(unsigned version);

/* Reads a table from text: one `NUMBER NAME` per line (decimal or 0x hex; `#` comments),
 * the output of the sed line in docs/formats/rtems-record.md run over a target's
 * recorddata.h. Names are upper-case identifiers; numbers 0 to 1023 (512 and up name user
 * events, which have no role). Returns NULL after reporting a bad line ("line N: ...") to
 * `problems`. Free with emb_rtems_record_table_free(). */
struct emb_rtems_record_table *emb_rtems_record_table_parse(const char *text, size_t len,
                                                            unsigned version,
                                                            struct emb_problems *problems);
void emb_rtems_record_table_free(struct emb_rtems_record_table *table);

/* The name of event `event` (upper case, as the system spells it): a table name,
 * SYSTEM_<n>, USER_<n>, or the reader's own OVERFLOW / TIME_ADJUSTMENT / UNRELIABLE_TIME. */
const char *emb_rtems_record_event_name(const struct emb_rtems_record_table *table, unsigned event, char *buf,
                              size_t len);
enum emb_rtems_record_role emb_rtems_record_event_role(const struct emb_rtems_record_table *table, unsigned event);

/* One item as the system's client reports it. */
struct emb_rtems_record_event {
    uint64_t bt;      /* binary time: seconds in the upper 32 bits, 2^-32 s below */
    uint64_t ns;      /* bt in nanoseconds, converted as the client converts it */
    uint64_t data;    /* zero-extended from 32 bits in the 32-bit formats */
    uint64_t offset;  /* byte offset of the item in the stream (made events: the cause) */
    uint32_t cpu;
    uint32_t event;   /* 0..1023, or one of EMB_RTEMS_RECORD_EV_* */
    bool unreliable;  /* time is a best effort (no uptime event followed it) */
    bool made;        /* made by the reader (overflow before version 10, TIME_ADJUSTMENT,
                       * UNRELIABLE_TIME), not an item of the stream */
};

/* Receives each item; return nonzero to stop the reader (emb_rtems_record_feed then fails;
 * the handler reports why to the problem sink, if it is a problem). */
typedef int (*emb_rtems_record_handler)(void *arg, const struct emb_rtems_record_event *ev);

struct emb_rtems_record_options {
    emb_rtems_record_handler handler;
    void *arg;
    /* Names for the stream instead of the built-in table of its version (not owned). */
    const struct emb_rtems_record_table *table;
    /* Where a problem with the stream goes: one error at most, at the byte offset of the
     * item (or header field) it is about, after which the reader reads no more. May be
     * NULL (then emb_rtems_record_failed() says only that it failed). */
    struct emb_problems *problems;
};

/* What the stream header said, and counts so far. */
struct emb_rtems_record_info {
    uint32_t format;        /* EMB_RTEMS_RECORD_FORMAT_* once the header is read, else 0 */
    unsigned data_size;     /* 4 or 8 */
    bool big_endian;
    unsigned version;       /* 0 until the VERSION item */
    bool table_exact;       /* the table is the version's own */
    const struct emb_rtems_record_table *table;
    uint32_t cpu_count;     /* processors allowed (PROCESSOR_MAXIMUM + 1, or 32) */
    uint32_t per_cpu_items; /* ring capacity in items, 0 unknown */
    uint32_t frequency;     /* counter Hz, 0 unknown */
    uint32_t cpus_seen;     /* bit per processor that had items */
    uint64_t items;         /* items read */
    uint64_t lost;          /* items reported lost by overflow events */
    char arch[EMB_RTEMS_RECORD_INFO_MAX], multilib[EMB_RTEMS_RECORD_INFO_MAX], bsp[EMB_RTEMS_RECORD_INFO_MAX];
    char version_control_key[EMB_RTEMS_RECORD_INFO_MAX], tools[EMB_RTEMS_RECORD_INFO_MAX];
};

struct emb_rtems_record;

struct emb_rtems_record *emb_rtems_record_new(const struct emb_rtems_record_options *opt); /* NULL: out of memory */
/* Consumes `n` more bytes. Returns 0, or -1 once an error is reported (or the handler stopped it). */
int emb_rtems_record_feed(struct emb_rtems_record *rr, const void *buf, size_t n);
/* The end of the stream: refuses a partial item or a stream without a complete header,
 * and releases items still held back, after an UNRELIABLE_TIME event on their processor
 * (their times a best effort, marked unreliable), as the system's client does at its end.
 * The held items are released after an earlier error too (unless the handler stopped the
 * reader), so nothing read is lost. 0 or -1. */
int emb_rtems_record_finish(struct emb_rtems_record *rr);
/* The reading was stopped before the stream ended (a live import cut by a deadline or a
 * signal): like emb_rtems_record_finish(), but a partial last item is dropped, not refused. */
int emb_rtems_record_stop(struct emb_rtems_record *rr);
/* Where the reader reports: the options' sink, or its own when they gave none (so a
 * handler can report there too). */
struct emb_problems *emb_rtems_record_problems(struct emb_rtems_record *rr);
/* An error was reported, or the handler stopped the reader: it reads no more. */
bool emb_rtems_record_failed(const struct emb_rtems_record *rr);
const struct emb_rtems_record_info *emb_rtems_record_info(const struct emb_rtems_record *rr);
void emb_rtems_record_free(struct emb_rtems_record *rr);

/* Binary time to nanoseconds, as the system's client converts it. */
uint64_t emb_rtems_record_bt_to_ns(uint64_t bt);

#endif /* EMB_HOST_RTEMS_RECORD_H */
