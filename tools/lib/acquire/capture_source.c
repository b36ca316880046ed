/* Capture sources: bytes from wherever the target sends them, to a trace stream. This
 * file holds what every source shares: what arrives (frames by channel), commands to the
 * target, when to stop, and the entry; the sources themselves are in capture_links.c
 * (files, serial lines, sockets, SWO, retained images) and capture_memory.c (the target's
 * memory: the memory channel through GDB or a process, the rings through the
 * descriptor). */
#define _GNU_SOURCE
#include "capture_source.h"
#include "capture_source_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <emb/frame.h>
#include <emb/shell.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "buffer.h"
#include "crash_decode.h"
#include "elf_sym.h"
#include "frame_decode.h"
#include "hostio.h"
#include "trace_assemble.h"

#define PING_MS 250u

/* ---- What arrives ---- */

/* The log stream is kept as log frames, what `emb log` reads (docs/capture-sources.md):
 * encoding is deterministic, so these are the bytes the target sent, minus damage. */
static void keep_log_frame(struct emb_source_run *c, const uint8_t *p, size_t len)
{
    uint8_t stack[512];
    size_t cap = EMB_FRAME_WIRE_MAX(len);
    uint8_t *f = cap <= sizeof stack ? stack : malloc(cap);
    if (f == NULL)
        return;
    size_t n = emb_frame_encode(f, cap, EMB_FRAME_CH_LOG, p, len);
    emb_buf_append(&c->log, f, n);
    if (f != stack)
        free(f);
}

/* A crash record the target found at start and sent (docs/formats/frame.md): kept when it
 * checks out (magic, length, CRC), the newest one winning. */
static void keep_crash_frame(struct emb_source_run *c, const uint8_t *p, size_t len)
{
    struct emb_crash_record r;
    if (emb_crash_decode(p, len, &r, NULL) == 0 && r.length == len) {
        c->crash.len = 0;
        emb_buf_append(&c->crash, p, len);
        c->st->crash_records++;
    } else {
        c->st->bad_crash_records++;
    }
}

/* PING and ARM_WINDOW replies carry the window state. */
static void on_shell_reply(struct emb_source_run *c, const uint8_t *p, size_t len)
{
    c->st->replies++;
    uint32_t state = 0;
    if (p[0] == (EMB_SHELL_PING | EMB_SHELL_REPLY) && len >= 7)
        state = p[6];
    else if (p[0] == (EMB_SHELL_ARM_WINDOW | EMB_SHELL_REPLY) && len >= 6)
        state = emb_get_le32(p + 2);
    if (state == EMB_TRACE_WINDOW_CLOSED && !c->st->window_closed) {
        c->st->window_closed = true;
        c->closed_ms = emb_hostio_now_ms();
    }
}

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct emb_source_run *c = arg;
    if (ch == EMB_FRAME_CH_TRACE)
        emb_trace_assemble_frame(c->tasm, p, len);
    else if (ch == EMB_FRAME_CH_LOG)
        keep_log_frame(c, p, len);
    else if (ch == EMB_FRAME_CH_CRASH)
        keep_crash_frame(c, p, len);
    else if (ch == EMB_FRAME_CH_SHELL && len >= 2)
        on_shell_reply(c, p, len);
}

/* ---- Commands to the target ---- */

static void command(struct emb_source_run *c, const uint8_t *cmd, size_t len)
{
    uint8_t frame[64];
    size_t n = emb_frame_encode(frame, sizeof frame, EMB_FRAME_CH_SHELL, cmd, len);
    emb_buf_append(&c->down, frame, n);
}

static void ping(struct emb_source_run *c)
{
    uint8_t ping[5] = {EMB_SHELL_PING};
    emb_put_le32(ping + 1, ++c->cookie);
    command(c, ping, sizeof ping);
}

/* ---- When to stop ---- */

static void update_stats(struct emb_source_run *c)
{
    struct emb_source_stats *st = c->st;
    const struct emb_frame_stats *fs = emb_frame_dec_stats(c->dec);
    const struct emb_trace_assemble_stats *ts = emb_trace_assemble_stats(c->tasm);
    if (!c->direct) {
        st->frames = fs->frames;
        st->bad_frames = fs->dropped;
        st->packets = ts->packets;
        st->headers = ts->headers;
        st->foreign = ts->foreign;
        st->log_bytes = c->log.len;
    }
    uint64_t now = emb_hostio_now_ms();
    st->elapsed_ms = now - c->start_ms;
    if (ts->packets != c->last_packets) {
        c->last_packets = ts->packets;
        c->last_packet_ms = now;
    }
    const uint8_t *header, *packets;
    size_t header_len, packets_len;
    if (!c->direct && c->o->on_packets != NULL &&
        emb_trace_assemble_parts(c->tasm, &header, &header_len, &packets, &packets_len))
        emb_source_give_packets(c, header, header_len, packets, packets_len);
    emb_source_give_log(c, c->log.data, c->log.len);
    if (c->o->progress != NULL && now - c->last_progress_ms >= 200u) {
        c->last_progress_ms = now;
        c->o->progress(c->o->progress_arg, st);
    }
}

