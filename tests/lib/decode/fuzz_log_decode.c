/* libFuzzer target: the log decoder (tools/lib/decode/log_decode.c, frame_decode.c) against the
 * metadata of a real ELF (test_log_decode, whose call sites cover every argument type).
 * Each input is decoded twice, as framed stream and as bare records, fed in two pieces so
 * the incremental paths run, and every record is formatted. Nothing may crash, leak or
 * read out of bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_decode.h"

static struct emb_logdb *db;
static size_t sink;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[512];
    db = emb_logdb_open(EMB_FUZZ_LOG_ELF, err, sizeof err);
    if (db == NULL) {
        fprintf(stderr, "fuzz_log_decode: %s\n", err);
        abort();
    }
    return 0;
}

static void on_record(void *arg, const struct emb_logrec *r)
{
    (void)arg;
    /* Touch every byte the record points at. */
    for (size_t i = 0; i < r->text_len; i++)
        sink += (unsigned char)r->text[i];
    for (size_t i = 0; i < r->data_len; i++)
        sink += r->data[i];
    sink += strlen(r->ctx_name);
}

static void on_problem(void *arg, uint64_t offset, bool error, const char *msg)
{
    (void)arg;
    sink += offset + error + strlen(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int raw = 0; raw < 2; raw++) {
        struct emb_log_decoder_options opt = {.db = db, .raw = raw != 0, .record = on_record,
                                         .problem = on_problem};
        struct emb_log_decoder *d = emb_log_decoder_new(&opt);
        if (d == NULL)
            return 0;
        size_t half = size / 2;
        emb_log_decoder_feed(d, data, half);
        emb_log_decoder_feed(d, data + half, size - half);
        emb_log_decoder_finish(d);
        emb_log_decoder_free(d);
    }
    return 0;
}
