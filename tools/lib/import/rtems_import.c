/* RTEMS record stream to trace stream. */
#define _POSIX_C_SOURCE 200809L
#include "rtems_import.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <emb/wire.h>

#include "catalog_known.h"
#include "rtems_record_catalog.h"
#include "trace_replay.h"

struct emb_rtems_import {
    struct emb_rtems_import_options opt;
    struct emb_rtems_record *rr;
    struct emb_replay *replay;
    const struct emb_catalog *cat;
    struct emb_catalog *own_cat;
    int ctx_of_cpu[EMB_RTEMS_RECORD_MAX_CPUS];
    struct emb_rtems_import_stats stats;
    bool failed;            /* the import stopped the reader (and said why) */
};

/* The reader knows only that its handler refused the event: the import says why, at the
 * item's offset. An expression worth -1. */
#define import_fail(imp, offset, ...)                                                    \
    ((imp)->failed = true,                                                               \
     emb_report(emb_rtems_record_problems((imp)->rr), EMB_ERROR, (long long)(offset),    \
                __VA_ARGS__),                                                            \
     -1)

static void random_uuid(uint8_t uuid[16])
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, uuid, 16) != 16)
        memset(uuid, 0x5A, 16);
    if (fd >= 0)
        close(fd);
    uuid[6] = (uint8_t)((uuid[6] & 0x0Fu) | 0x40u);
    uuid[8] = (uint8_t)((uuid[8] & 0x3Fu) | 0x80u);
}

/* A catalogue no reader knows by its checksum (a table read from a file, a version's
 * nearest) travels in the stream's header, so the stream decodes with no --catalog. */
static int carry_catalog(struct emb_rtems_import *imp, uint64_t offset)
{
    if (imp->own_cat == NULL || emb_catalog_known(imp->own_cat->checksum) != NULL)
        return 0;
    size_t len = 0;
    char *yaml = emb_rtems_record_catalog_yaml(emb_rtems_record_info(imp->rr)->table, &len);
    int rc = yaml != NULL ? emb_replay_carry_catalog(imp->replay, yaml, len) : -1;
    free(yaml);
    return rc == 0 ? 0 : import_fail(imp, offset, "out of memory keeping the catalogue");
}

/* The first event carries the version: the catalogue and the output start there. */
static int start_output(struct emb_rtems_import *imp, uint64_t offset)
{
    const struct emb_rtems_record_info *info = emb_rtems_record_info(imp->rr);
    if (imp->opt.table != NULL || !info->table_exact) {
        /* A table read from a file, or the nearest known one, gets its own catalogue
         * (the same as a built-in one when the names are the same). */
        char err[256];
        imp->own_cat = emb_rtems_record_catalog(info->table, err, sizeof err);
        imp->cat = imp->own_cat;
        if (imp->cat == NULL)
            return import_fail(imp, offset, "the event names make no catalogue: %s", err);
    } else {
        imp->cat = emb_rtems_record_catalog_builtin(info->version);
    }
    char port[EMB_TSF_PORT_MAX];
    snprintf(port, sizeof port, "rtems-record v%u %s%u", info->version,
             info->big_endian ? "be" : "le", info->data_size * 8u);
    struct emb_tsf_info ti = {
        .catalog_checksum = imp->cat->checksum,
        .clock_hz = 1000000000u,
        .clock_offset_ns = 0, /* uptime: the stream does not say when the system booted */
        .pointer_size = (uint8_t)info->data_size,
        .port = port,
    };
    random_uuid(ti.uuid);
    imp->replay = emb_replay_new(&ti);
    if (imp->replay == NULL)
        return import_fail(imp, offset, "cannot start the trace writer (out of memory, or "
                           "another replay open in this process)");
    return carry_catalog(imp, offset);
}

static int context_of(struct emb_rtems_import *imp, uint32_t cpu)
{
    if (imp->ctx_of_cpu[cpu] < 0) {
        char name[16];
        snprintf(name, sizeof name, "cpu%u", cpu);
        imp->ctx_of_cpu[cpu] = emb_replay_context(imp->replay, (uint16_t)cpu, EMB_CONTEXT_CPU, name);
    }
    return imp->ctx_of_cpu[cpu];
}

