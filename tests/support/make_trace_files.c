/* Writes hand-built trace stream files into a directory, for the command-line tests and
 * as the fuzz seed corpus:
 *   good.embt        three contexts, every slice pair, counters, ISR events, losses
 *   corrupt.embt     good.embt with its third packet's magic broken
 *   truncated.embt   good.embt cut in the middle of its last packet
 *   badmagic.embt    good.embt with a wrong file magic
 *   badcsum.embt     good.embt with catalogue checksum 0x12345678
 *   unknown.embt     good.embt with an event id the catalogue lacks
 *   random.bin       4096 random bytes
 * Usage: make_trace_files DIR */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "trace_builder.h"

static const struct emb_catalog *cat;
static const char *dir;
static size_t third_packet, unknown_event;

static int save(const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static void build_good(struct tb *b)
{
    static const struct tb_ctx ctx[] = {
        {.id = 0, .kind = EMB_CONTEXT_CPU, .packets = 3, .name = "cpu0"},
        {.id = 1, .kind = EMB_CONTEXT_THREAD, .packets = 4, .discarded = 12, .name = "audio"},
        {.id = 2, .kind = EMB_CONTEXT_THREAD, .packets = 1, .name = "net \"rx\""},
    };
    tb_begin(b, cat->checksum, 512, 1000000000u, 1700000000123456789LL, ctx, 3);
    /* cpu0: scheduling, an interrupt, a frame with an interrupt inside it */
    tb_open(b, 0, EMB_CONTEXT_CPU, 0, 1000);
    tb_event(b, cat, 1000, 0, "obj_init", TB_V(0, 1, (uintptr_t)"idle"));
    tb_event(b, cat, 1100, 0, "switch", TB_V(0, 1, 0));
    tb_event(b, cat, 1200, 0, "frame_start", TB_V(1));
    tb_event(b, cat, 1300, tb_isr(1), "irq_enter", TB_V(11));
    tb_event(b, cat, 1350, tb_isr(2), "irq_enter", TB_V(3));
    tb_event(b, cat, 1400, tb_isr(2), "irq_exit", TB_V(3, 0));
    tb_event(b, cat, 1500, 0, "frame_end", TB_V(1)); /* ends while irq 11 is open */
    tb_event(b, cat, 1600, tb_isr(1), "irq_exit", TB_V(11, 1));
    tb_event(b, cat, 1700, 0, "switch", TB_V(1, 2, 1));
    tb_close(b, 1800, 0);
    /* audio: a wait, work, a queue; then 12 events discarded */
    tb_open(b, 1, EMB_CONTEXT_THREAD, 0, 1050);
    tb_event(b, cat, 1060, 0, "wait_begin", TB_V(1, 2, 0x00010002, 5000));
    tb_event(b, cat, 1250, 0, "wait_end", TB_V(1, 0, 190));
    tb_event(b, cat, 1260, 0, "work_start", TB_V(0xCAFE, 10));
    tb_event(b, cat, 1270, 0, "msgq_send", TB_V(0x00030001, 16, 1));
    tb_event(b, cat, 1280, 0, "msgq_send", TB_V(0x00030001, 16, 2));
    tb_event(b, cat, 1290, 0, "work_end", TB_V(0xCAFE, 30));
    tb_event(b, cat, 1295, 0, "work_end", TB_V(0xBEEF, 30)); /* unmatched: dropped */
    tb_close(b, 1300, 12);
    third_packet = tb_open(b, 0, EMB_CONTEXT_CPU, 1, 1800);
    tb_event(b, cat, 1900, 0, "sched_lock", NULL);
    tb_event(b, cat, 1950, 0, "sched_unlock", TB_V(50));
    tb_event(b, cat, 2000, 0, "idle_enter", NULL); /* still open at the end */
    tb_close(b, 2100, 0);
    /* audio after a gap of two packets */
    tb_open(b, 1, EMB_CONTEXT_THREAD, 3, 1900);
    tb_event(b, cat, 1910, 0, "msgq_receive", TB_V(0x00030001, 16, 1));
    unknown_event = tb_event(b, cat, 1920, tb_isr(1), "user_event", TB_V(7, 0xFFFFFFFF, 42));
    tb_event(b, cat, 1930, 2, "partition_fault", TB_V(1, 2, 3, 4, 0x8000123456789ABCull));
    tb_close(b, 1940, 12);
    tb_open(b, 2, EMB_CONTEXT_THREAD, 0, 1000);
    tb_event(b, cat, 1005, 0, "pipe_write", TB_V(0x44, 100));
    tb_event(b, cat, 1010, 0, "thread_exit", TB_V(2, (uint64_t)-3));
    tb_event(b, cat, 1020, 0, "wait_end", TB_V(2, -11, 0)); /* end without begin */
    tb_close(b, 1030, 0);
    tb_open(b, 0, EMB_CONTEXT_CPU, 2, 2100);
    tb_event(b, cat, 2150, 0, "tickless_sleep", TB_V(0x123456789ull));
    tb_close(b, 2200, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_trace_files DIR\n");
        return 2;
    }
    dir = argv[1];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        perror(dir);
        return 1;
    }
    cat = emb_catalog_builtin();
    struct tb b;
    build_good(&b);
    int rc = save("good.embt", b.buf, b.len);

    uint8_t *c = malloc(b.len);
    memcpy(c, b.buf, b.len);
    emb_put_le32(c + third_packet, 0xDEADBEEF);
    rc |= save("corrupt.embt", c, b.len);

    rc |= save("truncated.embt", b.buf, b.len - 300);

    memcpy(c, b.buf, b.len);
    memcpy(c, "EMBX", 4);
    rc |= save("badmagic.embt", c, b.len);

    memcpy(c, b.buf, b.len);
    emb_put_le32(c + EMB_TSF_OFF_CATALOG, 0x12345678);
    rc |= save("badcsum.embt", c, b.len);

    memcpy(c, b.buf, b.len);
    emb_put_le16(c + unknown_event + EMB_EVT_OFF_ID, 0x7777);
    rc |= save("unknown.embt", c, b.len);

    uint8_t rnd[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof rnd; i++) {
        x = x * 1103515245u + 12345u;
        rnd[i] = (uint8_t)(x >> 16);
    }
    rc |= save("random.bin", rnd, sizeof rnd);
    free(c);
    free(b.buf);
    return rc;
}
