/* ELF images through libelf and libdwfl (elfutils). */
#define _GNU_SOURCE

#include "elf_image.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct segment {
    uint64_t vaddr, memsz, filesz, offset;
    bool exec;
};

struct emb_elf {
    char *path;
    int fd;
    Elf *elf;
    GElf_Ehdr ehdr;
    uint8_t build_id[64];
    size_t build_id_len;
    struct segment *segs;
    size_t nsegs;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    struct symbolized *symbolized; /* SYMBOLIZED slots, made at the first lookup */
};

/* One address symbolised before, for a caller's frame limit: the DWARF scope walk costs
 * far more than the rest of a crash record's analysis, and a fleet's records fault at
 * the same few addresses again and again. Direct-mapped: a newer address takes the slot. */
#define SYMBOLIZED 512u

struct symbolized {
    bool used;
    uint64_t addr, offset;
    size_t max, n;
    struct emb_elf_frame *frames; /* n of them */
};

/* Whether libdwfl may ask the servers of DEBUGINFOD_URLS for debug info the local file
 * system lacks (dwfl_standard_find_debuginfo falls back on libdebuginfod, which reads the
 * variable when it queries). Off unless asked: no command reaches the network by itself. */
static bool debuginfod_allowed;
static bool debuginfod_urls_saved;
static char *debuginfod_urls;

void emb_elf_allow_debuginfod(bool allow)
{
    debuginfod_allowed = allow;
}

/* Hides DEBUGINFOD_URLS from libdebuginfod while the network is not allowed, and gives it
 * back when it is. The host tool is single-threaded where it reads ELF files. */
static void apply_debuginfod_policy(void)
{
    if (!debuginfod_urls_saved) {
        const char *v = getenv("DEBUGINFOD_URLS");
        debuginfod_urls = v ? strdup(v) : NULL;
        debuginfod_urls_saved = true;
    }
    if (debuginfod_allowed && debuginfod_urls)
        setenv("DEBUGINFOD_URLS", debuginfod_urls, 1);
    else
        unsetenv("DEBUGINFOD_URLS");
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void find_build_id(struct emb_elf *e)
{
    size_t n = 0;
    if (elf_getphdrnum(e->elf, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
            continue;
        Elf_Data *d = elf_getdata_rawchunk(e->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
        if (!d)
            continue;
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp((const char *)d->d_buf + name_off, "GNU", 4) &&
                nh.n_descsz <= sizeof e->build_id) {
                memcpy(e->build_id, (const char *)d->d_buf + desc_off, nh.n_descsz);
                e->build_id_len = nh.n_descsz;
                return;
            }
        }
    }
}

/* A truncated or damaged ELF reads as "no symbol" everywhere, which looks like an answer:
 * every table and every section with bytes must lie inside the file. Returns 0, or -1
 * with what is wrong in err. */
static int check_structure(struct emb_elf *e, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(e->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    uint64_t size = (uint64_t)st.st_size;
    const GElf_Ehdr *h = &e->ehdr;
    size_t shnum = 0, phnum = 0, shstrndx = 0;
    if (elf_getshdrnum(e->elf, &shnum) != 0 || elf_getphdrnum(e->elf, &phnum) != 0 ||
        elf_getshdrstrndx(e->elf, &shstrndx) != 0) {
        snprintf(err, errlen, "%s: broken ELF: its header's table counts do not read: %s", path,
                 elf_errmsg(-1));
        return -1;
    }
    /* libelf reads a section table past the end as no sections at all: the header's own
     * count (0 with e_shoff set means the count is in section 0, itself in the table). */
    uint64_t want_sh = h->e_shnum > 0 ? h->e_shnum : h->e_shoff ? 1u : 0u;
    if (shnum < want_sh)
        shnum = (size_t)want_sh;
    if (shnum > 0 && (h->e_shentsize == 0 || h->e_shoff > size ||
                      (size - h->e_shoff) / h->e_shentsize < shnum)) {
        snprintf(err, errlen, "%s: broken ELF: the section header table (%zu entries at byte "
                 "%" PRIu64 ") runs past the end of the file (%" PRIu64 " bytes): truncated?",
                 path, shnum, (uint64_t)h->e_shoff, size);
        return -1;
    }
    if (phnum < h->e_phnum && h->e_phnum != PN_XNUM)
        phnum = h->e_phnum;
    if (phnum > 0 && (h->e_phentsize == 0 || h->e_phoff > size ||
                      (size - h->e_phoff) / h->e_phentsize < phnum)) {
        snprintf(err, errlen, "%s: broken ELF: the program header table runs past the end of "
                 "the file (%" PRIu64 " bytes): truncated?", path, size);
        return -1;
    }
    if (shnum > 0 && shstrndx >= shnum) {
        snprintf(err, errlen, "%s: broken ELF: section name table index %zu of %zu sections",
                 path, shstrndx, shnum);
        return -1;
    }
    for (size_t i = 1; i < shnum; i++) {
        Elf_Scn *scn = elf_getscn(e->elf, i);
        GElf_Shdr sh;
        if (!scn || !gelf_getshdr(scn, &sh)) {
            snprintf(err, errlen, "%s: broken ELF: section header %zu does not read: %s", path, i,
                     elf_errmsg(-1));
            return -1;
        }
        if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
            continue;
        if (sh.sh_offset > size || size - sh.sh_offset < sh.sh_size) {
            const char *name = elf_strptr(e->elf, shstrndx, sh.sh_name);
            snprintf(err, errlen, "%s: broken ELF: section %zu (%s) at byte %" PRIu64 ", %" PRIu64
                     " bytes, runs past the end of the file (%" PRIu64 " bytes): truncated?",
                     path, i, name ? name : "?", (uint64_t)sh.sh_offset, (uint64_t)sh.sh_size, size);
            return -1;
        }
    }
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e->elf, (int)i, &ph)) {
            snprintf(err, errlen, "%s: broken ELF: program header %zu does not read", path, i);
            return -1;
        }
        if (ph.p_type == PT_LOAD && (ph.p_offset > size || size - ph.p_offset < ph.p_filesz)) {
            snprintf(err, errlen, "%s: broken ELF: loadable segment %zu runs past the end of the "
                     "file (%" PRIu64 " bytes): truncated?", path, i, size);
            return -1;
        }
    }
    return 0;
}

