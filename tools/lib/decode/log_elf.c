/* The log's metadata from the ELF, with elfutils' libelf: the emb_log region's call
 * sites, the .note.emb.log note and the GNU build id (docs/formats/log.md). */
#define _POSIX_C_SOURCE 200809L

#include "log_decode.h"
#include "log_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <emb/log_format.h>

#include "buffer.h"

struct elf_reader {
    Elf *elf;
    bool big_endian;
    struct emb_problems *problems;
};

static void *fail(struct elf_reader *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *fail(struct elf_reader *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emb_vreport(e->problems, EMB_ERROR, -1, fmt, ap);
    va_end(ap);
    return NULL;
}

static uint32_t get_uint(const struct elf_reader *e, const uint8_t *p, int bytes)
{
    uint32_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint32_t)p[e->big_endian ? bytes - 1 - i : i] << (8 * i);
    return v;
}

/* The data of the first section called `name`, or NULL. */
static Elf_Data *find_section(struct elf_reader *e, const char *name, GElf_Shdr *shdr_out)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
        return NULL;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == NULL)
            continue;
        const char *n = elf_strptr(e->elf, shstrndx, shdr.sh_name);
        if (n == NULL || strcmp(n, name) != 0)
            continue;
        if (shdr_out != NULL)
            *shdr_out = shdr;
        if (shdr.sh_type == SHT_NOBITS)
            return NULL;
        return elf_rawdata(scn, NULL);
    }
    return NULL;
}

/* The GNU build id from any note section. */
static void read_build_id(struct elf_reader *e, struct emb_logdb *db)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e->elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (data == NULL)
            continue;
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 &&
                nh.n_descsz <= sizeof db->build_id) {
                memcpy(db->build_id, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
                db->build_id_len = nh.n_descsz;
                return;
            }
        }
    }
}

static bool int_size_ok(uint8_t n)
{
    return n == 2u || n == 4u || n == 8u;
}

static bool c_type_sizes_ok(const struct emb_logdb *db)
{
    return int_size_ok(db->int_bytes) && int_size_ok(db->long_bytes) &&
           int_size_ok(db->size_bytes) && int_size_ok(db->ptrdiff_bytes);
}

/* The note of docs/formats/log.md, read by hand: the Cortex-M fragment keeps it in a
 * section that is not of type SHT_NOTE (it is in no segment). */
static bool read_note(struct elf_reader *e, struct emb_logdb *db)
{
    Elf_Data *data = find_section(e, EMB_LOG_NOTE_SECTION, NULL);
    if (data == NULL || data->d_size < 12u) {
        fail(e, "no %s note: not built with the deferred log (emb/log.h)", EMB_LOG_NOTE_SECTION);
        return false;
    }
    const uint8_t *p = data->d_buf;
    size_t size = data->d_size, off = 0;
    while (off + 12u <= size) {
        uint32_t namesz = get_uint(e, p + off, 4), descsz = get_uint(e, p + off + 4, 4);
        uint32_t type = get_uint(e, p + off + 8, 4);
        size_t name_at = off + 12u, desc_at = name_at + ((namesz + 3u) & ~3u);
        if (namesz > size || descsz > size || desc_at + descsz > size)
            break;
        if (type == EMB_LOG_NOTE_TYPE && namesz == 4u && memcmp(p + name_at, "EMB", 4) == 0) {
            const uint8_t *d = p + desc_at;
            if (descsz < EMB_LOG_NOTE_DESC_SIZE_V1) {
                fail(e, "%s note too short (%u bytes)", EMB_LOG_NOTE_SECTION, descsz);
                return false;
            }
            uint32_t version = get_uint(e, d + EMB_LOG_NOTE_OFF_VERSION, 2);
            if (version != EMB_LOG_NOTE_VERSION && version != EMB_LOG_NOTE_VERSION_PARTITIONS) {
                fail(e, "log note version %u; this emb reads versions %u and %u", version,
                          EMB_LOG_NOTE_VERSION, EMB_LOG_NOTE_VERSION_PARTITIONS);
                return false;
            }
            db->note_version = (uint16_t)version;
            db->id_bytes = d[EMB_LOG_NOTE_OFF_ID_BYTES];
            db->ts_bytes = d[EMB_LOG_NOTE_OFF_TS_BYTES];
            db->ptr_bytes = d[EMB_LOG_NOTE_OFF_PTR_BYTES];
            db->str_max = d[EMB_LOG_NOTE_OFF_STR_MAX];
            db->hex_max = (uint16_t)get_uint(e, d + EMB_LOG_NOTE_OFF_HEX_MAX, 2);
            db->sync_interval = get_uint(e, d + EMB_LOG_NOTE_OFF_SYNC, 4);
            db->record_max = get_uint(e, d + EMB_LOG_NOTE_OFF_RECORD_MAX, 4);
            if (descsz >= EMB_LOG_NOTE_DESC_SIZE) {
                db->int_bytes = d[EMB_LOG_NOTE_OFF_INT_BYTES];
                db->long_bytes = d[EMB_LOG_NOTE_OFF_LONG_BYTES];
                db->size_bytes = d[EMB_LOG_NOTE_OFF_SIZE_BYTES];
                db->ptrdiff_bytes = d[EMB_LOG_NOTE_OFF_PTRDIFF_BYTES];
            } else { /* an older note: ILP32 or LP64 by the ELF class */
                db->int_bytes = 4u;
                db->long_bytes = db->size_bytes = db->ptrdiff_bytes =
                    gelf_getclass(e->elf) == ELFCLASS64 ? 8u : 4u;
            }
            if ((db->id_bytes != 0 && db->id_bytes != 2 && db->id_bytes != 4) ||
                (db->ts_bytes != 0 && db->ts_bytes != 4) ||
                (db->ptr_bytes != 2 && db->ptr_bytes != 4 && db->ptr_bytes != 8) || db->str_max == 0 || db->str_max > 127 ||
                db->hex_max == 0 || db->hex_max > 0x7FFF || !c_type_sizes_ok(db)) {
                fail(e, "log note holds impossible values (id %u, timestamp %u, pointer %u, "
                          "string %u, hexdump %u, int %u, long %u, size_t %u, ptrdiff_t %u bytes)",
                          db->id_bytes, db->ts_bytes, db->ptr_bytes, db->str_max, db->hex_max,
                          db->int_bytes, db->long_bytes, db->size_bytes, db->ptrdiff_bytes);
                return false;
            }
            return true;
        }
        off = desc_at + ((descsz + 3u) & ~3u);
    }
    fail(e, "%s holds no EMB note", EMB_LOG_NOTE_SECTION);
    return false;
}

