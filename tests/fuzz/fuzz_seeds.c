/* Writes fuzz seeds made by the project's own producers, so each target starts from what
 * it really reads (`fuzz_seeds DIR SCENARIO OPS [FRAMES]`, each into DIR/<target>/):
 *
 *   memchan/        this process's memory channel, set up and written by the target's
 *                   src/memchan.c, dumped region by region at the addresses it has here
 *                   (the block, each ring's buffer and name: fuzz_image.h), as a debugger
 *                   sees the process; built once per layout (native, SEGGER RTT);
 *   server_input/   (native layout build) the bytes a client sends the TCP record server:
 *                   every shell command of docs/formats/shell.md framed by the target's
 *                   frame encoder, a frame of another channel, junk; and the same
 *                   commands as bare payloads for the target's second mode;
 *   shell/          the same commands for the handler itself;
 *   events_client/  the replies of the real sink (tools/lib/events/events_sink.c) to each query,
 *                   after the messages of SCENARIO (tests/fuzz/corpus/events_sink), with
 *                   the ops file OPS (examples/services/ops.txt);
 *   trace_assemble/ (with FRAMES, a file of frames transport_target recorded) the file,
 *                   and its channel-1 payloads as [len:u16 le][bytes] for the target's
 *                   second mode, split at the delimiters by the target's frame decoder. */
#include <emb/frame.h>
#include <emb/memchan.h>
#include <emb/shell.h>
#include <emb/svc_trace.h>
#include <emb/trace.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "events_sink.h"

/* The test port's knobs (tests/target/testport). */
uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return NULL; } /* nothing traces */

#if CONFIG_EMB_MEMCHAN_RTT_COMPAT
#define LAYOUT "rtt"
#else
#define LAYOUT "native"
#endif

static const char *out_dir;

static FILE *create(const char *target, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, target, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    return f;
}

static void done(FILE *f)
{
    if (ferror(f) | fclose(f)) {
        perror("fuzz_seeds");
        exit(1);
    }
}

/* ---- memchan ---- */

static uint8_t up0[512], up1[64], down0[64];
static const char name_trace[] = "trace", name_log[] = "log", name_shell[] = "shell";

static void region(FILE *f, const void *p, size_t n)
{
    uint8_t h[12];
    uint64_t a = (uint64_t)(uintptr_t)p;
    for (int i = 0; i < 8; i++)
        h[i] = (uint8_t)(a >> (8 * i));
    for (int i = 0; i < 4; i++)
        h[8 + i] = (uint8_t)(n >> (8 * i));
    fwrite(h, 1, sizeof h, f);
    fwrite(p, 1, n, f);
}

static void memchan_image(const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", LAYOUT, what);
    FILE *f = create("memchan", name);
    fputc(sizeof(void *) == 4 ? 1 : 0, f);
    region(f, &emb_memchan, sizeof emb_memchan);
    region(f, up0, sizeof up0);
    region(f, up1, sizeof up1);
    region(f, down0, sizeof down0);
    region(f, name_trace, sizeof name_trace);
    region(f, name_log, sizeof name_log);
    region(f, name_shell, sizeof name_shell);
    done(f);
}

static void memchan(void)
{
    const struct emb_memchan_buffer up[] = {{name_trace, up0, sizeof up0}, {name_log, up1, sizeof up1}};
    const struct emb_memchan_buffer down[] = {{name_shell, down0, sizeof down0}};
    if (emb_memchan_init(up, 2, down, 1) != EMB_OK)
        exit(1);
    static const uint8_t packet[40] = {1, 2, 3, 4, 0, 0, 5};
    emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, packet, sizeof packet);
    emb_memchan_send_frame(1, EMB_FRAME_CH_LOG, "log 1", 5);
    memchan_image("fresh");
    for (int i = 0; i < 8; i++) /* the log ring written until it drops */
        emb_memchan_send_frame(1, EMB_FRAME_CH_LOG, "log 2, longer", 13);
    memchan_image("full");
}

/* ---- shell commands ---- */

