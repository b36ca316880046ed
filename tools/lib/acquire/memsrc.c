/* Memory sources: a process (process_vm_readv, else /proc/PID/mem), a dump, a core file
 * (libelf), a buffer. */
#define _GNU_SOURCE

#include "memsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "buffer.h"
#include "elf_image.h"

#define DEFAULT_BUDGET (512ull << 20)
#define MAX_REGIONS 4096u
#define AT_ENTRY_TYPE 9u
#define NT_AUXV_TYPE 6u

enum kind { SRC_PID, SRC_DUMP, SRC_CORE, SRC_BUFFER, SRC_OPS };

struct region {
    uint64_t addr, size;  /* what the source holds */
    uint64_t file_off;    /* dump, core: where in the file */
};

struct emb_mem {
    enum kind kind;
    char name[300];
    pid_t pid;
    int fd;               /* dump, core, or /proc/PID/mem */
    const uint8_t *buf;
    struct region *regions;
    size_t nregions;
    uint64_t budget;
    uint64_t bytes_read;  /* what emb_mem_read returned, in all */
    struct emb_elf *elf;
    uint64_t bias;
    uint64_t at_entry;
    bool has_entry;
    /* SRC_OPS: the functions, and the RAM regions (which are also m->regions) */
    struct emb_mem_ops ops;
    void *ops_arg;
    struct emb_mem_region *ram;
    size_t nram;
};

static struct emb_mem *new_mem(enum kind kind)
{
    struct emb_mem *m = calloc(1, sizeof *m);
    if (m) {
        m->kind = kind;
        m->fd = -1;
        m->budget = DEFAULT_BUDGET;
    }
    return m;
}

static bool add_region(struct emb_mem *m, uint64_t addr, uint64_t size, uint64_t off)
{
    if (m->nregions >= MAX_REGIONS || size == 0)
        return false;
    if (m->nregions % 64 == 0) {
        struct region *r = realloc(m->regions, (m->nregions + 64) * sizeof *r);
        if (!r)
            return false;
        m->regions = r;
    }
    m->regions[m->nregions++] = (struct region){addr, size, off};
    return true;
}

static void parse_auxv(struct emb_mem *m, const uint8_t *p, size_t n, bool wide)
{
    size_t w = wide ? 8 : 4;
    for (size_t i = 0; i + 2 * w <= n; i += 2 * w) {
        uint64_t type = 0, val = 0;
        memcpy(&type, p + i, w);
        memcpy(&val, p + i + w, w);
        if (type == 0)
            break;
        if (type == AT_ENTRY_TYPE) {
            m->at_entry = val;
            m->has_entry = true;
        }
    }
}

/* Why a source did not open, at `offset` of its file (-1: none); closes m. */
static struct emb_mem *failed(struct emb_mem *m, struct emb_problems *ps, long long offset,
                              const char *why)
{
    if (ps)
        emb_report(ps, EMB_ERROR, offset, "%s", why);
    emb_mem_close(m);
    return NULL;
}

struct emb_mem *emb_mem_open_pid(pid_t pid, struct emb_problems *ps)
{
    struct emb_mem *m = new_mem(SRC_PID);
    if (!m)
        return failed(m, ps, -1, "out of memory");
    m->pid = pid;
    snprintf(m->name, sizeof m->name, "pid %d", (int)pid);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        char why[256];
        snprintf(why, sizeof why, "cannot read its memory map: %s", strerror(errno));
        return failed(m, ps, -1, why);
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 && perms[0] == 'r' &&
            !strstr(line, "[vvar]") && !strstr(line, "[vsyscall]"))
            add_region(m, lo, hi - lo, 0);
    }
    fclose(f);
    snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
    int afd = open(path, O_RDONLY | O_CLOEXEC);
    if (afd >= 0) {
        uint8_t aux[4096];
        ssize_t n = read(afd, aux, sizeof aux);
        if (n > 0)
            parse_auxv(m, aux, (size_t)n, sizeof(void *) == 8);
        close(afd);
    }
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    m->fd = open(path, O_RDONLY | O_CLOEXEC);
    return m;
}

