/* libFuzzer target: the core-file reader (memsrc.c), as `emb desc --core` and `emb crash
 * --core` use it: the file's PT_LOAD segments become the memory the descriptor reader
 * walks, its PT_NOTE auxiliary vector gives the load bias. The input is the core file;
 * seeds are gcore's cores of a running process (cut to -max_len, so segments that reach
 * past the end of the file are part of the diet). */
#include "fuzz_file.h"

#include "desc_read.h"
#include "elf_image.h"
#include "memsrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_hit(void *arg, uint64_t addr)
{
    (void)addr;
    return ++*(unsigned *)arg >= 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct emb_elf *self;
    char err[512];
    if (self == NULL && (self = emb_elf_open("/proc/self/exe", err, sizeof err)) == NULL)
        abort();
    struct emb_mem *m = emb_mem_open_core(emb_fuzz_file(data, size), NULL);
    if (m == NULL)
        return 0;
    emb_mem_set_budget(m, 8u << 20);
    uint64_t bias;
    emb_mem_bias(m, self, &bias);
    char text[256];
    emb_mem_ram_text(m, text, sizeof text);
    (void)emb_mem_in_ram(m, 0x1000, 16);
    unsigned hits = 0;
    static const uint8_t magic[4] = {'E', 'M', 'B', 'D'};
    emb_mem_scan(m, magic, 4, 1u << 20, count_hit, &hits);
    uint8_t buf[256];
    for (uint64_t a = 0; a < 4; a++)
        if (emb_mem_read(m, a << 12, buf, sizeof buf) > sizeof buf)
            abort();
    struct emb_desc_image d;
    if (emb_desc_find(m, 0, 1u << 20, &d, NULL) == 0) {
        struct emb_desc_model md;
        struct emb_problems is = {0};
        emb_desc_read(m, &d, &md, &is);
        emb_desc_model_free(&md);
        emb_problems_free(&is);
    }
    emb_mem_close(m);
    return 0;
}
