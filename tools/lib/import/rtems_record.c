/* The RTEMS record item stream reader (docs/formats/rtems-record.md).
 *
 * Time: an item carries the low 22 bits of the processor's counter. A processor's
 * UPTIME_LOW/UPTIME_HIGH pair ties one counter reading to the uptime (binary time), and
 * every later item adds the 22-bit delta from the item before it, so any number of
 * counter wraps between uptime events is fine as long as consecutive items of one
 * processor are less than one wrap apart. Items before a processor's first uptime pair,
 * and after an overflow (whose gap may hide any number of wraps), are held back and timed
 * backwards from the next uptime pair. That is what the system's own client does.
 */
#define _POSIX_C_SOURCE 200809L
#include "rtems_record.h"

#include "buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_MASK ((UINT32_C(1) << EMB_RTEMS_RECORD_TIME_BITS) - 1u)
#define EVENT_MASK ((UINT32_C(1) << EMB_RTEMS_RECORD_EVENT_BITS) - 1u)

struct held_item {
    uint32_t time_event;
    uint32_t made;    /* an EMB_RTEMS_RECORD_EV_* the reader made (timeless), or 0 */
    uint64_t data;
    uint64_t offset;
};

struct processor {
    uint64_t uptime_bt;     /* binary time at time_last minus time_acc */
    uint32_t time_last;     /* 22-bit time of the last timed item */
    uint64_t time_acc;      /* ticks since the uptime pair */
    uint64_t last_bt;       /* time of the last item handed on, for monotony */
    uint32_t uptime_low;
    bool low_valid;
    bool synced;            /* an uptime pair was seen */
    bool hold;
    bool unreliable;        /* replaying held items with a best-effort time */
    struct held_item *items;
    size_t n, cap;
    uint32_t tail;          /* of the current drain (record versions before 10) */
};

enum read_state { READ_HEADER, READ_FIRST, READ_ITEMS };

struct emb_rtems_record {
    struct emb_rtems_record_options opt;
    struct emb_rtems_record_info info;
    enum read_state state;
    uint8_t part[12];
    unsigned have, item_size;
    uint64_t offset;        /* of the first byte of `part` */
    uint64_t scaler;        /* binary time per tick, times 2^31 */
    bool round_nearest;     /* version 10 rounds the scaler to nearest, earlier ones up */
    uint32_t no_time_last;  /* version 10: events 0..this have no time; 0: by role */
    bool header_done;       /* the first PROCESSOR or timed item was read */
    bool handler_stopped;   /* the handler refused an event: call it no more */
    uint32_t cpu;
    bool cpu_max_seen;
    struct processor cpus[EMB_RTEMS_RECORD_MAX_CPUS];
    const struct emb_rtems_record_table *table;
    unsigned info_len[5];
    bool failed;            /* a problem was reported (or the handler stopped the reader) */
    struct emb_problems *problems; /* the caller's, or own_problems */
    struct emb_problems own_problems;
};

/* The reader's one error: reported at `offset`, after which it reads no more (a later
 * failure, a consequence of the first, is not reported). An expression worth -1. */
#define fail(rr, offset, ...)                                                                 \
    ((rr)->failed ? -1                                                                        \
                  : ((rr)->failed = true,                                                     \
                     emb_report((rr)->problems, EMB_ERROR, (long long)(offset), __VA_ARGS__), \
                     -1))

uint64_t emb_rtems_record_bt_to_ns(uint64_t bt)
{
    const uint64_t ns_per_s = 1000000000u;
    return ns_per_s * (bt >> 32) + ((ns_per_s * (uint32_t)bt) >> 32);
}