const char *emb_source_should_stop(struct emb_source_run *c)
{
    const struct emb_source_options *o = c->o;
    update_stats(c);
    uint64_t now = emb_hostio_now_ms();
    if (o->stop != NULL && *o->stop)
        return "interrupted";
    if (o->duration_s > 0 && (double)(now - c->start_ms) >= o->duration_s * 1000.0)
        return "duration";
    if (o->max_packets > 0 && c->st->packets >= o->max_packets)
        return "count";
    if (o->until_window_closed) {
        if (c->st->window_closed && now - c->closed_ms >= EMB_SOURCE_IDLE_AFTER_CLOSE_MS &&
            now - c->last_packet_ms >= EMB_SOURCE_IDLE_AFTER_CLOSE_MS)
            return "window closed";
        if (!c->st->window_closed && now - c->last_ping_ms >= PING_MS) {
            c->last_ping_ms = now;
            ping(c);
        }
    }
    return NULL;
}

void emb_source_give_packets(struct emb_source_run *c, const uint8_t *header, size_t header_len,
                             const uint8_t *packets, size_t packets_len)
{
    if (c->o->on_packets == NULL || packets_len <= c->packets_given)
        return;
    c->o->on_packets(c->o->packets_arg, header, header_len, packets + c->packets_given,
                     packets_len - c->packets_given);
    c->packets_given = packets_len;
}

void emb_source_give_log(struct emb_source_run *c, const uint8_t *log, size_t len)
{
    if (c->o->on_log == NULL || len <= c->log_given)
        return;
    c->o->on_log(c->o->packets_arg, log + c->log_given, len - c->log_given);
    c->log_given = len;
}

void emb_source_stopped(struct emb_source_run *c, const char *why)
{
    snprintf(c->st->stop_reason, sizeof c->st->stop_reason, "%s", why);
}

void emb_source_error(struct emb_source_run *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(c->problems, EMB_ERROR, -1, fmt, ap);
    va_end(ap);
}

void emb_source_error_named(struct emb_source_run *c, const char *message)
{
    emb_report_in(c->problems, NULL, EMB_ERROR, -1, "%s", message);
}

void emb_source_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- Entry ---- */

int emb_source_kind_parse(const char *name)
{
    static const char *const names[] = {"file", "tcp", "serial", "swo", "gdb", "pid", "retained",
                                        "unix", "qmp"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

static int run_source(struct emb_source_run *c)
{
    switch (c->o->kind) {
    case EMB_SOURCE_FILE: return emb_source_file(c);
    case EMB_SOURCE_TCP: return emb_source_tcp(c);
    case EMB_SOURCE_UNIX: return emb_source_unix(c);
    case EMB_SOURCE_SERIAL: return emb_source_serial(c);
    case EMB_SOURCE_SWO: return emb_source_swo(c);
    case EMB_SOURCE_GDB: return emb_source_gdb(c);
    case EMB_SOURCE_PID: return emb_source_pid(c);
    case EMB_SOURCE_RETAINED: return emb_source_retained(c);
    case EMB_SOURCE_QMP: return emb_source_qmp(c);
    }
    emb_source_error(c, "unknown source");
    return -1;
}

/* What arrived becomes the result: the assembled stream (unless the source gave one
 * whole), the log frames, the newest crash record. */
static void take_result(struct emb_source_run *c, struct emb_source_result *res)
{
    if (res->trace == NULL) {
        size_t len;
        const uint8_t *s = emb_trace_assemble_stream(c->tasm, &len);
        if (s != NULL && (res->trace = malloc(len)) != NULL) {
            memcpy(res->trace, s, len);
            res->trace_len = len;
        }
    }
    res->log = c->log.data;
    res->log_len = c->log.len;
    if (res->crash == NULL && c->crash.len > 0) {
        res->crash = c->crash.data;
        res->crash_len = c->crash.len;
    } else {
        emb_buf_free(&c->crash);
    }
}

int emb_source_capture(const struct emb_source_options *opt, struct emb_source_result *res,
                       struct emb_problems *problems)
{
    memset(res, 0, sizeof *res);
    struct emb_source_run c = {.o = opt, .st = &res->stats, .res = res, .problems = problems};
    bool joined = opt->kind == EMB_SOURCE_SERIAL;
    c.dec = emb_frame_dec_new(70000, joined, on_frame, NULL, &c);
    c.tasm = emb_trace_assemble_new(0);
    if (c.dec == NULL || c.tasm == NULL) {
        emb_source_error(&c, "out of memory");
        emb_frame_dec_free(c.dec);
        emb_trace_assemble_free(c.tasm);
        return -1;
    }
    c.start_ms = c.last_packet_ms = emb_hostio_now_ms();
    if (opt->arm) {
        uint8_t arm[1] = {EMB_SHELL_ARM_WINDOW};
        command(&c, arm, 1);
    }
    int rc = run_source(&c);
    emb_frame_dec_finish(c.dec);
    update_stats(&c);
    take_result(&c, res);
    emb_frame_dec_free(c.dec);
    emb_trace_assemble_free(c.tasm);
    emb_buf_free(&c.sp.buf);
    emb_buf_free(&c.down);
    return rc;
}

void emb_source_result_free(struct emb_source_result *res)
{
    EMB_FREE_ALL(res->trace, res->log, res->crash);
    memset(res, 0, sizeof *res);
}