struct emb_elf *emb_elf_open(const char *path, char *err, size_t errlen)
{
    elf_version(EV_CURRENT);
    struct emb_elf *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    e->path = strdup(path);
    e->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (e->fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        emb_elf_close(e);
        return NULL;
    }
    e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
    if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &e->ehdr)) {
        snprintf(err, errlen, "%s: not an ELF file", path);
        emb_elf_close(e);
        return NULL;
    }
    if (check_structure(e, path, err, errlen) != 0) {
        emb_elf_close(e);
        return NULL;
    }
    size_t n = 0;
    if (elf_getphdrnum(e->elf, &n) == 0 && n > 0 && n < 65536) {
        e->segs = calloc(n, sizeof *e->segs);
        for (size_t i = 0; e->segs && i < n; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
                continue;
            e->segs[e->nsegs++] = (struct segment){ph.p_vaddr, ph.p_memsz, ph.p_filesz,
                                                       ph.p_offset, (ph.p_flags & PF_X) != 0};
        }
    }
    find_build_id(e);
    apply_debuginfod_policy();
    e->dwfl = dwfl_begin(&offline_callbacks);
    if (e->dwfl) {
        /* At the file's own addresses: dwfl_report_offline() would move a
         * position-independent image to a base of its choosing. */
        e->mod = dwfl_report_elf(e->dwfl, "", path, -1, 0, true);
        dwfl_report_end(e->dwfl, NULL, NULL);
    }
    return e;
}

void emb_elf_close(struct emb_elf *e)
{
    if (!e)
        return;
    if (e->dwfl)
        dwfl_end(e->dwfl);
    if (e->elf)
        elf_end(e->elf);
    if (e->fd >= 0)
        close(e->fd);
    for (size_t i = 0; e->symbolized && i < SYMBOLIZED; i++)
        free(e->symbolized[i].frames);
    free(e->symbolized);
    free(e->segs);
    free(e->path);
    free(e);
}

const char *emb_elf_path(const struct emb_elf *e)
{
    return e->path;
}

size_t emb_elf_build_id(const struct emb_elf *e, const uint8_t **id)
{
    *id = e->build_id;
    return e->build_id_len;
}