static int on_event(void *arg, const struct emb_rtems_record_event *ev)
{
    struct emb_rtems_import *imp = arg;
    if (imp->replay == NULL && start_output(imp, ev->offset) != 0)
        return -1;
    const struct emb_rtems_record_info *info = emb_rtems_record_info(imp->rr);
    enum emb_rtems_record_role role = emb_rtems_record_event_role(info->table, ev->event);
    bool made = ev->made;
    if (!made)
        imp->stats.items++;
    if (ev->event == EMB_RTEMS_RECORD_EV_OVERFLOW || role == EMB_RTEMS_RECORD_ROLE_OVERFLOW) {
        imp->stats.overflows++;
        imp->stats.lost += ev->data;
        emb_replay_lost(imp->replay, context_of(imp, ev->cpu), (uint32_t)ev->data);
    }
    if (made && (ev->event == EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT || role == EMB_RTEMS_RECORD_ROLE_TIME_ADJUSTMENT))
        imp->stats.adjustments++;
    if (ev->unreliable)
        imp->stats.unreliable++;
    bool drop = !imp->opt.keep_control && !made &&
                (role == EMB_RTEMS_RECORD_ROLE_PROCESSOR || role == EMB_RTEMS_RECORD_ROLE_TAIL ||
                 role == EMB_RTEMS_RECORD_ROLE_HEAD || role == EMB_RTEMS_RECORD_ROLE_EMPTY);
    if (!drop) {
        uint8_t payload[8];
        emb_put_le64(payload, ev->data);
        int ctx = context_of(imp, ev->cpu);
        if (ctx < 0 || emb_replay_event(imp->replay, ctx, ev->ns, emb_rtems_record_catalog_id(ev->event),
                                        payload, sizeof payload) != 0)
            return import_fail(imp, ev->offset, "cannot write the event of processor %u (out "
                               "of memory, or too many processors)", ev->cpu);
        if (imp->stats.events == 0 || ev->ns < imp->stats.first_ns)
            imp->stats.first_ns = ev->ns;
        if (ev->ns > imp->stats.last_ns)
            imp->stats.last_ns = ev->ns;
        imp->stats.events++;
    }
    if (imp->opt.max_items != 0 && imp->stats.items >= imp->opt.max_items) {
        imp->stats.done = true;
        return 1;
    }
    return 0;
}

struct emb_rtems_import *emb_rtems_import_new(const struct emb_rtems_import_options *opt)
{
    struct emb_rtems_import *imp = calloc(1, sizeof *imp);
    if (imp == NULL)
        return NULL;
    if (opt != NULL)
        imp->opt = *opt;
    for (unsigned i = 0; i < EMB_RTEMS_RECORD_MAX_CPUS; i++)
        imp->ctx_of_cpu[i] = -1;
    struct emb_rtems_record_options ro = {
        .handler = on_event, .arg = imp, .table = imp->opt.table, .problems = imp->opt.problems};
    imp->rr = emb_rtems_record_new(&ro);
    if (imp->rr == NULL) {
        free(imp);
        return NULL;
    }
    return imp;
}

int emb_rtems_import_feed(struct emb_rtems_import *imp, const void *buf, size_t n)
{
    if (imp->stats.done)
        return 0;
    if (emb_rtems_record_feed(imp->rr, buf, n) != 0 && !imp->stats.done)
        return -1;
    return 0;
}

int emb_rtems_import_finish(struct emb_rtems_import *imp)
{
    if (imp->stats.done)
        return 0;
    return emb_rtems_record_finish(imp->rr);
}

int emb_rtems_import_stop(struct emb_rtems_import *imp)
{
    if (imp->stats.done)
        return 0;
    return emb_rtems_record_stop(imp->rr);
}

bool emb_rtems_import_failed(const struct emb_rtems_import *imp)
{
    return !imp->stats.done && (imp->failed || emb_rtems_record_failed(imp->rr));
}

const struct emb_rtems_record_info *emb_rtems_import_info(const struct emb_rtems_import *imp)
{
    return emb_rtems_record_info(imp->rr);
}

const struct emb_rtems_import_stats *emb_rtems_import_stats(const struct emb_rtems_import *imp)
{
    return &imp->stats;
}

const struct emb_catalog *emb_rtems_import_catalog(const struct emb_rtems_import *imp)
{
    return imp->cat;
}

int emb_rtems_import_write(struct emb_rtems_import *imp, FILE *out)
{
    if (imp->replay == NULL)
        return -1;
    return emb_replay_write(imp->replay, out);
}

void emb_rtems_import_free(struct emb_rtems_import *imp)
{
    if (imp == NULL)
        return;
    emb_replay_free(imp->replay);
    emb_rtems_record_free(imp->rr);
    if (imp->own_cat != NULL)
        emb_catalog_free(imp->own_cat);
    free(imp);
}