struct emb_rtems_record *emb_rtems_record_new(const struct emb_rtems_record_options *opt)
{
    struct emb_rtems_record *rr = calloc(1, sizeof *rr);
    if (rr == NULL)
        return NULL;
    if (opt != NULL)
        rr->opt = *opt;
    emb_problems_init(&rr->own_problems, NULL);
    rr->own_problems.max_kept = 1;
    rr->problems = rr->opt.problems != NULL ? rr->opt.problems : &rr->own_problems;
    rr->scaler = UINT64_C(1) << 31;
    rr->info.cpu_count = EMB_RTEMS_RECORD_MAX_CPUS;
    for (unsigned i = 0; i < EMB_RTEMS_RECORD_MAX_CPUS; i++)
        rr->cpus[i].hold = true; /* nothing is timed before the first uptime pair */
    return rr;
}

void emb_rtems_record_free(struct emb_rtems_record *rr)
{
    if (rr == NULL)
        return;
    for (unsigned i = 0; i < EMB_RTEMS_RECORD_MAX_CPUS; i++)
        free(rr->cpus[i].items);
    emb_problems_free(&rr->own_problems);
    free(rr);
}

struct emb_problems *emb_rtems_record_problems(struct emb_rtems_record *rr)
{
    return rr->problems;
}

bool emb_rtems_record_failed(const struct emb_rtems_record *rr)
{
    return rr->failed;
}

const struct emb_rtems_record_info *emb_rtems_record_info(const struct emb_rtems_record *rr)
{
    return &rr->info;
}

/* ---- Time ---- */

static void set_frequency(struct emb_rtems_record *rr, uint32_t hz)
{
    /* Binary time has 2^32 units per second; the scaler keeps 31 more bits. */
    unsigned __int128 num = (unsigned __int128)1 << 63;
    num += rr->round_nearest ? hz / 2u : hz - 1u;
    rr->scaler = (uint64_t)(num / hz);
}

static uint64_t ticks_to_bt(const struct emb_rtems_record *rr, uint64_t ticks)
{
    /* 128 bits: the client's 64-bit product overflows after about 2^31 ticks without an
     * uptime event; the results agree wherever the client's does not overflow. */
    return (uint64_t)(((unsigned __int128)ticks * rr->scaler) >> 31);
}

static bool is_timed(const struct emb_rtems_record *rr, uint32_t time_event)
{
    uint32_t ev = time_event & EVENT_MASK;
    if (rr->no_time_last != 0u)
        return ev > rr->no_time_last;
    switch ((enum emb_rtems_record_role)rr->table->roles[ev]) {
    case EMB_RTEMS_RECORD_ROLE_OTHER:
    case EMB_RTEMS_RECORD_ROLE_UPTIME_LOW:
    case EMB_RTEMS_RECORD_ROLE_UPTIME_HIGH:
        return true;
    case EMB_RTEMS_RECORD_ROLE_THREAD_INFO:
        return (time_event >> EMB_RTEMS_RECORD_EVENT_BITS) != 0u;
    default:
        return false;
    }
}

/* The number the reader reports an event it makes under: the list's own event of that
 * role (version 10 has TIME_ADJUSTMENT and UNRELIABLE_TIME, as its client reports them),
 * else one of EMB_RTEMS_RECORD_EV_*. */
static uint32_t made_event(const struct emb_rtems_record *rr, enum emb_rtems_record_role role, uint32_t own)
{
    uint16_t ev = rr->table->role_event[role];
    return ev != 0xFFFFu ? ev : own;
}

static int hand_on(struct emb_rtems_record *rr, uint32_t cpu, uint64_t bt, uint32_t event,
                   uint64_t data, uint64_t offset, bool made)
{
    struct emb_rtems_record_event ev = {
        .bt = bt,
        .ns = emb_rtems_record_bt_to_ns(bt),
        .data = data,
        .offset = offset,
        .cpu = cpu,
        .event = event,
        .unreliable = rr->cpus[cpu].unreliable,
        .made = made,
    };
    if (rr->handler_stopped)
        return -1;
    if (rr->opt.handler != NULL && rr->opt.handler(rr->opt.arg, &ev) != 0) {
        /* The handler says why, if it is a problem (a limit reached is not). */
        rr->handler_stopped = true;
        rr->failed = true;
        return -1;
    }
    return 0;
}

