/* libFuzzer target: the crash record decoder, the architecture decoding of its registers,
 * the Cortex-M unwinder over the stack words a record keeps (against the ELF named by
 * EMB_FUZZ_ELF, the MPS2 firmware, when set), its flight recorder through the trace
 * decoder, and the mini-record scan. For half of
 * the inputs (odd first byte) the magic is set and the CRC recomputed over the length the
 * input claims, so mutations reach the fields behind them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <emb/crc.h>
#include <emb/wire.h>

#include "crash_arch.h"
#include "crash_decode.h"
#include "elf_image.h"
#include "trace_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct emb_catalog *cat;
    static struct emb_elf *elf;
    static bool elf_tried;
    if (!cat && !(cat = emb_catalog_builtin()))
        abort();
    if (!elf_tried) {
        char err[256];
        const char *path = getenv("EMB_FUZZ_ELF");
        elf = path ? emb_elf_open(path, err, sizeof err) : NULL;
        elf_tried = true;
    }
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    if (size >= 12 && (data[0] & 1u)) {
        emb_put_le32(buf, EMB_CRASH_MAGIC);
        uint32_t len = emb_get_le16(buf + EMB_CRASH_OFF_LENGTH);
        if (len >= 12 && len <= size)
            emb_put_le32(buf + len - 4, emb_crc32(0, buf, len - 4));
    }
    struct emb_crash_record r;
    if (emb_crash_decode(buf, size, &r, NULL) == 0) {
        struct emb_crash_view v;
        emb_crash_view(&r, &v);
        struct emb_crash_reg regs[64];
        emb_crash_registers(&r, &v, regs, 64);
        struct emb_crash_status_item st[16];
        emb_crash_status_decode(&r, &v, st, 16);
        uint64_t calls[16];
        size_t n = emb_crash_unwind(&r, &v, elf, calls, 16);
        for (size_t i = 0; i < n; i++)
            if (!emb_elf_in_text(elf, calls[i]))
                abort(); /* the unwinder returns return addresses into the code only */
        emb_crash_signal_name(v.signo);
        emb_crash_si_code_text(v.signo, v.si_code);
        if (r.flight) {
            struct emb_trace_options o = {.catalog = cat, .name = "flight", .ignore_checksum = true,
                                          .base_offset = r.flight_offset};
            struct emb_trace *t = emb_trace_decode(r.flight, r.flight_len, &o);
            if (t)
                emb_trace_free(t);
        }
    }
    struct emb_crash_mini m[8];
    emb_crash_mini_scan(buf, size, 0, m, 8);
    free(buf);
    return 0;
}
