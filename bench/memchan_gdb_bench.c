/* Memory-channel polling over the GDB remote protocol (bench/transport.sh): QEMU's
 * mps2-an385 runs examples/mps2_memchan with `fw_stream` set, which keeps its 16 KiB up
 * ring full of frames; the host polls it the way `emb capture --gdb` does (halt, read the
 * ring's indices and bytes, write the read index, resume) at several poll intervals for a
 * few seconds each, and reports the throughput and how long each poll halted the target
 * (from sending the interrupt to the resume, as the host sees it).
 *
 * Usage: memchan_gdb_bench QEMU FIRMWARE.elf WORKDIR [SECONDS]   (prints JSON)
 */
#include "qemu_run.h"

#include <time.h>

#include "elf_sym.h"
#include "frame_decode.h"
#include "gdb_rsp.h"
#include "memaccess.h"
#include "memchan_host.h"

static uint64_t frames, payload;
static void on_frame(void *arg, uint8_t ch, const uint8_t *p, size_t len, uint64_t off)
{
    (void)arg;
    (void)ch;
    (void)p;
    (void)off;
    frames++;
    payload += len;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: memchan_gdb_bench QEMU FIRMWARE.elf WORKDIR [SECONDS]\n");
        return 2;
    }
    double seconds = argc > 4 ? atof(argv[4]) : 3.0;
    char err[256], log[1024];
    snprintf(log, sizeof log, "%s/memchan_gdb_bench.log", argv[3]);
    uint64_t memchan_addr, stream_addr;
    if (emb_elf_file_symbol(argv[2], "emb_memchan", &memchan_addr, NULL, err, sizeof err) ||
        emb_elf_file_symbol(argv[2], "fw_stream", &stream_addr, NULL, err, sizeof err)) {
        fprintf(stderr, "memchan_gdb_bench: %s\n", err);
        return 1;
    }
    struct qemu_run q;
    if (qemu_start(&q, argv[1], "mps2-an385", argv[2], log) != 0)
        return 1;
    struct emb_gdb *g = NULL;
    for (int i = 0; i < 100 && g == NULL; i++) {
        qemu_sleep_ms(50);
        g = emb_gdb_connect(q.gdb, 2000, err, sizeof err);
    }
    if (g == NULL) {
        fprintf(stderr, "memchan_gdb_bench: %s\n", err);
        qemu_stop(&q);
        return 1;
    }
    emb_gdb_resume(g);
    qemu_sleep_ms(300);
    emb_gdb_halt(g);
    uint32_t one = 1;
    emb_gdb_write(g, stream_addr, &one, 4);
    struct emb_memchan_host_ops ops = emb_memaccess_gdb(g);
    struct emb_memchan_host_range ram = {0x20000000u, 0x20400000u};
    struct emb_memchan_host m;
    if (emb_memchan_host_open(&m, &ops, memchan_addr, 4, &ram, 1, err, sizeof err) != 0) {
        fprintf(stderr, "memchan_gdb_bench: %s\n", err);
        qemu_stop(&q);
        return 1;
    }
    /* One 16 KiB read while halted, alone: the protocol's cost without the ring logic. */
    static uint8_t buf[1 << 16];
    double t0 = now();
    for (int i = 0; i < 20; i++)
        emb_gdb_read(g, m.up[0].buf, buf, 16384);
    double read16k_ms = (now() - t0) / 20 * 1e3;
    emb_gdb_resume(g);

    printf("{\"block\": %zu, \"ring_bytes\": %u, \"read_16k_ms\": %.3f, \"polls\": [\n",
           emb_gdb_block(g), (unsigned)m.up[0].size, read16k_ms);
    static const int intervals[] = {0, 1, 10, 50};
    for (size_t k = 0; k < sizeof intervals / sizeof intervals[0]; k++) {
        struct emb_frame_dec *d = emb_frame_dec_new(4096, true, on_frame, NULL, NULL);
        frames = payload = 0;
        uint64_t bytes = 0, polls = 0;
        double halted = 0, halt_max = 0;
        t0 = now();
        while (now() - t0 < seconds) {
            size_t got;
            double h0 = now();
            if (emb_gdb_halt(g) != 0 || emb_memchan_host_read_up(&m, 0, buf, sizeof buf, &got, err, sizeof err) != 0) {
                fprintf(stderr, "memchan_gdb_bench: %s %s\n", err, emb_gdb_error(g));
                break;
            }
            emb_gdb_resume(g);
            double h = now() - h0;
            halted += h;
            if (h > halt_max)
                halt_max = h;
            emb_frame_dec_feed(d, buf, got);
            bytes += got;
            polls++;
            if (intervals[k] > 0)
                qemu_sleep_ms((unsigned)intervals[k]);
        }
        double t = now() - t0;
        printf("%s  {\"interval_ms\": %d, \"seconds\": %.2f, \"polls\": %llu, \"kb_per_s\": %.1f, "
               "\"frames\": %llu, \"damaged\": %llu, \"halt_ms_avg\": %.3f, \"halt_ms_max\": %.3f, "
               "\"halted_pct\": %.1f}",
               k ? ",\n" : "", intervals[k], t, (unsigned long long)polls, (double)bytes / 1024.0 / t,
               (unsigned long long)frames, (unsigned long long)emb_frame_dec_stats(d)->dropped,
               polls ? halted / (double)polls * 1e3 : 0.0, halt_max * 1e3, halted / t * 100.0);
        emb_frame_dec_free(d);
    }
    printf("\n]}\n");
    emb_gdb_detach(g);
    emb_gdb_close(g);
    qemu_stop(&q);
    return 0;
}