/* Hands one item on with its time; a time earlier than the processor's last is reported
 * (TIME_ADJUSTMENT) and clamped, so each processor's times never go back. */
static int emit(struct emb_rtems_record *rr, uint32_t cpu, uint32_t time_event, uint32_t made,
                uint64_t data, uint64_t offset)
{
    struct processor *c = &rr->cpus[cpu];
    if (made == 0u && is_timed(rr, time_event)) {
        uint32_t time = time_event >> EMB_RTEMS_RECORD_EVENT_BITS;
        c->time_acc += (time - c->time_last) & TIME_MASK;
        c->time_last = time;
    }
    uint64_t bt = c->uptime_bt + ticks_to_bt(rr, c->time_acc);
    if (bt < c->last_bt) {
        uint32_t adj = made_event(rr, EMB_RTEMS_RECORD_ROLE_TIME_ADJUSTMENT, EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT);
        if (hand_on(rr, cpu, c->last_bt, adj, c->last_bt - bt, offset, true))
            return -1;
        bt = c->last_bt;
    }
    c->last_bt = bt;
    if (made != 0u)
        return hand_on(rr, cpu, bt, made, data, offset, true);
    rr->info.items++;
    return hand_on(rr, cpu, bt, time_event & EVENT_MASK, data, offset, false);
}

/* The uptime pair fixed the time of the processor's current item: walk the held items
 * backwards from it to time the first, then replay them forwards. */
static int resolve_held(struct emb_rtems_record *rr, uint32_t cpu)
{
    struct processor *c = &rr->cpus[cpu];
    uint32_t last = c->time_last;
    uint64_t acc = 0;
    for (size_t i = c->n; i > 0; i--) {
        uint32_t te = c->items[i - 1].time_event;
        if (c->items[i - 1].made == 0u && is_timed(rr, te)) {
            uint32_t time = te >> EMB_RTEMS_RECORD_EVENT_BITS;
            acc += (last - time) & TIME_MASK;
            last = time;
        }
    }
    uint64_t saved_bt = c->uptime_bt, saved_acc = c->time_acc;
    uint32_t saved_last = c->time_last;
    c->uptime_bt -= ticks_to_bt(rr, acc);
    c->time_last = last;
    c->time_acc = 0;
    size_t n = c->n;
    c->n = 0;
    c->hold = false;
    for (size_t i = 0; i < n; i++)
        if (emit(rr, cpu, c->items[i].time_event, c->items[i].made, c->items[i].data,
                 c->items[i].offset))
            return -1;
    c->uptime_bt = saved_bt;
    c->time_acc = saved_acc;
    c->time_last = saved_last;
    return 0;
}

static int hold_item(struct emb_rtems_record *rr, uint32_t cpu, uint32_t time_event, uint32_t made,
                     uint64_t data, uint64_t offset)
{
    struct processor *c = &rr->cpus[cpu];
    if (c->n == EMB_RTEMS_RECORD_MAX_HOLD_ITEMS)
        return fail(rr, offset, "processor %u: more than %u items without an uptime "
                    "event to time them", cpu, EMB_RTEMS_RECORD_MAX_HOLD_ITEMS);
    if (c->n == c->cap) {
        struct held_item *items = emb_array_grow(c->items, &c->cap, c->n + 1u, sizeof *items);
        if (items == NULL)
            return fail(rr, offset, "out of memory");
        c->items = items;
    }
    c->items[c->n++] = (struct held_item){time_event, made, data, offset};
    return 0;
}

/* ---- Overflow before record version 10: the tail and head of each drain ---- */


/* Returns the items lost at this drain (0 none): the ring wrapped before the drain, its
 * content reached the capacity, and the server sent only the newest count - 1 items. (A
 * server that drains while producers run may also lose items it is sending; the tail
 * and head cannot show that, so it is not reported. Version 10 servers count both kinds
 * themselves, in the stream.) */