/* Whether [addr, addr + size) lies in a PT_LOAD segment's file image. */
static bool in_loaded_segment(struct elf_reader *e, uint64_t addr, uint64_t size)
{
    size_t n;
    if (elf_getphdrnum(e->elf, &n) != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
            continue;
        if (addr < ph.p_vaddr + ph.p_memsz && addr + size > ph.p_vaddr)
            return true;
    }
    return false;
}

static int cmp_site(const void *a, const void *b)
{
    const struct emb_log_site *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_module(const void *a, const void *b)
{
    const struct emb_log_module_partition *x = a, *y = b;
    return strcmp(x->module, y->module);
}

/* The emb_log region as read: its bytes, and where the copies of its strings go. */
struct region_walk {
    struct elf_reader *e;
    struct emb_logdb *db;
    const uint8_t *p;
    size_t size, nstr, sites_cap, modules_cap;
};

/* The strings stay in the section's copy; one block keeps them together. */
static char *keep_strings(struct region_walk *w, const uint8_t *from, size_t n)
{
    char *at = w->db->strings + w->nstr;
    memcpy(at, from, n);
    w->nstr += n;
    return at;
}

/* The call site at `off`: the bytes it takes, or 0 (reported) when it is malformed. */
static size_t read_site(struct region_walk *w, size_t off)
{
    struct emb_logdb *db = w->db;
    if (off + EMB_LOG_SITE_HEADER_SIZE > w->size) {
        fail(w->e, "emb_log: call site at offset %zu cut by the section end", off);
        return 0;
    }
    const uint8_t *h = w->p + off;
    struct emb_log_site s = {0};
    s.id = (uint32_t)off + EMB_LOG_ID_BIAS;
    s.kind = h[EMB_LOG_SITE_OFF_KIND];
    s.level = h[EMB_LOG_SITE_OFF_LEVEL];
    s.nargs = h[EMB_LOG_SITE_OFF_NARGS];
    size_t mlen = h[EMB_LOG_SITE_OFF_MODULE_LEN];
    size_t flen = get_uint(w->e, h + EMB_LOG_SITE_OFF_FMT_LEN, 2);
    size_t filelen = get_uint(w->e, h + EMB_LOG_SITE_OFF_FILE_LEN, 2);
    s.line = get_uint(w->e, h + EMB_LOG_SITE_OFF_LINE, 4);
    size_t body = EMB_LOG_SITE_HEADER_SIZE + (size_t)s.nargs + 1u + mlen + flen + filelen;
    const uint8_t *sig = h + EMB_LOG_SITE_HEADER_SIZE;
    const uint8_t *mod = sig + s.nargs + 1u, *fmt = mod + mlen, *file = fmt + flen;
    if ((s.kind != EMB_LOG_SITE_PRINTF && s.kind != EMB_LOG_SITE_HEXDUMP) ||
        s.level < 1u || s.level > 4u || off + body > w->size || mlen == 0 || flen == 0 ||
        filelen == 0 || sig[s.nargs] != 0u || mod[mlen - 1u] != 0u || fmt[flen - 1u] != 0u ||
        file[filelen - 1u] != 0u || memchr(sig, 0, s.nargs) != NULL) {
        fail(w->e, "emb_log: malformed call site at offset %zu", off);
        return 0;
    }
    for (size_t i = 0; i < s.nargs; i++)
        if (strchr("iuIUfps", sig[i]) == NULL) {
            fail(w->e, "emb_log: call site at offset %zu: unknown argument type '%c'", off, sig[i]);
            return 0;
        }
    s.sig = keep_strings(w, sig, body - EMB_LOG_SITE_HEADER_SIZE);
    s.module = s.sig + s.nargs + 1u;
    s.fmt = s.module + mlen;
    s.file = s.fmt + flen;
    struct emb_log_site *sites = emb_array_grow(db->sites, &w->sites_cap, db->nsites + 1u, sizeof *sites);
    if (sites == NULL) {
        fail(w->e, "out of memory");
        return 0;
    }
    db->sites = sites;
    db->sites[db->nsites++] = s;
    int mw = (int)strlen(s.module);
    char where[300];
    int ww = snprintf(where, sizeof where, "%s:%u", s.file, s.line);
    if (mw > db->module_width)
        db->module_width = mw;
    if (ww > db->where_width)
        db->where_width = ww;
    return body;
}

/* Whether `n` bytes hold no control character (the text shows them as they are). */
static bool printable(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20u || p[i] == 0x7Fu)
            return false;
    return true;
}

