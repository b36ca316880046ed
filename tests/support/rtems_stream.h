/* A simulated RTEMS target for the record reader's tests: per-processor rings of items
 * (22-bit time field, 10-bit event, data word), periodic uptime pairs, and a record
 * server that drains the rings into a stream of any of the four item formats, in the
 * drain layout of record versions 1 and 9 (PROCESSOR, TAIL, HEAD, items: RTEMS 5.3
 * cpukit/libtrace/record/record.c _Record_Drain) or 10 (PROCESSOR, PER_CPU_OVERFLOW when
 * items were lost, items: RTEMS main cpukit/libtrace/record/record-fetch.c), with the
 * header of cpukit/libtrace/record/record-stream-header.c, built without the reader's code.
 *
 * It also writes down what the system's client reports for each item: the event, its
 * data, and for timed items the time, from the TRUE 64-bit counter of each item (the
 * reader only sees 22 bits of it), so a test checks the reader's wrap accounting. */
#ifndef EMB_TEST_RTEMS_STREAM_H
#define EMB_TEST_RTEMS_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RS_TIME_MASK 0x3FFFFFu

/* Event numbers (positions in the rtems_record_event enum), written out by hand from each
 * version's own header, never taken from the reader's tables; 0xFFFF: not in that list. */
struct rs_events {
    uint32_t version, processor, pmax, count, frequency, tail, head, overflow, uptime_low,
        uptime_high, arch, multilib, bsp, vck, tools, thread_id, thread_name, switch_in,
        switch_out, user0;
    uint32_t time_adjustment, unreliable_time; /* what the client reports, never sent */
    uint32_t no_time_last; /* events 0..this have no time (RTEMS_RECORD_NO_TIME_LAST); 0: none */
};
/* Version 1: recorddata.h of the event recording patch, shared/seeds/001_*. */
static const struct rs_events rs_ev_v1 = {1, 35, 0xFFFF, 7, 11, 86, 15, 33, 111, 110, 0xFFFF,
                                          0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF,
                                          101, 102, 512, 0xFFFF, 0xFFFF, 0};
/* Version 9 (RTEMS 5.1 to 5.3): github.com/RTEMS/rtems cpukit/include/rtems/recorddata.h,
 * tag 5.3 (list last changed by commit e41e9961df, 2019-09-02). */
static const struct rs_events rs_ev_v9 = {1, 118, 119, 110, 44, 113, 111, 112, 321, 320, 7, 105,
                                          20, 322, 309, 277, 278, 302, 303, 512, 0xFFFF, 0xFFFF,
                                          0};
/* Version 10 (RTEMS 6.1, 6.2, main): github.com/RTEMS/rtems
 * cpukit/include/rtems/recorddata.h at commit 4655a7df00 ("record: Reorganize system event
 * numbers", 2024-10-11), unchanged in the 6.1 and 6.2 tags and on main at 181e86a199:
 * EMPTY 0, VERSION 1, ARCH 2, BSP 3, FREQUENCY 4, MULTILIB 5, PER_CPU_COUNT 6,
 * PER_CPU_DISCARD 7, PER_CPU_OVERFLOW 8, PROCESSOR 9, PROCESSOR_MAXIMUM 10, THREAD_ID 11,
 * THREAD_NAME 12, TIME_ADJUSTMENT 13, TOOLS 14, UNRELIABLE_TIME 15, VERSION_CONTROL_KEY 16
 * (= RTEMS_RECORD_NO_TIME_LAST), ..., THREAD_SWITCH_IN 305, THREAD_SWITCH_OUT 306, ...,
 * UPTIME_HIGH 322, UPTIME_LOW 323, ..., USER_0 512. No PER_CPU_TAIL or PER_CPU_HEAD. */
static const struct rs_events rs_ev_v10 = {1, 9, 10, 6, 4, 0xFFFF, 0xFFFF, 8, 323, 322, 2, 5,
                                           3, 16, 14, 11, 12, 305, 306, 512, 13, 15, 16};

struct rs_exp {
    uint32_t cpu, event;
    uint64_t data;
    bool timed;       /* has a time the test checks */
    uint64_t counter; /* true counter of a timed item */
    uint64_t bt;      /* what the client reports for a timed item */
    bool resolved;    /* bt is known (held items get it at the next uptime pair) */
};

