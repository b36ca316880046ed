/* ELF symbols for finding a target's control blocks. */
#define _GNU_SOURCE
#include "elf_sym.h"

#include "elf_image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int find_symbol(Elf *elf, Elf64_Word type, const char *name, uint64_t *value, uint64_t *size)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != type || sh.sh_entsize == 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (data == NULL)
            continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            if (gelf_getsym(data, (int)i, &sym) == NULL || sym.st_shndx == SHN_UNDEF)
                continue;
            const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (s != NULL && !strcmp(s, name)) {
                *value = sym.st_value;
                if (size != NULL)
                    *size = sym.st_size;
                return 0;
            }
        }
    }
    return -1;
}

static Elf *open_elf(const char *path, int *fd, char *err, size_t errlen)
{
    elf_version(EV_CURRENT);
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    Elf *elf = elf_begin(*fd, ELF_C_READ, NULL);
    if (elf == NULL || elf_kind(elf) != ELF_K_ELF) {
        snprintf(err, errlen, "%s: not an ELF file", path);
        if (elf)
            elf_end(elf);
        close(*fd);
        return NULL;
    }
    return elf;
}

int emb_elf_file_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size,
                        char *err, size_t errlen)
{
    struct emb_elf *e = emb_elf_open(path, err, errlen);
    if (e == NULL)
        return -1;
    int rc = emb_elf_symbol(e, name, value, size);
    if (rc != 0)
        snprintf(err, errlen, "%s: no symbol %s", path, name);
    emb_elf_close(e);
    return rc;
}

int emb_elf_process_symbol(pid_t pid, const char *name, uint64_t *addr, char *err, size_t errlen)
{
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
    int fd;
    Elf *elf = open_elf(exe, &fd, err, errlen);
    if (elf == NULL)
        return -1;
    uint64_t value = 0;
    GElf_Ehdr eh;
    int rc = gelf_getehdr(elf, &eh) != NULL ? 0 : -1;
    if (rc == 0 && find_symbol(elf, SHT_SYMTAB, name, &value, NULL) != 0 &&
        find_symbol(elf, SHT_DYNSYM, name, &value, NULL) != 0) {
        snprintf(err, errlen, "process %d: its executable has no symbol %s", (int)pid, name);
        rc = -1;
    }
    /* A position-independent executable is loaded at a bias: the mapping of its first
     * file page minus the address its first loadable segment asks for. */
    uint64_t first_vaddr = 0;
    if (rc == 0 && eh.e_type == ET_DYN) {
        size_t nph = 0;
        elf_getphdrnum(elf, &nph);
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) != NULL && ph.p_type == PT_LOAD) {
                first_vaddr = ph.p_vaddr & ~(uint64_t)0xFFF;
                break;
            }
        }
        char maps[64], line[512];
        snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
        char target[4096];
        ssize_t tl = readlink(exe, target, sizeof target - 1);
        FILE *f = fopen(maps, "r");
        rc = -1;
        if (f != NULL && tl > 0) {
            target[tl] = '\0';
            while (fgets(line, sizeof line, f) != NULL) {
                unsigned long long start, end, offset, inode;
                char perms[8], dev[16], path[4096] = "";
                if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %4095s", &start, &end, perms, &offset,
                           dev, &inode, path) >= 4 &&
                    offset == 0 && !strcmp(path, target)) {
                    value += start - first_vaddr;
                    rc = 0;
                    break;
                }
            }
        }
        if (f != NULL)
            fclose(f);
        if (rc != 0)
            snprintf(err, errlen, "process %d: cannot find where its executable is mapped", (int)pid);
    }
    if (rc == 0)
        *addr = value;
    elf_end(elf);
    close(fd);
    return rc;
}