/* Opens the file a dump or a core is read from; NULL after reporting why not. */
static struct emb_mem *open_file(enum kind kind, const char *path, struct emb_problems *ps)
{
    struct emb_mem *m = new_mem(kind);
    if (!m)
        return failed(m, ps, -1, "out of memory");
    if ((m->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        char why[256];
        snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
        return failed(m, ps, -1, why);
    }
    snprintf(m->name, sizeof m->name, "%s %s", kind == SRC_DUMP ? "dump" : "core", path);
    return m;
}

struct emb_mem *emb_mem_open_dump(const char *path, uint64_t base, struct emb_problems *ps)
{
    struct emb_mem *m = open_file(SRC_DUMP, path, ps);
    struct stat st;
    if (!m)
        return NULL;
    if (fstat(m->fd, &st) != 0) {
        char why[256];
        snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
        return failed(m, ps, -1, why);
    }
    if (st.st_size == 0 || base + (uint64_t)st.st_size < base)
        return failed(m, ps, -1, st.st_size == 0 ? "empty" : "base + size wraps around");
    add_region(m, base, (uint64_t)st.st_size, 0);
    return m;
}

struct emb_mem *emb_mem_open_core(const char *path, struct emb_problems *ps)
{
    struct emb_mem *m = open_file(SRC_CORE, path, ps);
    if (!m)
        return NULL;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t n = 0;
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type != ET_CORE || elf_getphdrnum(elf, &n) != 0) {
        if (elf)
            elf_end(elf);
        return failed(m, ps, 0, "not an ELF core file");
    }
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            continue;
        if (ph.p_type == PT_LOAD && ph.p_filesz > 0) {
            add_region(m, ph.p_vaddr, ph.p_filesz, ph.p_offset);
        } else if (ph.p_type == PT_NOTE) {
            Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
            size_t off = 0, name_off, desc_off;
            GElf_Nhdr nh;
            while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
                if (nh.n_type == NT_AUXV_TYPE)
                    parse_auxv(m, (const uint8_t *)d->d_buf + desc_off, nh.n_descsz,
                               eh.e_ident[EI_CLASS] == ELFCLASS64);
        }
    }
    elf_end(elf);
    return m;
}

struct emb_mem *emb_mem_open_buffer(const uint8_t *data, size_t size, uint64_t base)
{
    struct emb_mem *m = new_mem(SRC_BUFFER);
    if (!m)
        return NULL;
    snprintf(m->name, sizeof m->name, "buffer");
    m->buf = data;
    if (size)
        add_region(m, base, size, 0);
    return m;
}

struct emb_mem *emb_mem_open_ops(const char *name, const struct emb_mem_ops *ops, void *arg,
                                 const struct emb_mem_region *ram, size_t nram)
{
    struct emb_mem *m = new_mem(SRC_OPS);
    if (!m)
        return NULL;
    snprintf(m->name, sizeof m->name, "%s", name);
    m->ops = *ops;
    m->ops_arg = arg;
    if (nram > MAX_REGIONS)
        nram = MAX_REGIONS;
    m->ram = calloc(nram ? nram : 1, sizeof *m->ram);
    if (!m->ram) {
        emb_mem_close(m);
        return NULL;
    }
    for (size_t i = 0; i < nram; i++) {
        if (ram[i].size == 0 || ram[i].addr + ram[i].size < ram[i].addr)
            continue;
        m->ram[m->nram++] = ram[i];
        add_region(m, ram[i].addr, ram[i].size, 0);
    }
    return m;
}

void emb_mem_close(struct emb_mem *m)
{
    if (!m)
        return;
    if (m->fd >= 0)
        close(m->fd);
    EMB_FREE_ALL(m->regions, m->ram, m);
}

bool emb_mem_in_ram(const struct emb_mem *m, uint64_t addr, uint64_t len)
{
    if (m->kind != SRC_OPS)
        return true;
    if (addr + len < addr)
        return false;
    for (size_t i = 0; i < m->nram; i++)
        if (addr >= m->ram[i].addr && addr + len <= m->ram[i].addr + m->ram[i].size)
            return true;
    return false;
}

const char *emb_mem_ram_text(const struct emb_mem *m, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->nram && used + 1 < len; i++) {
        int n = snprintf(buf + used, len - used, "%s0x%llx-0x%llx (%s)", i ? ", " : "",
                         (unsigned long long)m->ram[i].addr,
                         (unsigned long long)(m->ram[i].addr + m->ram[i].size), m->ram[i].name);
        if (n < 0)
            break;
        used += (size_t)n < len - used ? (size_t)n : len - used - 1;
    }
    if (m->kind == SRC_OPS && m->nram == 0)
        snprintf(buf, len, "none");
    return buf;
}

int emb_mem_write(struct emb_mem *m, uint64_t addr, const void *buf, size_t len)
{
    if (m->kind != SRC_OPS || !m->ops.write || !emb_mem_in_ram(m, addr, len))
        return -1;
    return m->ops.write(m->ops_arg, addr, buf, len);
}