struct rs_slot {
    uint32_t te;
    uint64_t data;
    uint64_t counter;
};

struct rs_cpu {
    uint64_t counter, next_uptime;
    struct rs_slot *ring;
    uint32_t head, tail;
    /* what the client knows */
    bool holding, low_valid;
    uint64_t up_counter, up_bt;
    size_t *held;
    size_t nheld;
};

struct rs {
    unsigned version;
    uint32_t format;
    unsigned ncpu;
    uint32_t count, freq;
    unsigned data_size;
    bool big;
    const struct rs_events *ev;
    uint64_t scaler, bt_base, rng;
    uint64_t uptime_period;
    uint64_t max_step;            /* counter ticks a step may take, at most half a wrap */
    struct rs_cpu cpu[4];
    uint8_t *out;
    size_t len, cap;
    struct rs_exp *exp;
    size_t nexp, capexp;
    uint64_t produced, lost;
};

static inline uint64_t rs_rand(struct rs *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

static inline void rs_bytes(struct rs *s, const void *p, size_t n)
{
    if (s->len + n > s->cap) {
        s->cap = s->cap ? s->cap * 2 : 65536;
        while (s->cap < s->len + n)
            s->cap *= 2;
        s->out = (uint8_t *)realloc(s->out, s->cap);
    }
    memcpy(s->out + s->len, p, n);
    s->len += n;
}

static inline void rs_word(struct rs *s, uint64_t v, unsigned size)
{
    uint8_t b[8];
    for (unsigned i = 0; i < size; i++)
        b[s->big ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
    rs_bytes(s, b, size);
}

static inline void rs_item_bytes(struct rs *s, uint32_t te, uint64_t data)
{
    rs_word(s, te, 4);
    rs_word(s, data, s->data_size);
}

static inline uint64_t rs_data(const struct rs *s, uint64_t d)
{
    return s->data_size == 4 ? (uint32_t)d : d;
}

/* The client's binary time for `ticks` after a synchronisation. */
static inline uint64_t rs_ticks_bt(const struct rs *s, uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * s->scaler) >> 31);
}

/* The target's uptime (its own clock): what its uptime events carry. */
static inline uint64_t rs_uptime(const struct rs *s, uint64_t counter)
{
    return s->bt_base + (uint64_t)(((unsigned __int128)counter << 32) / s->freq);
}

static inline struct rs_exp *rs_expect(struct rs *s, uint32_t cpu, uint32_t event, uint64_t data)
{
    if (s->nexp == s->capexp) {
        s->capexp = s->capexp ? s->capexp * 2 : 4096;
        s->exp = (struct rs_exp *)realloc(s->exp, s->capexp * sizeof *s->exp);
    }
    struct rs_exp *e = &s->exp[s->nexp++];
    memset(e, 0, sizeof *e);
    e->cpu = cpu;
    e->event = event;
    e->data = rs_data(s, data);
    return e;
}

/* A header item: on processor 0, no time. */
static inline void rs_header_item(struct rs *s, uint32_t event, uint64_t data)
{
    rs_item_bytes(s, event, data);
    rs_expect(s, 0, event, data);
}

static inline void rs_text(struct rs *s, uint32_t event, const char *text)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i += s->data_size) {
        uint64_t d = 0;
        for (unsigned b = 0; b < s->data_size && i + b < n; b++)
            d |= (uint64_t)(uint8_t)text[i + b] << (8 * b);
        rs_header_item(s, event, d);
    }
}

