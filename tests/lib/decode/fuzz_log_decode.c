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
    struct emb_problems elf_problems;
    emb_problems_init(&elf_problems, EMB_FUZZ_LOG_ELF);
    db = emb_logdb_open(EMB_FUZZ_LOG_ELF, &elf_problems);
    if (db == NULL) {
        fprintf(stderr, "fuzz_log_decode: %s\n",
                elf_problems.n ? elf_problems.items[0].message : "?");
        abort();
    }
    emb_problems_free(&elf_problems);
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

static void on_problem(void *arg, const struct emb_problem *p)
{
    uint64_t offset = (uint64_t)p->offset;
    bool error = p->severity != EMB_NOTE;
    const char *msg = p->message;
    (void)arg;
    sink += offset + error + strlen(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int raw = 0; raw < 2; raw++) {
        struct emb_problems problems;
        emb_problems_init_callback(&problems, NULL, on_problem, NULL);
        struct emb_log_decoder_options opt = {.db = db, .raw = raw != 0, .record = on_record,
                                         .problems = &problems};
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
