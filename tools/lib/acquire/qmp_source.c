/* The capture source that reads a running QEMU guest without halting it (qmp.h): the
 * firmware's rings through its debug descriptor, its RAM read over QMP (and written over
 * qtest, which frees what the host took), the vCPU never stopped. */
#define _GNU_SOURCE
#include "capture_source_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_image.h"
#include "memsrc.h"
#include "qmp.h"

#define MAX_REGIONS 64u

static size_t qmp_mem_read(void *arg, uint64_t addr, void *buf, size_t len)
{
    return emb_qmp_read(arg, addr, buf, len) == 0 ? len : 0;
}

static int qmp_mem_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
    return emb_qmp_write(arg, addr, buf, len);
}

struct emb_mem *emb_qmp_mem_open(struct emb_qmp *q, struct emb_elf *elf, const char *name, char *err,
                                 size_t errlen)
{
    struct emb_elf_region er[MAX_REGIONS];
    struct emb_mem_region ram[MAX_REGIONS];
    size_t n = emb_elf_ram_regions(elf, er, MAX_REGIONS);
    if (n > MAX_REGIONS)
        n = MAX_REGIONS;
    for (size_t i = 0; i < n; i++) {
        ram[i] = (struct emb_mem_region){.addr = er[i].addr, .size = er[i].size};
        snprintf(ram[i].name, sizeof ram[i].name, "%s", er[i].name);
    }
    if (n == 0) {
        snprintf(err, errlen, "%s: no writable section: nothing of it is RAM to read", emb_elf_path(elf));
        return NULL;
    }
    const struct emb_mem_ops ops = {qmp_mem_read, emb_qmp_can_write(q) ? qmp_mem_write : NULL};
    struct emb_mem *m = emb_mem_open_ops(name, &ops, q, ram, n);
    if (m == NULL)
        snprintf(err, errlen, "out of memory");
    else
        emb_mem_set_image(m, elf, 0);
    return m;
}

/* The image's RAM as the memory the reads may reach; NULL after reporting why not. */
static struct emb_mem *qmp_mem_open(struct emb_source_run *c, struct emb_qmp *q, struct emb_elf *elf)
{
    char name[300], err[512];
    snprintf(name, sizeof name, "qmp %s", c->o->target);
    struct emb_mem *m = emb_qmp_mem_open(q, elf, name, err, sizeof err);
    if (m == NULL)
        emb_source_error(c, "%s", err);
    return m;
}

/* The guest must be running when the capture starts and still be when it ends: nothing
 * here stops it, and a guest someone else paused would make the reads look lossless for
 * the wrong reason. With `resume`, a guest started paused is let run once the capture is
 * there to read it. */
static int check_running(struct emb_source_run *c, struct emb_qmp *q, const char *when, bool resume)
{
    bool running = false;
    if (emb_qmp_running(q, &running) != 0) {
        emb_source_error(c, "%s", emb_qmp_error(q));
        return -1;
    }
    if (!running && resume) {
        /* Started paused (-S), so that the capture takes the run from its first event. */
        if (emb_qmp_execute(q, "{\"execute\": \"cont\"}") == NULL) {
            emb_source_error(c, "resuming the guest: %s", emb_qmp_error(q));
            return -1;
        }
        return 0;
    }
    if (!running) {
        emb_source_error(c, "the guest is not running %s (paused, or stopped by a debugger%s)", when,
                         resume ? "" : "; --resume resumes one started paused");
        return -1;
    }
    return 0;
}

static void qmp_stats(struct emb_source_run *c, const struct emb_qmp_stats *qs)
{
    uint64_t n = qs->reads + qs->writes;
    c->st->live = true;
    c->st->halts = 0;
    c->st->round_trips = qs->requests;
    c->st->bytes_read = qs->bytes_read;
    c->st->bytes = qs->bytes_read;
    c->st->live_reads = qs->reads;
    c->st->live_writes = qs->writes;
    c->st->access_ms_avg = n ? (double)qs->ns_total / (double)n / 1e6 : 0.0;
    c->st->access_ms_max = (double)qs->ns_max / 1e6;
}

int emb_source_qmp(struct emb_source_run *c)
{
    const struct emb_source_options *o = c->o;
    char err[512];
    if (o->elf == NULL) {
        emb_source_error(c, "reading the guest through its descriptor needs the firmware: --elf FW");
        return -1;
    }
    struct emb_elf *elf = emb_elf_open(o->elf, err, sizeof err);
    if (elf == NULL) {
        emb_source_error(c, "%s", err);
        return -1;
    }
    struct emb_qmp *q = emb_qmp_connect(o->target, o->qtest, 2000, err, sizeof err);
    if (q == NULL) {
        emb_source_error_named(c, err);
        emb_elf_close(elf);
        return -1;
    }
    struct emb_mem *m = qmp_mem_open(c, q, elf);
    int rc = m && check_running(c, q, "when the capture starts", o->resume) == 0
                 ? emb_source_descriptor(c, elf, m, !emb_qmp_can_write(q))
                 : -1;
    if (rc == 0 && check_running(c, q, "when the capture ended", false) != 0)
        rc = -1;
    qmp_stats(c, emb_qmp_stats(q));
    emb_mem_close(m);
    emb_qmp_close(q);
    emb_elf_close(elf);
    return rc;
}