unsigned emb_elf_machine(const struct emb_elf *e)
{
    return e->ehdr.e_machine;
}

unsigned emb_elf_class_bits(const struct emb_elf *e)
{
    return e->ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32;
}

bool emb_elf_little_endian(const struct emb_elf *e)
{
    return e->ehdr.e_ident[EI_DATA] == ELFDATA2LSB;
}

bool emb_elf_position_independent(const struct emb_elf *e)
{
    return e->ehdr.e_type == ET_DYN;
}

uint64_t emb_elf_entry(const struct emb_elf *e)
{
    return e->ehdr.e_entry;
}

int emb_elf_symbol(const struct emb_elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e->elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
            sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t count = d ? d->d_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
                continue;
            const char *s = elf_strptr(e->elf, sh.sh_link, sym.st_name);
            if (s && !strcmp(s, name)) {
                *addr = sym.st_value;
                if (size)
                    *size = sym.st_size;
                return 0;
            }
        }
    }
    return -1;
}

size_t emb_elf_read(const struct emb_elf *e, uint64_t addr, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        uint64_t a = addr + done;
        const struct segment *s = NULL;
        for (size_t i = 0; i < e->nsegs; i++)
            if (a >= e->segs[i].vaddr && a - e->segs[i].vaddr < e->segs[i].filesz)
                s = &e->segs[i];
        if (!s)
            break;
        size_t chunk = (size_t)(s->vaddr + s->filesz - a);
        if (chunk > len - done)
            chunk = len - done;
        ssize_t got = pread(e->fd, (uint8_t *)buf + done, chunk, (off_t)(s->offset + (a - s->vaddr)));
        if (got <= 0)
            break;
        done += (size_t)got;
    }
    return done;
}

size_t emb_elf_ram_regions(const struct emb_elf *e, struct emb_elf_region *out, size_t max)
{
    size_t shstrndx, n = 0;
    if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
        return 0;
    for (Elf_Scn *scn = elf_nextscn(e->elf, NULL); scn; scn = elf_nextscn(e->elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_WRITE) || sh.sh_addr == 0 || sh.sh_size == 0 ||
            (sh.sh_flags & SHF_TLS))
            continue;
        if (n < max) {
            const char *name = elf_strptr(e->elf, shstrndx, sh.sh_name);
            out[n].addr = sh.sh_addr;
            out[n].size = sh.sh_size;
            snprintf(out[n].name, sizeof out[n].name, "%s", name ? name : "?");
        }
        n++;
    }
    return n;
}

bool emb_elf_contains(const struct emb_elf *e, uint64_t addr)
{
    for (size_t i = 0; i < e->nsegs; i++)
        if (addr >= e->segs[i].vaddr && addr - e->segs[i].vaddr < e->segs[i].memsz)
            return true;
    return false;
}

bool emb_elf_in_text(const struct emb_elf *e, uint64_t addr)
{
    for (size_t i = 0; i < e->nsegs; i++)
        if (e->segs[i].exec && addr >= e->segs[i].vaddr && addr - e->segs[i].vaddr < e->segs[i].memsz)
            return true;
    return false;
}

/* ---- DWARF ---- */

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    /* An inlined or concrete copy names its abstract origin. */
    if (dwarf_attr_integrate(die, DW_AT_name, &attr))
        name = dwarf_formstring(&attr);
    return name;
}