static inline void rs_init(struct rs *s, unsigned version, uint32_t format, unsigned ncpu,
                           uint32_t count, uint32_t freq, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->version = version;
    s->format = format;
    s->ncpu = ncpu;
    s->count = count;
    s->freq = freq;
    s->data_size = format == 0x22222222u || format == 0x44444444u ? 8 : 4;
    s->big = format == 0x33333333u || format == 0x44444444u;
    s->ev = version >= 10 ? &rs_ev_v10 : version == 9 ? &rs_ev_v9 : &rs_ev_v1;
    s->max_step = 1u << 21;
    s->rng = seed | 1;
    unsigned __int128 num = (unsigned __int128)1 << 63;
    num += version >= 10 ? freq / 2 : freq - 1;
    s->scaler = (uint64_t)(num / freq);
    s->bt_base = (uint64_t)3 << 32 | 0x12345678u; /* the system was up 3 s at counter 0 */
    s->uptime_period = (uint64_t)5 << 22;          /* five counter wraps between uptimes */
    for (unsigned c = 0; c < ncpu; c++) {
        s->cpu[c].ring = (struct rs_slot *)calloc(count, sizeof(struct rs_slot));
        s->cpu[c].held = (size_t *)calloc(1u << 20, sizeof(size_t));
        s->cpu[c].holding = true;
        s->cpu[c].counter = 1000 + 777 * c;
        s->cpu[c].next_uptime = s->cpu[c].counter + 50;
    }
    uint32_t word = format;
    rs_bytes(s, &word, 4); /* the format values read the same in either byte order */
    rs_word(s, 0x82E14EC1u, 4);
    rs_header_item(s, s->ev->version, version);
    if (s->ev->pmax != 0xFFFF)
        rs_header_item(s, s->ev->pmax, ncpu - 1);
    rs_header_item(s, s->ev->count, count);
    rs_header_item(s, s->ev->frequency, freq);
    if (s->ev->arch != 0xFFFF) {
        rs_text(s, s->ev->arch, "arm");
        rs_text(s, s->ev->multilib, "armv7-a/neon");
        rs_text(s, s->ev->bsp, "xilinx_zynq_a9_qemu");
        rs_text(s, s->ev->vck, "6.1-0-g1234abcd");
        rs_text(s, s->ev->tools, "13.3.0 20240521 (RTEMS 6, RSB)");
        rs_header_item(s, s->ev->thread_id, 0x09010001u);
        rs_header_item(s, s->ev->thread_name, 0x49444C45u);
    }
}

static inline void rs_free(struct rs *s)
{
    for (unsigned c = 0; c < s->ncpu; c++) {
        free(s->cpu[c].ring);
        free(s->cpu[c].held);
    }
    free(s->out);
    free(s->exp);
}

static inline void rs_put(struct rs *s, unsigned cpu, uint32_t event, uint64_t data)
{
    struct rs_cpu *c = &s->cpu[cpu];
    struct rs_slot *slot = &c->ring[c->head & (s->count - 1)];
    slot->te = (uint32_t)((c->counter & RS_TIME_MASK) << 10) | event;
    slot->data = rs_data(s, data);
    slot->counter = c->counter;
    c->head++;
    s->produced++;
}

/* One step of a processor: time passes (at most half a counter wrap), maybe an uptime
 * pair is due, then a thread switch or a user event. */
static inline void rs_step(struct rs *s, unsigned cpu)
{
    struct rs_cpu *c = &s->cpu[cpu];
    c->counter += 1 + rs_rand(s) % s->max_step;
    if (c->counter >= c->next_uptime) {
        uint64_t bt = rs_uptime(s, c->counter);
        rs_put(s, cpu, s->ev->uptime_low, (uint32_t)bt);
        rs_put(s, cpu, s->ev->uptime_high, bt >> 32);
        c->next_uptime += s->uptime_period;
        c->counter += 1 + rs_rand(s) % 1000;
    }
    if (rs_rand(s) % 3 == 0) {
        rs_put(s, cpu, s->ev->switch_out, 0x0A010001u + cpu);
        rs_put(s, cpu, s->ev->switch_in, 0x0A010002u + (uint32_t)(rs_rand(s) % 4));
    } else {
        rs_put(s, cpu, s->ev->user0 + (uint32_t)(rs_rand(s) % 512), rs_rand(s));
    }
}

/* What the client reports for a delivered item, from its true counter. */
static inline void rs_deliver(struct rs *s, unsigned cpu, const struct rs_slot *slot)
{
    struct rs_cpu *c = &s->cpu[cpu];
    uint32_t event = slot->te & 0x3FFu;
    struct rs_exp *e = rs_expect(s, cpu, event, slot->data);
    e->timed = true;
    e->counter = slot->counter;
    if (event == s->ev->uptime_low) {
        c->low_valid = true;
    } else if (event == s->ev->uptime_high && c->low_valid) {
        c->low_valid = false;
        c->up_counter = slot->counter;
        c->up_bt = rs_uptime(s, slot->counter);
        if (c->holding) {
            /* The held items are timed backwards from this pair. */
            uint64_t first = slot->counter;
            for (size_t i = 0; i < c->nheld; i++) {
                if (s->exp[c->held[i]].timed) {
                    first = s->exp[c->held[i]].counter;
                    break;
                }
            }
            uint64_t start = c->up_bt - rs_ticks_bt(s, slot->counter - first);
            for (size_t i = 0; i < c->nheld; i++) {
                struct rs_exp *h = &s->exp[c->held[i]];
                if (h->timed) {
                    h->bt = start + rs_ticks_bt(s, h->counter - first);
                    h->resolved = true;
                }
            }
            c->nheld = 0;
            c->holding = false;
        }
    }
    if (c->holding) {
        c->held[c->nheld++] = (size_t)(e - s->exp);
    } else {
        e->bt = c->up_bt + rs_ticks_bt(s, slot->counter - c->up_counter);
        e->resolved = true;
    }
}