/* The module record at `off` (note version 2): the bytes it takes, or 0 (reported). */
static size_t read_module(struct region_walk *w, size_t off)
{
    struct emb_logdb *db = w->db;
    const uint8_t *h = w->p + off;
    size_t mlen = 0, nlen = 0;
    if (off + EMB_LOG_MODULE_HEADER_SIZE <= w->size) {
        mlen = h[EMB_LOG_MODULE_OFF_MODULE_LEN];
        nlen = h[EMB_LOG_MODULE_OFF_NAME_LEN];
    }
    size_t body = EMB_LOG_MODULE_HEADER_SIZE + mlen + nlen;
    const uint8_t *mod = h + EMB_LOG_MODULE_HEADER_SIZE, *name = mod + mlen;
    if (mlen < 2u || nlen < 2u || off + body > w->size || mod[mlen - 1u] != 0u ||
        name[nlen - 1u] != 0u || !printable(mod, mlen - 1u) || !printable(name, nlen - 1u)) {
        fail(w->e, "emb_log: malformed module record at offset %zu", off);
        return 0;
    }
    struct emb_log_module_partition m = {.partition = h[EMB_LOG_MODULE_OFF_PARTITION]};
    m.module = keep_strings(w, mod, mlen + nlen);
    m.partition_name = m.module + mlen;
    struct emb_log_module_partition *mods =
        emb_array_grow(db->modules, &w->modules_cap, db->nmodules + 1u, sizeof *mods);
    if (mods == NULL) {
        fail(w->e, "out of memory");
        return 0;
    }
    db->modules = mods;
    db->modules[db->nmodules++] = m;
    return body;
}

/* Each call site takes its module's partition, from the module's record. */
static void attach_partitions(struct emb_logdb *db)
{
    if (db->nmodules == 0u)
        return;
    qsort(db->modules, db->nmodules, sizeof *db->modules, cmp_module);
    for (size_t i = 0; i < db->nsites; i++) {
        struct emb_log_site *s = &db->sites[i];
        struct emb_log_module_partition key = {.module = s->module};
        const struct emb_log_module_partition *m =
            bsearch(&key, db->modules, db->nmodules, sizeof *db->modules, cmp_module);
        if (m == NULL)
            continue;
        s->partition = m->partition;
        s->partition_name = m->partition_name;
        int pw = (int)strlen(m->partition_name);
        if (pw > db->partition_width)
            db->partition_width = pw;
    }
}

/* Walks the region: call-site objects (and, by note version 2, module records) back to
 * back, each 4-aligned; zero words between them are alignment padding. */