const char *emb_mem_name(const struct emb_mem *m)
{
    return m->name;
}

void emb_mem_set_image(struct emb_mem *m, struct emb_elf *elf, uint64_t bias)
{
    m->elf = elf;
    m->bias = bias;
}

void emb_mem_set_budget(struct emb_mem *m, uint64_t bytes)
{
    m->budget = bytes;
}

bool emb_mem_budget_spent(const struct emb_mem *m)
{
    return m->budget == 0;
}

static const struct region *find(const struct emb_mem *m, uint64_t addr)
{
    for (size_t i = 0; i < m->nregions; i++)
        if (addr >= m->regions[i].addr && addr - m->regions[i].addr < m->regions[i].size)
            return &m->regions[i];
    return NULL;
}

/* Reads from the source itself, one region at a time. */
static size_t source_read(struct emb_mem *m, uint64_t addr, uint8_t *buf, size_t len)
{
    if (m->kind == SRC_PID) {
        struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
        ssize_t n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
        if (n > 0)
            return (size_t)n;
        if (m->fd >= 0) {
            n = pread(m->fd, buf, len, (off_t)addr);
            return n > 0 ? (size_t)n : 0;
        }
        return 0;
    }
    size_t done = 0;
    while (done < len) {
        const struct region *r = find(m, addr + done);
        if (!r)
            break;
        uint64_t in = addr + done - r->addr;
        size_t chunk = (size_t)(r->size - in < len - done ? r->size - in : len - done);
        if (m->kind == SRC_OPS) {
            size_t n = m->ops.read(m->ops_arg, addr + done, buf + done, chunk);
            if (n == 0)
                break;
            chunk = n;
        } else if (m->kind == SRC_BUFFER) {
            memcpy(buf + done, m->buf + in, chunk);
        } else {
            ssize_t n = pread(m->fd, buf + done, chunk, (off_t)(r->file_off + in));
            if (n <= 0)
                break;
            chunk = (size_t)n;
        }
        done += chunk;
    }
    return done;
}

size_t emb_mem_read(struct emb_mem *m, uint64_t addr, void *buf, size_t len)
{
    if (len == 0)
        return 0;
    if (m->budget < len || addr + len < addr)
        return 0;
    m->budget -= len;
    uint8_t *out = buf;
    size_t done = 0;
    while (done < len) {
        size_t got = source_read(m, addr + done, out + done, len - done);
        /* The image's bytes stand in for what the source lacks, never for its RAM: the
         * file holds RAM's initial values, not what the target has there now. */
        if (got == 0 && m->elf && addr + done >= m->bias &&
            !(m->kind == SRC_OPS && emb_mem_in_ram(m, addr + done, 1)))
            got = emb_elf_read(m->elf, addr + done - m->bias, out + done, len - done);
        if (got == 0)
            break;
        done += got;
    }
    m->bytes_read += done;
    return done;
}

uint64_t emb_mem_bytes_read(const struct emb_mem *m)
{
    return m->bytes_read;
}

int emb_mem_bias(struct emb_mem *m, const struct emb_elf *elf, uint64_t *bias)
{
    if (!emb_elf_position_independent(elf)) {
        *bias = 0;
        return 0;
    }
    if (!m->has_entry || m->at_entry < emb_elf_entry(elf))
        return -1;
    *bias = m->at_entry - emb_elf_entry(elf);
    return 0;
}

int emb_mem_scan(struct emb_mem *m, const uint8_t magic[4], unsigned align, uint64_t max_bytes,
                 int (*fn)(void *arg, uint64_t addr), void *arg)
{
    static uint8_t chunk[1 << 16];
    uint64_t scanned = 0;
    if (align == 0)
        align = 1;
    for (size_t i = 0; i < m->nregions && scanned < max_bytes; i++) {
        const struct region *r = &m->regions[i];
        uint64_t start = (r->addr + align - 1) / align * align;
        for (uint64_t a = start; a < r->addr + r->size && scanned < max_bytes;) {
            size_t want = (size_t)(r->addr + r->size - a < sizeof chunk ? r->addr + r->size - a : sizeof chunk);
            size_t got = source_read(m, a, chunk, want);
            scanned += want;
            if (got < 4)
                break;
            for (size_t k = 0; k + 4 <= got; k += align)
                if (!memcmp(chunk + k, magic, 4)) {
                    int rc = fn(arg, a + k);
                    if (rc)
                        return rc;
                }
            a += got - (got % align);
            if (got < want)
                break;
        }
    }
    return 0;
}
