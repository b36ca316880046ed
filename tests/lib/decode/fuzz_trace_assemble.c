/* libFuzzer target: the trace assembler and the CTF writer. What a framed transport carried
 * on channel 1 (stream headers and packets, in any order a late joiner sees them) is
 * assembled into a stream file, decoded, and written as a CTF directory into a scratch
 * directory, as `emb capture` and `emb trace --ctf` do.
 *
 * Input, by its first byte:
 *   0x00  the bytes a transport recorded (a `--file` capture: frames, delimiter first),
 *         split by the host's frame decoder; seeds are transport_target's frame files;
 *   else  the channel-1 payloads themselves, each as [len:u16 le][bytes], so mutations
 *         reach the assembler without having to keep a frame CRC right (seeds: the same
 *         files' payloads). */
#include "fuzz_file.h"

#include <emb/frame.h>
#include <emb/wire.h>

#include "frame_decode.h"
#include "trace_assemble.h"
#include "trace_decode.h"
#include "trace_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_frame(void *arg, uint8_t channel, const uint8_t *payload, size_t len, uint64_t off)
{
    (void)off;
    if (channel == EMB_FRAME_CH_TRACE)
        emb_trace_assemble_frame(arg, payload, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct emb_catalog *cat;
    if (!cat && !(cat = emb_catalog_builtin()))
        abort();
    if (size == 0)
        return 0;
    struct emb_trace_assembler *a = emb_trace_assemble_new(64u << 10);
    if (a == NULL)
        abort();
    if (data[0] == EMB_FRAME_DELIMITER) {
        struct emb_frame_dec *d = emb_frame_dec_new(65536, false, on_frame, NULL, a);
        emb_frame_dec_feed(d, data, size);
        emb_frame_dec_finish(d);
        emb_frame_dec_free(d);
    } else {
        for (size_t i = 1; i + 2 <= size;) {
            size_t len = emb_get_le16(data + i);
            i += 2;
            if (len > size - i)
                len = size - i;
            emb_trace_assemble_frame(a, data + i, len);
            i += len;
        }
    }
    const struct emb_trace_assemble_stats *st = emb_trace_assemble_stats(a);
    if (st->held > st->packets)
        abort();
    size_t len;
    const uint8_t *stream = emb_trace_assemble_stream(a, &len);
    if (stream != NULL) {
        struct emb_trace_options o = {.catalog = cat, .name = "assembled", .ignore_checksum = true};
        struct emb_trace *t = emb_trace_decode(stream, len, &o);
        /* Whatever the decoder made of it, refused header or not: the writer must cope
         * (`emb trace --ctf` writes nothing after a fatal issue, but the library allows it). */
        if (t != NULL) {
            char err[512];
            emb_trace_write_ctf(t, emb_fuzz_scratch_dir(), err, sizeof err);
        }
        emb_trace_free(t);
    } else if (len != 0) {
        abort();
    }
    emb_trace_assemble_free(a);
    return 0;
}