static const struct {
    const char *name;
    uint8_t len;
    uint8_t bytes[8];
} commands[] = {
    {"ping", 1, {EMB_SHELL_PING}},
    {"ping-cookie", 5, {EMB_SHELL_PING, 0x78, 0x56, 0x34, 0x12}},
    {"arm", 1, {EMB_SHELL_ARM_WINDOW}},
    {"arm-at", 5, {EMB_SHELL_ARM_WINDOW, 5, 0, 0, 0}},
    {"log-level", 4, {EMB_SHELL_SET_LOG_LEVEL, 0xFF, 0xFF, 3}},
    {"log-level-short", 2, {EMB_SHELL_SET_LOG_LEVEL, 1}},
    {"snapshot", 1, {EMB_SHELL_SNAPSHOT}},
    {"unknown", 2, {0x7F, 1}},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void shell(void)
{
    for (size_t c = 0; c < NCOMMANDS; c++) {
        FILE *f = create("shell", commands[c].name);
        fputc(0x03, f); /* window mode, hooks installed */
        fputc(commands[c].len, f);
        fwrite(commands[c].bytes, 1, commands[c].len, f);
        done(f);
    }
    FILE *f = create("shell", "all");
    fputc(0x01, f);
    for (size_t c = 0; c < NCOMMANDS; c++) {
        fputc(commands[c].len, f);
        fwrite(commands[c].bytes, 1, commands[c].len, f);
    }
    done(f);
}

static void server_input(void)
{
    uint8_t wire[EMB_FRAME_WIRE_MAX(64)];
    FILE *f = create("server_input", "frames");
    fputc(0x00, f);
    for (size_t c = 0; c < NCOMMANDS; c++)
        fwrite(wire, 1, emb_frame_encode(wire, sizeof wire, EMB_FRAME_CH_SHELL, commands[c].bytes,
                                         commands[c].len), f);
    fwrite(wire, 1, emb_frame_encode(wire, sizeof wire, EMB_FRAME_CH_LOG, "not a command", 13), f);
    fwrite("\x01\x02junk without a delimiter", 1, 26, f);
    done(f);
    f = create("server_input", "payloads");
    fputc(0x01, f);
    for (size_t c = 0; c < NCOMMANDS; c++) {
        fputc(commands[c].len, f);
        fwrite(commands[c].bytes, 1, commands[c].len, f);
    }
    done(f);
}

/* ---- events replies ---- */

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    static uint8_t buf[1u << 16];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void events_client(const char *scenario, const char *ops_path)
{
    struct emb_events_sink_config cfg;
    emb_events_sink_config_default(&cfg);
    struct emb_events_sink *s = emb_events_sink_new(&cfg);
    if (s == NULL)
        exit(1);
    static uint8_t reply[EMB_EVENTS_REPLY_MAX];
    size_t size;
    const uint8_t *d = slurp(scenario, &size);
    uint32_t now = 100;
    while (size >= 2) {
        size_t len = d[1] < size - 2 ? d[1] : size - 2;
        enum emb_events_origin from = (d[0] & 1) ? EMB_EVENTS_FROM_QUERY : EMB_EVENTS_FROM_INTAKE;
        now += d[0] >> 4;
        emb_events_sink_handle(s, from, d + 2, len, now, reply);
        d += 2 + len;
        size -= 2 + len;
    }
    size_t ops_len;
    static uint8_t ops[1u << 16];
    memcpy(ops, slurp(ops_path, &ops_len), ops_len);
    static const char *const names[] = {"status", "dump", "metrics", "logs"};
    for (unsigned kind = 0; kind < 4; kind++) {
        uint8_t q[16];
        size_t qn = kind == 0   ? emb_svc_encode_status(q, sizeof q)
                    : kind == 1 ? emb_svc_encode_dump(q, sizeof q, 255)
                    : kind == 2 ? emb_svc_encode_metrics(q, sizeof q)
                                : emb_svc_encode_logs(q, sizeof q, 0);
        long n = emb_events_sink_handle(s, EMB_EVENTS_FROM_QUERY, q, qn, now, reply);
        if (n < 0)
            exit(1);
        FILE *f = create("events_client", names[kind]);
        fputc((int)kind, f);
        fputc((int)(ops_len & 0xFF), f);
        fputc((int)(ops_len >> 8), f);
        fwrite(ops, 1, ops_len, f);
        fwrite(reply, 1, (size_t)n, f);
        done(f);
    }
    emb_events_sink_free(s);
}

static void trace_assemble(const char *frames)
{
    size_t size;
    const uint8_t *d = slurp(frames, &size);
    FILE *f = create("trace_assemble", "frames");
    fwrite(d, 1, size, f);
    done(f);
    f = create("trace_assemble", "payloads");
    fputc(0x01, f);
    static uint8_t out[1u << 16];
    for (size_t i = 0; i < size;) {
        const uint8_t *end = memchr(d + i, EMB_FRAME_DELIMITER, size - i);
        size_t n = end ? (size_t)(end - (d + i)) : size - i;
        uint8_t channel;
        size_t len;
        if (n > 0 && emb_frame_decode_one(d + i, n, out, &channel, &len) == EMB_FRAME_OK &&
            channel == EMB_FRAME_CH_TRACE) {
            fputc((int)(len & 0xFF), f);
            fputc((int)(len >> 8), f);
            fwrite(out + 1, 1, len, f);
        }
        i += n + 1;
    }
    done(f);
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: fuzz_seeds DIR SCENARIO OPS [FRAMES]\n");
        return 2;
    }
    out_dir = argv[1];
    memchan();
    if (!CONFIG_EMB_MEMCHAN_RTT_COMPAT) { /* the rest once, from the native build */
        shell();
        server_input();
        events_client(argv[2], argv[3]);
        if (argc == 5)
            trace_assemble(argv[4]);
    }
    return 0;
}