static uint32_t drain_lost(struct emb_rtems_record *rr, struct processor *c, uint32_t new_head)
{
    uint32_t count = rr->info.per_cpu_items;
    uint32_t content = new_head - c->tail;
    if (count == 0u || content < count)
        return 0;
    return content - count + 1u;
}

/* ---- Header ---- */

static void info_text(struct emb_rtems_record *rr, uint32_t ev, uint64_t data)
{
    const char *name = rr->table->names[ev];
    static const char *const keys[5] = {"ARCH", "MULTILIB", "BSP", "VERSION_CONTROL_KEY",
                                        "TOOLS"};
    char *dst[5] = {rr->info.arch, rr->info.multilib, rr->info.bsp,
                    rr->info.version_control_key, rr->info.tools};
    for (unsigned k = 0; k < 5; k++) {
        if (strcmp(name, keys[k]) != 0)
            continue;
        /* Text packed into the data word, first character in the lowest byte. */
        for (unsigned b = 0; b < rr->info.data_size; b++) {
            char ch = (char)((data >> (8u * b)) & 0xFFu);
            if (ch == '\0' || rr->info_len[k] + 1u >= EMB_RTEMS_RECORD_INFO_MAX)
                break;
            dst[k][rr->info_len[k]++] = ch;
        }
        return;
    }
}

static int set_count(struct emb_rtems_record *rr, uint64_t data, uint64_t offset)
{
    if (rr->info.per_cpu_items != 0u)
        return fail(rr, offset, "a second per-processor item count");
    /* Versions that name a processor maximum size the processors before the rings. */
    if (rr->table->role_event[EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX] != 0xFFFFu && !rr->cpu_max_seen)
        return fail(rr, offset, "per-processor item count before the processor maximum");
    if (data < 2u || data > 0x80000000u || (data & (data - 1u)) != 0u)
        return fail(rr, offset, "per-processor item count %llu is not a power of two",
                    (unsigned long long)data);
    rr->info.per_cpu_items = (uint32_t)data;
    return 0;
}

/* The header ends at the first PROCESSOR item or timed item. Every server since the first
 * sends the ring size and the frequency in it, and the processor maximum where the list
 * has one (RTEMS record-stream-header.c); without them the times and the processors of
 * what follows cannot be known, so the stream is refused. */
static int header_complete(struct emb_rtems_record *rr, uint32_t ev, uint64_t offset)
{
    static const enum emb_rtems_record_role needed[3] = {EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX, EMB_RTEMS_RECORD_ROLE_COUNT,
                                               EMB_RTEMS_RECORD_ROLE_FREQUENCY};
    const bool seen[3] = {rr->cpu_max_seen, rr->info.per_cpu_items != 0u,
                          rr->info.frequency != 0u};
    char layout[160] = "VERSION", buf[32];
    unsigned missing = 3;
    for (unsigned i = 0; i < 3; i++) {
        uint16_t num = rr->table->role_event[needed[i]];
        if (num == 0xFFFFu)
            continue;
        size_t len = strlen(layout);
        snprintf(layout + len, sizeof layout - len, ", %s",
                 emb_rtems_record_event_name(rr->table, num, buf, sizeof buf));
        if (!seen[i] && missing == 3)
            missing = i;
    }
    if (missing == 3)
        return 0;
    char what[32];
    snprintf(what, sizeof what, "%s", emb_rtems_record_event_name(rr->table,
             rr->table->role_event[needed[missing]], buf, sizeof buf));
    return fail(rr, offset, "incomplete stream header: no %s item before %s, the first "
                "item after the header (a version %u header is %s, ...)", what,
                emb_rtems_record_event_name(rr->table, ev, buf, sizeof buf), rr->info.version, layout);
}

/* ---- Items ---- */

/* The items that say how the stream is made: the processor maximum, the ring size, the
 * counter frequency, and the version again. */