static inline void rs_control(struct rs *s, unsigned cpu, uint32_t event, uint64_t data)
{
    rs_item_bytes(s, event, data);
    struct rs_cpu *c = &s->cpu[cpu];
    struct rs_exp *e = rs_expect(s, cpu, event, data);
    if (c->holding)
        c->held[c->nheld++] = (size_t)(e - s->exp);
}

/* The times the client gives items still held at the end, when the gap before them hid no
 * counter wrap: forwards from the processor's last uptime pair, so the true ones. */
static inline void rs_best_effort(struct rs *s)
{
    for (unsigned cpu = 0; cpu < s->ncpu; cpu++) {
        struct rs_cpu *c = &s->cpu[cpu];
        for (size_t i = 0; c->holding && c->up_bt != 0 && i < c->nheld; i++) {
            struct rs_exp *h = &s->exp[c->held[i]];
            if (h->timed) {
                h->bt = c->up_bt + rs_ticks_bt(s, h->counter - c->up_counter);
                h->resolved = true;
            }
        }
    }
}

/* The record server drains every processor that has items. */
static inline void rs_drain(struct rs *s)
{
    for (unsigned cpu = 0; cpu < s->ncpu; cpu++) {
        struct rs_cpu *c = &s->cpu[cpu];
        if (c->head == c->tail)
            continue;
        uint32_t content = c->head - c->tail, first = c->tail, lost = 0;
        rs_control(s, cpu, s->ev->processor, cpu);
        size_t marker = 0;
        if (s->version < 10) {
            rs_control(s, cpu, s->ev->tail, c->tail);
            rs_control(s, cpu, s->ev->head, c->head);
            if (content >= s->count) {
                lost = content - s->count + 1; /* the newest count - 1 items are sent */
                first = c->head - s->count + 1;
                rs_expect(s, cpu, s->ev->overflow, lost); /* the client reports it */
                marker = s->nexp - 1;
            }
        } else if (content > s->count) {
            lost = content - s->count; /* the newest count items are sent */
            first = c->head - s->count;
            bool was = c->holding;
            rs_control(s, cpu, s->ev->overflow, lost);
            marker = was ? SIZE_MAX : s->nexp - 1;
        }
        if (lost > 0) {
            /* From here the client waits for an uptime pair. */
            if (marker != SIZE_MAX)
                c->held[c->nheld++] = marker;
            c->holding = true;
            s->lost += lost;
        }
        for (uint32_t i = first; i != c->head; i++) {
            const struct rs_slot *slot = &c->ring[i & (s->count - 1)];
            rs_item_bytes(s, slot->te, slot->data);
            rs_deliver(s, cpu, slot);
        }
        c->tail = c->head;
    }
}

/* Ends the stream with processor `cpu` holding items: every processor gets an uptime
 * pair and is drained, then `cpu` overflows its ring in small steps (far less than a
 * counter wrap between items, lost ones included) with no uptime pair after. */
static inline void rs_end_holding(struct rs *s, unsigned cpu)
{
    for (unsigned c = 0; c < s->ncpu; c++) {
        s->cpu[c].next_uptime = s->cpu[c].counter;
        rs_step(s, c);
    }
    rs_drain(s);
    uint64_t step = s->max_step;
    s->max_step = 1000;
    s->cpu[cpu].next_uptime = UINT64_MAX;
    for (unsigned i = 0; i < s->count + 5; i++)
        rs_step(s, cpu);
    rs_drain(s);
    s->max_step = step;
}

#endif /* EMB_TEST_RTEMS_STREAM_H */