static void set_text(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static const char *call_file(Dwarf_Die *cudie, Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Word idx;
    Dwarf_Files *files;
    size_t nfiles;
    if (!dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) != 0 ||
        dwarf_getsrcfiles(cudie, &files, &nfiles) != 0 || idx >= nfiles)
        return NULL;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

static int call_attr(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute attr;
    Dwarf_Word v;
    if (!dwarf_attr(die, name, &attr) || dwarf_formudata(&attr, &v) != 0)
        return 0;
    return (int)v;
}

static size_t symbolize_dwarf(struct emb_elf *e, uint64_t addr, struct emb_elf_frame *frames,
                              size_t max, uint64_t *offset)
{
    if (offset)
        *offset = 0;
    if (!e->mod || max == 0)
        return 0;
    GElf_Sym sym;
    GElf_Off symoff = 0;
    const char *symname = dwfl_module_addrinfo(e->mod, addr, &symoff, &sym, NULL, NULL, NULL);
    if (offset)
        *offset = symoff;

    /* Innermost location from the line table. */
    const char *file = NULL;
    int line = 0, col = 0;
    Dwfl_Line *dl = dwfl_module_getsrc(e->mod, addr);
    if (dl)
        file = dwfl_lineinfo(dl, NULL, &line, &col, NULL, NULL);

    size_t n = 0;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cudie = dwfl_module_addrdie(e->mod, addr, &bias);
    Dwarf_Die *scopes = NULL;
    int nscopes = cudie ? dwarf_getscopes(cudie, addr - bias, &scopes) : 0;
    if (nscopes > 0) {
        /* The scopes around the innermost one, through the inlined callers. */
        Dwarf_Die inner = scopes[0];
        free(scopes);
        scopes = NULL;
        nscopes = dwarf_getscopes_die(&inner, &scopes);
    }
    for (int i = 0; i < nscopes && n < max; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
            continue;
        struct emb_elf_frame *f = &frames[n++];
        memset(f, 0, sizeof *f);
        set_text(f->function, sizeof f->function, die_name(&scopes[i]));
        set_text(f->file, sizeof f->file, file);
        f->line = line;
        f->column = col;
        f->inlined = tag == DW_TAG_inlined_subroutine;
        if (tag == DW_TAG_subprogram)
            break;
        /* The next frame out is where this one was inlined. */
        file = call_file(cudie, &scopes[i]);
        line = call_attr(&scopes[i], DW_AT_call_line);
        col = call_attr(&scopes[i], DW_AT_call_column);
    }
    free(scopes);
    if (n == 0 && symname) {
        memset(&frames[0], 0, sizeof frames[0]);
        set_text(frames[0].function, sizeof frames[0].function, symname);
        set_text(frames[0].file, sizeof frames[0].file, file);
        frames[0].line = line;
        n = 1;
    }
    if (n > 0 && !frames[n - 1].function[0] && symname)
        set_text(frames[n - 1].function, sizeof frames[n - 1].function, symname);
    return n;
}

/* Keeps a result in its slot; without memory the result is simply not kept. */
static void remember(struct symbolized *slot, uint64_t addr, size_t max, uint64_t offset,
                     const struct emb_elf_frame *frames, size_t n)
{
    struct emb_elf_frame *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (n && !copy)
        return;
    if (n)
        memcpy(copy, frames, n * sizeof *copy);
    free(slot->frames);
    *slot = (struct symbolized){.used = true, .addr = addr, .offset = offset, .max = max,
                                .n = n, .frames = copy};
}

size_t emb_elf_symbolize(struct emb_elf *e, uint64_t addr, struct emb_elf_frame *frames,
                         size_t max, uint64_t *offset)
{
    if (!e->symbolized)
        e->symbolized = calloc(SYMBOLIZED, sizeof *e->symbolized);
    struct symbolized *slot = e->symbolized ? &e->symbolized[(addr ^ (addr >> 9)) % SYMBOLIZED] : NULL;
    if (slot && slot->used && slot->addr == addr && slot->max == max) {
        if (slot->n)
            memcpy(frames, slot->frames, slot->n * sizeof *frames);
        if (offset)
            *offset = slot->offset;
        return slot->n;
    }
    uint64_t off = 0;
    size_t n = symbolize_dwarf(e, addr, frames, max, &off);
    if (offset)
        *offset = off;
    if (slot)
        remember(slot, addr, max, off, frames, n);
    return n;
}

const char *emb_elf_describe(struct emb_elf *e, uint64_t addr, char *buf, size_t len)
{
    struct emb_elf_frame f[8];
    uint64_t off = 0;
    size_t n = e ? emb_elf_symbolize(e, addr, f, 8, &off) : 0;
    if (n == 0) {
        snprintf(buf, len, "0x%" PRIx64, addr);
        return buf;
    }
    const char *base = strrchr(f[0].file, '/');
    base = base ? base + 1 : f[0].file;
    if (f[0].line)
        snprintf(buf, len, "%s+0x%" PRIx64 " (%s:%d)", f[n - 1].function, off, base, f[0].line);
    else
        snprintf(buf, len, "%s+0x%" PRIx64, f[n - 1].function, off);
    return buf;
}

/* ---- Call frame information ---- */

/* Evaluates the simple DWARF expressions CFI rules are made of. `cfa` is pushed by
 * DW_OP_call_frame_cfa. Returns 0 with the result in *out and *is_value (1: the value
 * itself, DW_OP_stack_value; 0: the address where it is saved). */
static int cfi_eval(const Dwarf_Op *ops, size_t nops, const struct emb_elf_unwind_regs *r,
                    uint64_t cfa, uint64_t *out, bool *is_value)
{
    uint64_t stack[8];
    size_t depth = 0;
    *is_value = false;
    for (size_t i = 0; i < nops; i++) {
        uint8_t op = ops[i].atom;
        if (depth == sizeof stack / sizeof stack[0])
            return -1;
        if (op == DW_OP_call_frame_cfa) {
            stack[depth++] = cfa;
        } else if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
            unsigned reg = op - DW_OP_breg0;
            if (reg >= EMB_ELF_UNWIND_REGS || !(r->known >> reg & 1u))
                return -1;
            stack[depth++] = r->value[reg] + (uint64_t)(int64_t)ops[i].number;
        } else if (op == DW_OP_bregx) {
            if (ops[i].number >= EMB_ELF_UNWIND_REGS || !(r->known >> ops[i].number & 1u))
                return -1;
            stack[depth++] = r->value[ops[i].number] + (uint64_t)(int64_t)ops[i].number2;
        } else if (op == DW_OP_consts || op == DW_OP_constu || (op >= DW_OP_lit0 && op <= DW_OP_lit31)) {
            stack[depth++] = op >= DW_OP_lit0 ? (uint64_t)(op - DW_OP_lit0) : ops[i].number;
        } else if (op == DW_OP_plus_uconst && depth >= 1) {
            stack[depth - 1] += ops[i].number;
        } else if ((op == DW_OP_plus || op == DW_OP_minus) && depth >= 2) {
            depth--;
            stack[depth - 1] = op == DW_OP_plus ? stack[depth - 1] + stack[depth] : stack[depth - 1] - stack[depth];
        } else if (op == DW_OP_stack_value && i + 1 == nops) {
            *is_value = true;
        } else {
            return -1; /* an operation CFI rules of these targets do not use */
        }
    }
    if (depth != 1)
        return -1;
    *out = stack[0];
    return 0;
}

