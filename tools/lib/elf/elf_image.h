/* A firmware image on the host, through elfutils: its identity (build id, machine,
 * class), its symbols, the bytes of its loadable segments, and DWARF symbolisation of
 * code addresses with inlined frames. Addresses are the ELF's own (link-time): callers
 * subtract a load bias first. */
#ifndef EMB_HOST_ELF_IMAGE_H
#define EMB_HOST_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emb_elf;

/* Whether debug info missing from the local file system may be fetched from the
 * debuginfod servers named in DEBUGINFOD_URLS. Off by default: the variable is hidden
 * from elfutils, so opening and symbolising an image never reaches the network. Call
 * before emb_elf_open(). */
void emb_elf_allow_debuginfod(bool allow);

/* Opens an ELF file; NULL with a message in err on failure. */
struct emb_elf *emb_elf_open(const char *path, char *err, size_t errlen);
void emb_elf_close(struct emb_elf *e);

const char *emb_elf_path(const struct emb_elf *e);
/* The GNU build id; returns its length (0 when the image has none). */
size_t emb_elf_build_id(const struct emb_elf *e, const uint8_t **id);
unsigned emb_elf_machine(const struct emb_elf *e);   /* e_machine */
unsigned emb_elf_class_bits(const struct emb_elf *e); /* 32 or 64 */
bool emb_elf_little_endian(const struct emb_elf *e);
bool emb_elf_position_independent(const struct emb_elf *e); /* ET_DYN */
uint64_t emb_elf_entry(const struct emb_elf *e);

/* A symbol's address and size by name; -1 when absent. */
int emb_elf_symbol(const struct emb_elf *e, const char *name, uint64_t *addr, uint64_t *size);

/* Copies bytes at an ELF address from the file contents of the loadable segments.
 * Returns the bytes copied (fewer when the range leaves the file-backed part). */
size_t emb_elf_read(const struct emb_elf *e, uint64_t addr, void *buf, size_t len);
/* Whether an address is inside a loadable segment (its memory size). */
bool emb_elf_contains(const struct emb_elf *e, uint64_t addr);
/* Whether an address is inside an executable loadable segment. */
bool emb_elf_in_text(const struct emb_elf *e, uint64_t addr);

/* A region of RAM the image places data in: a writable section with an address (.data,
 * .bss, a stack section, and a retained region such as the Cortex-M fragment's .noinit,
 * which is writable but belongs to no segment). */
struct emb_elf_region {
    uint64_t addr, size;
    char name[24];
};

/* The image's RAM regions, in section order, at most `max`; returns how many there are
 * (which may exceed max). */
size_t emb_elf_ram_regions(const struct emb_elf *e, struct emb_elf_region *out, size_t max);

/* One frame of a symbolised address: innermost (inlined) first, the function that
 * contains it out of line last. */
struct emb_elf_frame {
    char function[128]; /* "" when unknown */
    char file[512];     /* "" when unknown */
    int line;           /* 0 when unknown */
    int column;
    bool inlined;       /* this frame was inlined into the next one */
};

/* Symbolises `addr`: up to max frames, from DWARF when present (function, file:line and
 * the inline chain), else the symbol table. Returns the frame count (0 when nothing is
 * known) and the offset into the containing symbol in *offset (may be NULL). The image
 * keeps recent results (by address and max), so asking again costs a copy. */
size_t emb_elf_symbolize(struct emb_elf *e, uint64_t addr, struct emb_elf_frame *frames,
                         size_t max, uint64_t *offset);

/* "function+0x12 (file:line)" of the outermost frame, or "0x..." when unknown. */
const char *emb_elf_describe(struct emb_elf *e, uint64_t addr, char *buf, size_t len);

/* Register values of one frame, in the architecture's DWARF numbering (ARM: r0-r15;
 * 13 sp, 14 lr, 15 pc), with a bit per register that is known. */
#define EMB_ELF_UNWIND_REGS 32u
struct emb_elf_unwind_regs {
    uint64_t value[EMB_ELF_UNWIND_REGS];
    uint64_t known;
};

/* Reads one word of the target's memory at `addr` (the stack a record kept); 0 when it
 * can, -1 when that memory was not kept. */
typedef int (*emb_elf_read_word_fn)(void *arg, uint64_t addr, uint64_t *value);

/* One frame up with the image's call frame information (.debug_frame, else .eh_frame):
 * `r`, the registers at `pc`, becomes the caller's registers (its sp the frame's canonical
 * frame address; ra_reg then holds the return address). -1, leaving `r` alone, when the
 * CFI has no entry for pc, uses a rule this evaluator does not know, or needs memory
 * that was not kept. */
int emb_elf_unwind_step(struct emb_elf *e, uint64_t pc, struct emb_elf_unwind_regs *r, unsigned sp_reg,
                        unsigned ra_reg, emb_elf_read_word_fn read, void *arg);

#endif /* EMB_HOST_ELF_IMAGE_H */
