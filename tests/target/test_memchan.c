/* The memory channel in both layouts (built twice: CONFIG_EMB_MEMCHAN_RTT_COMPAT 0 and 1):
 * the target's control block read by the host side through this process's own memory
 * (process_vm_readv), found by scanning and opened, frames up and a shell command down and
 * its reply up, a full ring dropping whole frames, and every lie the block can tell (absurd
 * counts and sizes, buffers outside the allowed memory, offsets past the end, an
 * unpublished block) refused with a message. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <emb/frame.h>
#include <emb/memchan.h>
#include <emb/port.h>
#include <emb/shell.h>
#include <emb/wire.h>

#include "frame_decode.h"
#include "harness.h"
#include "elf_sym.h"
#include "memaccess.h"
#include "memchan_host.h"

/* The test port's hooks (tests/target/testport): the shell asks the trace for its window. */
uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);
uint64_t emb_port_timestamp_hz(void) { return 1000000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return NULL; }

static uint8_t up0[4096], up1[64], down0[256];

struct got {
    unsigned frames, replies;
    uint8_t reply[16];
    size_t reply_len;
    uint32_t last_seq;
    int in_order;
};

static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)off;
    struct got *g = arg;
    if (ch == EMB_FRAME_CH_SHELL) {
        g->replies++;
        g->reply_len = len < sizeof g->reply ? len : sizeof g->reply;
        memcpy(g->reply, p, g->reply_len);
    } else if (ch == EMB_FRAME_CH_TRACE && len == 100) {
        uint32_t seq = emb_get_le32(p);
        if (g->frames > 0 && seq != g->last_seq + 1u)
            g->in_order = 0;
        g->last_seq = seq;
        g->frames++;
    }
}

static size_t read_all(struct emb_memchan_host *m, struct emb_frame_dec *d)
{
    static uint8_t buf[8192];
    size_t got = 0, total = 0;
    char err[256];
    do {
        if (emb_memchan_host_read_up(m, 0, buf, sizeof buf, &got, err, sizeof err) != 0) {
            diag("read up: %s", err);
            return total;
        }
        emb_frame_dec_feed(d, buf, got);
        total += got;
    } while (got > 0);
    return total;
}

int main(void)
{
    const int rtt = CONFIG_EMB_MEMCHAN_RTT_COMPAT;
    diag("layout: %s", rtt ? "SEGGER RTT" : "native");
    pid_t self = getpid();
    struct emb_memchan_host_ops ops = emb_memaccess_pid(&self);
    struct emb_memchan_host_range ranges[256];
    char err[256];
    int nr = emb_memaccess_pid_ranges(self, ranges, 256, err, sizeof err);
    ok(nr > 0, "this process's writable memory: %d ranges", nr);
    uint64_t addr = 0;
    struct emb_memchan_host m;
    int rc;

    /* Not published yet: nothing to find. */
    ok(emb_memchan_host_open(&m, &ops, (uint64_t)(uintptr_t)&emb_memchan, sizeof(void *), ranges,
                    (size_t)nr, err, sizeof err) != 0 && strstr(err, "no memory channel"),
       "an unpublished block is refused: %s", err);

    const struct emb_memchan_buffer up[2] = {{"frames", up0, sizeof up0}, {"spare", up1, sizeof up1}};
    const struct emb_memchan_buffer down[1] = {{"shell", down0, sizeof down0}};
    ok(emb_memchan_init(up, 2, down, 1) == EMB_OK, "init: 2 up rings, 1 down ring");
    struct emb_memchan_host_range scan[256];
    size_t ns = emb_memaccess_scan_ranges(ranges, (size_t)nr, scan);
    rc = emb_memchan_host_find(&ops, scan, ns, &addr, err, sizeof err);
    ok(rc == 0 && addr == (uint64_t)(uintptr_t)&emb_memchan, "found by scanning memory at 0x%llx",
       (unsigned long long)addr);
    rc = emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err);
    ok(rc == 0 && m.rtt == (rtt != 0) && m.nup == 2 && m.ndown == 1 && m.up[0].size == sizeof up0 &&
       m.up[1].size == sizeof up1 && !strcmp(m.up[0].name, "frames") && !strcmp(m.down[0].name, "shell"),
       "opened: the %s layout, rings and names as set up (%s)", m.rtt ? "RTT" : "native",
       rc ? err : "ok");
#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
    ok(!memcmp(emb_memchan.id, "SEGGER RTT", 11) && emb_memchan.max_up == 2 &&
       emb_memchan.max_down == 1 && emb_memchan.up[0].buf == up0 && emb_memchan.up[0].size == sizeof up0 &&
       offsetof(struct emb_memchan, up) == 24u &&
       sizeof(struct emb_memchan_ring) == 2u * sizeof(void *) + 16u,
       "laid out as SEGGER RTT's control block: acID, MaxNumUpBuffers at 16, aUp[] at 24");
    /* Probe tools find the block by the name SEGGER_RTT.c gives it: this executable's
     * symbol table, read from its ELF file, must name it. */
    uint64_t rtt_sym = 0;
    rc = emb_elf_process_symbol(self, "_SEGGER_RTT", &rtt_sym, err, sizeof err);
    ok(rc == 0 && rtt_sym == (uint64_t)(uintptr_t)&emb_memchan,
       "the ELF's _SEGGER_RTT symbol is the block (0x%llx)", (unsigned long long)rtt_sym);