static int visit_setting(struct emb_rtems_record *rr, enum emb_rtems_record_role role, uint64_t data,
                         uint64_t offset, bool *hold)
{
    switch (role) {
    case EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX:
        if (data >= EMB_RTEMS_RECORD_MAX_CPUS)
            return fail(rr, offset, "processor maximum %llu beyond %u",
                        (unsigned long long)data, EMB_RTEMS_RECORD_MAX_CPUS - 1u);
        if (rr->cpu_max_seen || rr->info.per_cpu_items != 0u)
            return fail(rr, offset, "a second or late processor maximum");
        rr->cpu_max_seen = true;
        rr->info.cpu_count = (uint32_t)data + 1u;
        *hold = false;
        break;
    case EMB_RTEMS_RECORD_ROLE_COUNT:
        return set_count(rr, data, offset);
    case EMB_RTEMS_RECORD_ROLE_FREQUENCY:
        if (data == 0u || data > UINT32_MAX)
            return fail(rr, offset, "counter frequency %llu Hz is out of range",
                        (unsigned long long)data);
        rr->info.frequency = (uint32_t)data;
        set_frequency(rr, (uint32_t)data);
        break;
    case EMB_RTEMS_RECORD_ROLE_VERSION:
        if (data != rr->info.version)
            return fail(rr, offset, "a second VERSION item (%llu after %u)",
                        (unsigned long long)data, rr->info.version);
        *hold = false;
        break;
    default:
        break;
    }
    return 0;
}

static int visit(struct emb_rtems_record *rr, uint32_t te, uint64_t data, uint64_t offset)
{
    uint32_t ev = te & EVENT_MASK;
    uint32_t time = te >> EMB_RTEMS_RECORD_EVENT_BITS;
    struct processor *c = &rr->cpus[rr->cpu];
    bool hold = c->hold;
    uint32_t lost = 0;
    enum emb_rtems_record_role role = (enum emb_rtems_record_role)rr->table->roles[ev];
    if (!rr->header_done && (role == EMB_RTEMS_RECORD_ROLE_PROCESSOR || is_timed(rr, te))) {
        if (header_complete(rr, ev, offset))
            return -1;
        rr->header_done = true;
    }
    switch (role) {
    case EMB_RTEMS_RECORD_ROLE_PROCESSOR:
        if (data >= rr->info.cpu_count)
            return fail(rr, offset, "processor index %llu beyond the maximum %u",
                        (unsigned long long)data, rr->info.cpu_count - 1u);
        rr->cpu = (uint32_t)data;
        rr->info.cpus_seen |= UINT32_C(1) << rr->cpu;
        c = &rr->cpus[rr->cpu];
        hold = c->hold;
        break;
    case EMB_RTEMS_RECORD_ROLE_UPTIME_LOW:
        c->uptime_low = (uint32_t)data;
        c->low_valid = true;
        break;
    case EMB_RTEMS_RECORD_ROLE_UPTIME_HIGH:
        if (c->low_valid) {
            c->low_valid = false;
            c->uptime_bt = (data << 32) | c->uptime_low;
            c->synced = true;
            c->time_last = time;
            c->time_acc = 0;
            if (hold && resolve_held(rr, rr->cpu))
                return -1;
            hold = false;
        }
        break;
    case EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX:
    case EMB_RTEMS_RECORD_ROLE_COUNT:
    case EMB_RTEMS_RECORD_ROLE_FREQUENCY:
    case EMB_RTEMS_RECORD_ROLE_VERSION:
        if (visit_setting(rr, role, data, offset, &hold))
            return -1;
        break;
    case EMB_RTEMS_RECORD_ROLE_TAIL:
        c->tail = (uint32_t)data;
        break;
    case EMB_RTEMS_RECORD_ROLE_HEAD:
        lost = drain_lost(rr, c, (uint32_t)data);
        if (lost > 0u) {
            rr->info.lost += lost;
            /* The gap may hide any number of counter wraps: the drain's items wait for
             * the next uptime pair. */
            c->hold = true;
            hold = true;
        }
        break;
    case EMB_RTEMS_RECORD_ROLE_OVERFLOW:
        rr->info.lost += data;
        c->hold = true;
        hold = true;
        break;
    case EMB_RTEMS_RECORD_ROLE_INFO:
        info_text(rr, ev, data);
        break;
    default:
        break;
    }
    int rc = hold ? hold_item(rr, rr->cpu, te, 0, data, offset)
                  : emit(rr, rr->cpu, te, 0, data, offset);
    /* Reported right after the drain's HEAD, before the items that follow the loss, as the
     * version's own overflow event when it has one. */
    if (rc == 0 && lost > 0u)
        rc = hold_item(rr, rr->cpu, 0, made_event(rr, EMB_RTEMS_RECORD_ROLE_OVERFLOW, EMB_RTEMS_RECORD_EV_OVERFLOW),
                       lost, offset);
    return rc;
}

