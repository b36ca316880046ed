/* libFuzzer target: the ELF readers on a hostile file. The input is an ELF file (seeds: the
 * MPS2 firmware with its debug sections stripped, which keeps the symbols, the notes, the
 * emb_log region and its note): elf_image.c opens it with libelf and libdwfl and answers
 * every question `emb` asks of a firmware (identity, symbols, segment bytes, RAM regions,
 * symbolisation, one CFI unwind step); elf_sym.c looks the control blocks up by name;
 * log_elf.c reads the log's call sites and note from it. */
#include "fuzz_file.h"

#include "elf_image.h"
#include "elf_sym.h"
#include "log_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_word(void *arg, uint64_t addr, uint64_t *value)
{
    uint32_t w;
    if (emb_elf_read(arg, addr, &w, sizeof w) != sizeof w)
        return -1;
    *value = w;
    return 0;
}

static void image(const char *path)
{
    char err[512];
    struct emb_elf *e = emb_elf_open(path, err, sizeof err);
    if (e == NULL)
        return;
    const uint8_t *id;
    size_t idlen = emb_elf_build_id(e, &id);
    if (idlen > 64)
        abort(); /* the build id buffer's size */
    (void)emb_elf_machine(e);
    (void)emb_elf_class_bits(e);
    (void)emb_elf_little_endian(e);
    (void)emb_elf_position_independent(e);
    uint64_t entry = emb_elf_entry(e);
    static const char *const names[] = {"emb_memchan", "emb_debug_descriptor", "_SEGGER_RTT",
                                        "main", "emb_crash_region"};
    uint64_t addrs[6] = {entry};
    size_t naddrs = 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint64_t a, sz;
        if (emb_elf_symbol(e, names[i], &a, &sz) == 0)
            addrs[naddrs++] = a;
    }
    struct emb_elf_region regions[8];
    size_t nreg = emb_elf_ram_regions(e, regions, 8);
    for (size_t i = 0; i < nreg && i < 8; i++)
        if (memchr(regions[i].name, 0, sizeof regions[i].name) == NULL)
            abort();
    for (size_t i = 0; i < naddrs; i++) {
        uint8_t buf[64];
        if (emb_elf_read(e, addrs[i], buf, sizeof buf) > sizeof buf)
            abort();
        (void)emb_elf_contains(e, addrs[i]);
        (void)emb_elf_in_text(e, addrs[i]);
        struct emb_elf_frame frames[4];
        uint64_t off;
        size_t nf = emb_elf_symbolize(e, addrs[i] & ~(uint64_t)1, frames, 4, &off);
        for (size_t f = 0; f < nf && f < 4; f++)
            if (!memchr(frames[f].function, 0, sizeof frames[f].function) ||
                !memchr(frames[f].file, 0, sizeof frames[f].file))
                abort();
        char text[256];
        emb_elf_describe(e, addrs[i], text, sizeof text);
        struct emb_elf_unwind_regs r = {.known = 0xE000u};
        r.value[13] = 0x20001000u;
        r.value[14] = addrs[i];
        r.value[15] = addrs[i];
        emb_elf_unwind_step(e, addrs[i] & ~(uint64_t)1, &r, 13, 14, read_word, e);
    }
    emb_elf_close(e);
    uint64_t v, sz;
    emb_elf_file_symbol(path, "emb_memchan", &v, &sz, err, sizeof err);
}

static void log_metadata(const char *path)
{
    char err[512];
    struct emb_logdb *db = emb_logdb_open(path, err, sizeof err);
    if (db == NULL) {
        if (memchr(err, 0, sizeof err) == NULL)
            abort();
        return;
    }
    for (size_t i = 0; i < db->nsites; i++) {
        const struct emb_log_site *s = emb_logdb_site(db, db->sites[i].id);
        if (s == NULL || s->id != db->sites[i].id)
            abort();
    }
    emb_logdb_free(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        once = 1;
        unsetenv("DEBUGINFOD_URLS"); /* symbolisation stays on this machine */
    }
    const char *path = emb_fuzz_file(data, size);
    image(path);
    log_metadata(path);
    return 0;
}
