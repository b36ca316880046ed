/* IMMEDIATE mode (CONFIG_EMB_LOG_IMMEDIATE=1, this file only): each call site writes its
 * record to the output itself, so the stream file grows with every call although the
 * worker, asleep for 100 s, never drains; a signal handler's calls too. Then the stream is
 * decoded: every record, in order, no error. */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "log_decode.h"

EMB_LOG_MODULE_DEFINE(boot, EMB_LOG_LEVEL_DBG);

static volatile sig_atomic_t in_handler_done;

static void on_signal(int signo)
{
    (void)signo;
    EMB_LOG_WRN(boot, "from the handler");
    in_handler_done = 1;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static unsigned records, errors, handler_records;
static char last[64];

static void on_record(void *arg, const struct emb_logrec *r)
{
    (void)arg;
    if (r->type != EMB_LREC_LOG)
        return;
    records++;
    if (r->text_len == strlen("from the handler") && memcmp(r->text, "from the handler", r->text_len) == 0)
        handler_records++;
    snprintf(last, sizeof last, "%.*s", (int)r->text_len, r->text);
}

static void on_problem(void *arg, uint64_t offset, bool error, const char *msg)
{
    (void)arg;
    if (error) {
        errors++;
        diag("decoder: byte %llu: %s", (unsigned long long)offset, msg);
    }
}

int main(void)
{
    ok(CONFIG_EMB_LOG_IMMEDIATE == 1, "built in IMMEDIATE mode");
    char path[] = "/tmp/emb-log-immediate-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    struct emb_native_config nc = {.stream_fd = -1};
    ok_eq(emb_native_init(&nc), EMB_OK, "native port started");
    struct emb_native_log_config lc = {.path = path, .fd = -1, .period_us = 100000000u,
                                       .hello_period_ms = 1000000u};
    ok_eq(emb_native_log_start(&lc), EMB_OK, "log started, its worker asleep");
    signal(SIGUSR1, on_signal);

    unsigned grew = 0;
    for (unsigned i = 0; i < 50; i++) {
        off_t before = size_of(path);
        EMB_LOG_INF(boot, "early boot step %u", i);
        grew += size_of(path) > before;
    }
    ok_eq(grew, 50, "the stream grew at every call");
    off_t before = size_of(path);
    raise(SIGUSR1);
    ok(in_handler_done && size_of(path) > before, "and at a call from a signal handler");
    emb_native_log_stop();
    emb_native_shutdown();

    char err[256];
    struct emb_logdb *db = emb_logdb_open("/proc/self/exe", err, sizeof err);
    ok(db != NULL, "own ELF: %s", db ? "read" : err);
    FILE *f = fopen(path, "rb");
    if (db == NULL || f == NULL)
        return emb_test_done();
    struct emb_log_decoder_options opt = {.db = db, .record = on_record, .problem = on_problem};
    struct emb_log_decoder *d = emb_log_decoder_new(&opt);
    static uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        emb_log_decoder_feed(d, buf, n);
    emb_log_decoder_finish(d);
    fclose(f);
    ok_eq(errors, 0, "decoded cleanly");
    ok_eq(records, 51, "every record");
    ok_eq(handler_records, 1, "the handler's among them");
    ok(!strcmp(last, "from the handler"), "in order (last: %s)", last);
    emb_log_decoder_free(d);
    emb_logdb_free(db);
    unlink(path);
    return emb_test_done();
}