static uint32_t get32(const uint8_t *p, bool big)
{
    return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static int read_header(struct emb_rtems_record *rr)
{
    uint32_t format = get32(rr->part, false);
    switch (format) {
    case EMB_RTEMS_RECORD_FORMAT_LE_32: rr->info.data_size = 4; rr->info.big_endian = false; break;
    case EMB_RTEMS_RECORD_FORMAT_LE_64: rr->info.data_size = 8; rr->info.big_endian = false; break;
    case EMB_RTEMS_RECORD_FORMAT_BE_32: rr->info.data_size = 4; rr->info.big_endian = true; break;
    case EMB_RTEMS_RECORD_FORMAT_BE_64: rr->info.data_size = 8; rr->info.big_endian = true; break;
    default:
        return fail(rr, 0, "unknown item format 0x%08x (expected 0x11111111, 0x22222222, "
                    "0x33333333 or 0x44444444): not a record item stream", format);
    }
    uint32_t magic = get32(rr->part + 4, rr->info.big_endian);
    if (magic != EMB_RTEMS_RECORD_MAGIC)
        return fail(rr, 4, "bad magic 0x%08x (expected 0x%08x)", magic, EMB_RTEMS_RECORD_MAGIC);
    rr->info.format = format;
    rr->item_size = 4u + rr->info.data_size;
    return 0;
}

static int read_first(struct emb_rtems_record *rr, uint32_t te, uint64_t data)
{
    /* Every version numbers EMPTY 0 and VERSION 1, so the first item can be read before
     * the version's table is known. */
    if ((te & EVENT_MASK) != 1u)
        return fail(rr, rr->offset, "the stream does not begin with a VERSION item "
                    "(event %u)", te & EVENT_MASK);
    if (data < EMB_RTEMS_RECORD_VERSION_MIN || data > EMB_RTEMS_RECORD_VERSION_MAX)
        return fail(rr, rr->offset, "record version %llu is not supported (this tool "
                    "reads versions %u to %u)", (unsigned long long)data,
                    EMB_RTEMS_RECORD_VERSION_MIN, EMB_RTEMS_RECORD_VERSION_MAX);
    rr->info.version = (unsigned)data;
    bool exact = true;
    rr->table = rr->opt.table;
    if (rr->table == NULL)
        rr->table = emb_rtems_record_table_for_version(rr->info.version, &exact);
    rr->info.table = rr->table;
    rr->info.table_exact = exact;
    rr->round_nearest = rr->info.version >= 10u;
    if (rr->info.version >= 10u && rr->table->no_time_last != 0xFFFFu)
        rr->no_time_last = rr->table->no_time_last;
    rr->state = READ_ITEMS;
    return emit(rr, 0, te, 0, data, rr->offset);
}

static int read_item(struct emb_rtems_record *rr)
{
    uint32_t te = get32(rr->part, rr->info.big_endian);
    uint64_t data;
    if (rr->info.data_size == 4u)
        data = get32(rr->part + 4, rr->info.big_endian);
    else if (rr->info.big_endian)
        data = (uint64_t)get32(rr->part + 4, true) << 32 | get32(rr->part + 8, true);
    else
        data = (uint64_t)get32(rr->part + 8, false) << 32 | get32(rr->part + 4, false);
    if (rr->state == READ_FIRST)
        return read_first(rr, te, data);
    return visit(rr, te, data, rr->offset);
}

int emb_rtems_record_feed(struct emb_rtems_record *rr, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0u) {
        if (rr->failed)
            return -1;
        unsigned need = rr->state == READ_HEADER ? 8u : rr->item_size;
        unsigned take = need - rr->have;
        if (take > n)
            take = (unsigned)n;
        memcpy(rr->part + rr->have, p, take);
        rr->have += take;
        p += take;
        n -= take;
        if (rr->have < need)
            break;
        int rc;
        if (rr->state == READ_HEADER) {
            rc = read_header(rr);
            rr->state = READ_FIRST;
        } else {
            rc = read_item(rr);
        }
        rr->offset += need;
        rr->have = 0;
        if (rc != 0)
            return -1;
    }
    return rr->failed ? -1 : 0;
}