static bool read_sites(struct elf_reader *e, struct emb_logdb *db, const uint8_t *p, size_t size)
{
    struct region_walk w = {.e = e, .db = db, .p = p, .size = size, .sites_cap = 64};
    db->sites = malloc(w.sites_cap * sizeof *db->sites);
    db->strings = calloc(1, size + 1u + PLAN_SLACK); /* log_plan.c reads past a literal */
    if (db->sites == NULL || db->strings == NULL) {
        fail(e, "out of memory");
        return false;
    }
    size_t off = 0;
    while (off + 4u <= size) {
        if (p[off] == 0u) {
            off += 4u;
            continue;
        }
        bool module = p[off] == EMB_LOG_SITE_MODULE && db->note_version >= EMB_LOG_NOTE_VERSION_PARTITIONS;
        size_t body = module ? read_module(&w, off) : read_site(&w, off);
        if (body == 0u)
            return false;
        off += (body + EMB_LOG_SITE_ALIGN - 1u) & ~(size_t)(EMB_LOG_SITE_ALIGN - 1u);
    }
    qsort(db->sites, db->nsites, sizeof *db->sites, cmp_site);
    attach_partitions(db);
    return true;
}

struct emb_logdb *emb_logdb_open(const char *path, struct emb_problems *problems)
{
    struct elf_reader e = {.problems = problems};
    if (elf_version(EV_CURRENT) == EV_NONE)
        return fail(&e, "libelf is unusable: %s", elf_errmsg(-1));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(&e, "cannot open: %s", strerror(errno));
    e.elf = elf_begin(fd, ELF_C_READ, NULL);
    struct emb_logdb *db = NULL;
    if (e.elf == NULL || elf_kind(e.elf) != ELF_K_ELF) {
        fail(&e, "not an ELF file");
        goto out;
    }
    const char *ident = elf_getident(e.elf, NULL);
    if (ident == NULL) {
        fail(&e, "not an ELF file");
        goto out;
    }
    e.big_endian = ident[EI_DATA] == ELFDATA2MSB;
    db = calloc(1, sizeof *db);
    if (db == NULL || (db->path = strdup(path)) == NULL) {
        fail(&e, "out of memory");
        goto fail;
    }
    read_build_id(&e, db);
    if (!read_note(&e, db))
        goto fail;
    GElf_Shdr shdr;
    memset(&shdr, 0, sizeof shdr);
    Elf_Data *region = find_section(&e, EMB_LOG_SECTION, &shdr);
    if (region == NULL && shdr.sh_size == 0u)
        region = find_section(&e, "." EMB_LOG_SECTION, &shdr);
    if (region == NULL) {
        if (shdr.sh_type == SHT_NOBITS)
            fail(&e, "section %s has no contents in the file (NOBITS: link it with the "
                      "INFO type, see ports/cortex-m/emb_log.ld)", EMB_LOG_SECTION);
        else
            fail(&e, "no %s section: the program has no log call sites", EMB_LOG_SECTION);
        goto fail;
    }
    db->region_addr = shdr.sh_addr;
    db->region_size = region->d_size;
    db->region_loaded = (shdr.sh_flags & SHF_ALLOC) != 0u &&
                        in_loaded_segment(&e, shdr.sh_addr, shdr.sh_size);
    if (!read_sites(&e, db, region->d_buf, region->d_size) || !emb_log_plan_sites(db))
        goto fail;
    if (db->id_bytes == 0u) /* chosen at link time, by the region's size (docs/formats/log.md) */
        db->id_bytes = db->region_size + EMB_LOG_ID_BIAS <= 0x10000u ? 2u : 4u;
    if (db->id_bytes == 2 && db->region_size + EMB_LOG_ID_BIAS > 0x10000u) {
        fail(&e, "the log region (%llu bytes) is too big for 16-bit ids",
                  (unsigned long long)db->region_size);
        goto fail;
    }
    goto out;
fail:
    emb_logdb_free(db);
    db = NULL;
out:
    if (e.elf != NULL)
        elf_end(e.elf);
    close(fd);
    return db;
}

void emb_logdb_free(struct emb_logdb *db)
{
    if (db == NULL)
        return;
    free(db->path);
    emb_log_plans_free(db);
    EMB_FREE_ALL(db->sites, db->modules, db->strings, db);
}

const struct emb_log_site *emb_logdb_site(const struct emb_logdb *db, uint32_t id)
{
    size_t lo = 0, hi = db->nsites;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2u;
        if (db->sites[mid].id == id)
            return &db->sites[mid];
        if (db->sites[mid].id < id)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return NULL;
}
