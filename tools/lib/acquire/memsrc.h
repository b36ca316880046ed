/* Target memory as a tool sees it: a live native process (read while it runs, as a probe
 * reads RAM without halting), a raw dump with its base address, a core file, or bytes in
 * memory. Reads are bounded: every source has a budget of bytes, after which reads fail,
 * so a hostile image costs bounded work. Addresses the source lacks can be served from
 * the firmware's ELF (its read-only data, which a RAM dump or a core leaves out). */
#ifndef EMB_HOST_MEMSRC_H
#define EMB_HOST_MEMSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "problem.h"

struct emb_elf;
struct emb_mem;

/* Opens a source; NULL after reporting why not to `problems` (NULL: not reported). The
 * messages never name the process or file: the sink's file does ("pid 1234", the path). */
struct emb_mem *emb_mem_open_pid(pid_t pid, struct emb_problems *problems);
struct emb_mem *emb_mem_open_dump(const char *path, uint64_t base, struct emb_problems *problems);
struct emb_mem *emb_mem_open_core(const char *path, struct emb_problems *problems);
/* Bytes the caller keeps alive, at `base`. */
struct emb_mem *emb_mem_open_buffer(const uint8_t *data, size_t size, uint64_t base);

/* A target reached through functions (a debug probe): its RAM is the regions given (the
 * image's, emb_elf_ram_regions()); reads and writes outside them are refused, and read-only
 * data is served from the image set with emb_mem_set_image(). `read` returns the bytes
 * read (0 on failure), `write` 0 or -1; `write` may be NULL. */
struct emb_mem_region {
    uint64_t addr, size;
    char name[24];
};
struct emb_mem_ops {
    size_t (*read)(void *arg, uint64_t addr, void *buf, size_t len);
    int (*write)(void *arg, uint64_t addr, const void *buf, size_t len);
};
struct emb_mem *emb_mem_open_ops(const char *name, const struct emb_mem_ops *ops, void *arg,
                                 const struct emb_mem_region *ram, size_t nram);
void emb_mem_close(struct emb_mem *m);

/* "pid 1234", "dump FILE", "core FILE". */
const char *emb_mem_name(const struct emb_mem *m);

/* Serves addresses the source does not hold from the ELF's file-backed segments, at
 * runtime address = ELF address + bias. */
void emb_mem_set_image(struct emb_mem *m, struct emb_elf *elf, uint64_t bias);

/* Copies up to len bytes at addr; returns how many were read (short when the range leaves
 * what the source holds or the budget is spent). */
size_t emb_mem_read(struct emb_mem *m, uint64_t addr, void *buf, size_t len);

/* The bytes emb_mem_read has returned so far (a progress line's count). */
uint64_t emb_mem_bytes_read(const struct emb_mem *m);

/* Writes len bytes at addr: 0, or -1 when the source cannot write or the range is not
 * wholly inside its RAM. */
int emb_mem_write(struct emb_mem *m, uint64_t addr, const void *buf, size_t len);

/* Whether [addr, addr + len) lies inside one of the source's RAM regions; true for a
 * source that knows no regions of RAM (a process, a dump, a core). */
bool emb_mem_in_ram(const struct emb_mem *m, uint64_t addr, uint64_t len);
/* "0x20000000-0x20000148 (.data), ...": the RAM regions, for messages. */
const char *emb_mem_ram_text(const struct emb_mem *m, char *buf, size_t len);

/* Total bytes the source may still read (default 512 MiB). */
void emb_mem_set_budget(struct emb_mem *m, uint64_t bytes);
bool emb_mem_budget_spent(const struct emb_mem *m);

/* The load bias of a position-independent executable, when the source knows the auxiliary
 * vector (a process, a core): AT_ENTRY minus the ELF's entry point. -1 when unknown. */
int emb_mem_bias(struct emb_mem *m, const struct emb_elf *elf, uint64_t *bias);

/* Calls fn for every `align`-aligned address in the source's regions where `magic`
 * (4 bytes) is found, until fn returns nonzero (returned) or the regions end (0).
 * Scans at most max_bytes. */
int emb_mem_scan(struct emb_mem *m, const uint8_t magic[4], unsigned align, uint64_t max_bytes,
                 int (*fn)(void *arg, uint64_t addr), void *arg);

#endif /* EMB_HOST_MEMSRC_H */