/* Processors still holding items never got an uptime pair after them. As the system's
 * client does at its end: an UNRELIABLE_TIME event, then the items, timed as best the
 * reader can. That is forwards from the processor's last item, as if the gap before them
 * hid no counter wrap (exact when it did not; the client restarts from the last uptime
 * pair's time instead, which puts them before the items already reported and clamps
 * them), or from 0 at the first item on a processor that never had an uptime pair. */
static void release_held(struct emb_rtems_record *rr)
{
    for (uint32_t cpu = 0; cpu < EMB_RTEMS_RECORD_MAX_CPUS; cpu++) {
        struct processor *c = &rr->cpus[cpu];
        if (!c->hold || c->n == 0u)
            continue;
        uint32_t mark = made_event(rr, EMB_RTEMS_RECORD_ROLE_UNRELIABLE_TIME, EMB_RTEMS_RECORD_EV_UNRELIABLE_TIME);
        if (emit(rr, cpu, 0, mark, 0, c->items[0].offset))
            return;
        if (!c->synced) {
            for (size_t i = 0; i < c->n; i++) {
                if (c->items[i].made == 0u && is_timed(rr, c->items[i].time_event)) {
                    c->time_last = c->items[i].time_event >> EMB_RTEMS_RECORD_EVENT_BITS;
                    break;
                }
            }
        }
        size_t n = c->n;
        c->n = 0;
        c->hold = false;
        c->unreliable = true;
        for (size_t i = 0; i < n; i++)
            if (emit(rr, cpu, c->items[i].time_event, c->items[i].made, c->items[i].data,
                     c->items[i].offset))
                break;
        c->unreliable = false;
    }
}

static int end_stream(struct emb_rtems_record *rr, bool cut)
{
    if (!rr->failed) {
        if (rr->state == READ_HEADER)
            fail(rr, rr->offset, rr->have == 0 ? "empty stream: no record header"
                 : "truncated header: %u of 8 bytes", rr->have);
        else if (rr->state == READ_FIRST)
            fail(rr, rr->offset, rr->have == 0 ? "no VERSION item after the header"
                 : "truncated item: %u of %u bytes", rr->have, rr->item_size);
        else if (rr->have != 0u && !cut)
            fail(rr, rr->offset, "truncated item: %u of %u bytes", rr->have,
                 rr->item_size);
    }
    /* After an error too: what was read before it is reported, as the client's destroy
     * reports it whatever its status. */
    if (rr->state == READ_ITEMS && !rr->handler_stopped)
        release_held(rr);
    rr->have = 0;
    return rr->failed ? -1 : 0;
}

int emb_rtems_record_finish(struct emb_rtems_record *rr)
{
    return end_stream(rr, false);
}

int emb_rtems_record_stop(struct emb_rtems_record *rr)
{
    return end_stream(rr, true);
}