int emb_elf_unwind_step(struct emb_elf *e, uint64_t pc, struct emb_elf_unwind_regs *r, unsigned sp_reg,
                        unsigned ra_reg, emb_elf_read_word_fn read, void *arg)
{
    if (!e->mod || sp_reg >= EMB_ELF_UNWIND_REGS || ra_reg >= EMB_ELF_UNWIND_REGS)
        return -1;
    Dwarf_Addr bias = 0;
    Dwarf_CFI *cfi = dwfl_module_dwarf_cfi(e->mod, &bias);
    if (!cfi)
        cfi = dwfl_module_eh_cfi(e->mod, &bias);
    Dwarf_Frame *frame = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
        return -1;
    int rc = -1;
    Dwarf_Op *ops, ops_mem[3];
    size_t nops;
    uint64_t cfa;
    bool is_value;
    struct emb_elf_unwind_regs caller = {.known = 0};
    if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || cfi_eval(ops, nops, r, 0, &cfa, &is_value) != 0)
        goto out;
    for (unsigned reg = 0; reg < EMB_ELF_UNWIND_REGS; reg++) {
        if (dwarf_frame_register(frame, (int)reg, ops_mem, &ops, &nops) != 0)
            continue;
        uint64_t v;
        if (nops == 0 && ops == NULL) { /* same value: this frame left it alone */
            if (r->known >> reg & 1u) {
                caller.value[reg] = r->value[reg];
                caller.known |= 1ull << reg;
            }
        } else if (nops > 0 && cfi_eval(ops, nops, r, cfa, &v, &is_value) == 0) {
            if (is_value || read(arg, v, &v) == 0) {
                caller.value[reg] = v;
                caller.known |= 1ull << reg;
            }
        }
    }
    /* The caller's stack pointer is the canonical frame address, by definition. */
    caller.value[sp_reg] = cfa;
    caller.known |= 1ull << sp_reg;
    if (caller.known >> ra_reg & 1u) {
        *r = caller;
        rc = 0;
    }
out:
    free(frame);
    return rc;
}