#endif

    /* Frames up: the host takes them in order, in pieces as the ring wraps. */
    struct got g = {.in_order = 1};
    struct emb_frame_dec *d = emb_frame_dec_new(1024, false, on_frame, NULL, &g);
    uint8_t payload[100];
    uint32_t seq = 0;
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 7; k++) {
            emb_put_le32(payload, seq);
            memset(payload + 4, 0x5A ^ (int)seq, sizeof payload - 4);
            if (emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, payload, sizeof payload) == EMB_OK)
                seq++;
        }
        read_all(&m, d);
    }
    ok(g.frames == seq && seq == 140 && g.in_order && emb_frame_dec_stats(d)->dropped == 0,
       "140 frames up through a wrapping ring, in order, none damaged (%u)", g.frames);

    /* A full ring drops whole frames and counts them. */
    uint32_t drops = emb_memchan_drops();
    int sent = 0;
    for (int k = 0; k < 60; k++) {
        emb_put_le32(payload, seq);
        if (emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, payload, sizeof payload) == EMB_OK) {
            seq++;
            sent++;
        }
    }
    unsigned before = g.frames;
    read_all(&m, d);
    ok(emb_memchan_drops() - drops == (uint32_t)(60 - sent) && g.frames - before == (unsigned)sent &&
       g.in_order && emb_frame_dec_stats(d)->dropped == 0,
       "a full ring: %d frames in, %u dropped whole, the rest read intact", sent,
       emb_memchan_drops() - drops);

    /* A command down, its reply up. */
    uint8_t cmd[5] = {EMB_SHELL_PING};
    emb_put_le32(cmd + 1, 0xC0FFEE01u);
    uint8_t frame[32];
    size_t fl = emb_frame_encode(frame, sizeof frame, EMB_FRAME_CH_SHELL, cmd, sizeof cmd);
    size_t written = 0;
    ok(emb_memchan_host_write_down(&m, 0, frame, fl, &written, err, sizeof err) == 0 && written == fl,
       "PING written down");
    ok(emb_memchan_poll_shell(0, 0) == 1, "the target handles one command");
    read_all(&m, d);
    ok(g.replies == 1 && g.reply[0] == (EMB_SHELL_PING | EMB_SHELL_REPLY) && g.reply[1] == EMB_OK &&
       emb_get_le32(g.reply + 2) == 0xC0FFEE01u, "its reply comes up with the cookie");
    bool same;
    ok(emb_memchan_host_check(&m, &same, err, sizeof err) == 0 && same, "the block is still the one opened");

    /* Lies the block may tell. */
#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
    int32_t save_max = emb_memchan.max_up;
    emb_memchan.max_up = 1000;
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "absurd"), "RTT: 1000 up buffers refused: %s", err);
    emb_memchan.max_up = -1;
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "absurd"), "RTT: a negative count refused: %s", err);
    emb_memchan.max_up = save_max;
    ok(emb_memchan_host_open(&m, &ops, addr, 3, ranges, (size_t)nr, err, sizeof err) != 0,
       "RTT: a pointer size other than 4 or 8 refused: %s", err);
    uint8_t *save_buf = emb_memchan.up[0].buf;
    emb_memchan.up[0].buf = (uint8_t *)(uintptr_t)0x10u;
#else
    uint8_t save_count = emb_memchan.up_count;
    emb_memchan.up_count = 200;
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "absurd"), "200 up rings refused: %s", err);
    emb_memchan.up_count = save_count;
    emb_memchan.version = 9;
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "version 9"), "an unknown version refused: %s", err);
    emb_memchan.version = EMB_MEMCHAN_VERSION;
    uint64_t save_buf = emb_memchan.up[0].buf;
    emb_memchan.up[0].buf = 0x10u;
#endif
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "outside"), "a buffer outside the allowed memory refused: %s", err);
    emb_memchan.up[0].buf = save_buf;
    uint32_t save_size = emb_memchan.up[0].size;
    emb_memchan.up[0].size = 0x7FFFFFF0u;
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "absurd"), "an absurd ring size refused: %s", err);
    emb_memchan.up[0].size = save_size;
    uint32_t save_wr = emb_memchan.up[0].wr;
    emb_memchan.up[0].wr = save_size + 5u;
    ok(emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err) != 0 &&
       strstr(err, "beyond"), "an offset past the ring's end refused: %s", err);
    emb_memchan.up[0].wr = save_wr;
    rc = emb_memchan_host_open(&m, &ops, addr, sizeof(void *), ranges, (size_t)nr, err, sizeof err);
    ok(rc == 0, "restored, it opens again (%s)", rc ? err : "ok");

    /* The host writes an offset past the end: the target stops writing to that ring. */
    uint32_t save_rd = emb_memchan.up[0].rd;
    emb_memchan.up[0].rd = save_size + 1u;
    ok(emb_memchan_space(0) == 0 &&
       emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, payload, sizeof payload) != EMB_OK,
       "a read offset past the end: the target writes nothing");
    emb_memchan.up[0].rd = save_rd;

    /* Started again: a new generation (native) or the same identifier (RTT). */
    ok(emb_memchan_init(up, 1, down, 1) == EMB_OK, "init again");
    ok(emb_memchan_host_check(&m, &same, err, sizeof err) == 0 && (rtt ? same : !same),
       "a host notices the restart (%s)", rtt ? "RTT: no generation to compare" : "native: new generation");
    emb_frame_dec_free(d);
    return emb_test_done();
}
