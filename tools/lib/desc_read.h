/* The generic reader of the debug descriptor (docs/formats/descriptor.md): finds
 * "EMBD" in a memory image (by the ELF's symbol, or by scanning for the magic), parses its
 * sections, and reads what they point at: contexts with their rings and statistics,
 * monitors, objects, the CPU statistics, the crash record and the mini-record ring. It
 * knows only the descriptor's format, never the library's structures: every offset comes
 * from the image, so this tool reads images of older and newer library versions.
 *
 * Everything read from the image is bounded before use (counts, strides, sizes, string
 * lengths), every read goes through the memory source's budget, and a problem is a
 * message with the address it concerns, never a crash.
 */
#ifndef EMB_HOST_DESC_READ_H
#define EMB_HOST_DESC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/descriptor.h>

#include "catalog.h"
#include "memsrc.h"

#define EMB_DR_MAX_SECTIONS 64u
#define EMB_DR_MAX_WORDS 256u
#define EMB_DR_MAX_CONTEXTS 4096u
#define EMB_DR_MAX_MONITORS 1024u
#define EMB_DR_MAX_OBJECTS 4096u
#define EMB_DR_MAX_FIELDS 32u
#define EMB_DR_MAX_RING_BYTES (64u << 20)

/* The descriptor itself: header and section words. */
struct emb_dr_section {
    unsigned kind, version;
    uint32_t words;            /* as the image says */
    uint64_t w[EMB_DR_MAX_WORDS]; /* the first min(words, EMB_DR_MAX_WORDS) */
};

struct emb_dr_image {
    uint64_t addr;             /* runtime address of the descriptor */
    unsigned version;
    unsigned ptr_size;         /* 4 or 8 */
    bool little;
    uint32_t length;
    uint32_t section_count;
    struct emb_dr_section sections[EMB_DR_MAX_SECTIONS];
    size_t nsections;
};

struct emb_dr_stat {
    char name[32];
    uint64_t value;
};

struct emb_dr_context {
    uint32_t index;
    uint64_t entry_addr;       /* the context registry entry */
    uint32_t state;
    char state_name[16];
    int32_t os_id;
    uint64_t stack_low, entry;
    uint32_t stack_size, stack_painted;
    uint32_t stack_used;       /* high-water mark in bytes; 0 unknown */
    struct emb_dr_stat stats[EMB_DR_MAX_FIELDS];
    size_t nstats;
    /* its ring */
    uint64_t ring;             /* 0: none */
    char name[24];
    uint16_t context_id, context_kind;
    uint32_t write_pos, base_pos, read_pos, discarded, filled;
    uint32_t buf_mask, slot_mask;
    uint8_t packet_shift, slot_shift;
    uint64_t buf, commit;
    uint32_t packets_opened;   /* since the ring started */
    uint32_t packets_held;     /* complete packets the ring still holds */
    uint32_t open_bytes;       /* bytes in the open packet (0: none) */
    bool ring_ok;              /* the ring's fields are consistent */
};

struct emb_dr_monitor {
    uint32_t category;
    char name[24];
    uint32_t worst, threshold, over, action;
    uint64_t pc;
};

struct emb_dr_object {
    uint32_t handle;
    uint16_t type;
    char type_name[16];
    char name[20];
    struct emb_dr_stat stats[EMB_DR_MAX_FIELDS];
    size_t nstats;
};

struct emb_dr_model {
    /* identity */
    uint32_t config_hash, lib_version, catalog_checksum;
    char port[32], profile[16];
    uint8_t build_id[32];
    uint32_t build_id_len;
    bool ready;
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    /* rings */
    uint32_t packet_size, ring_packets, class_mask, trace_mode;
    uint8_t uuid[16];
    uint64_t unclaimed;
    struct emb_dr_context *contexts;
    size_t ncontexts;
    uint32_t context_capacity;
    struct emb_dr_monitor *monitors;
    size_t nmonitors;
    struct emb_dr_object *objects;
    size_t nobjects;
    struct emb_dr_stat cpu[EMB_DR_MAX_FIELDS];
    size_t ncpu;
    /* crash */
    bool has_crash;
    uint64_t crash_area;
    uint32_t crash_cap, crash_version, crash_found, crash_found_length;
    uint8_t *crash_bytes;      /* crash_cap bytes read from the area (NULL if unreadable) */
    bool has_mini;
    uint64_t mini_area;
    uint32_t mini_entries, mini_entry_size;
    uint8_t *mini_bytes;
    /* arch */
    uint32_t elf_machine, fault_layout, status_count, gpr_count;
    bool has_log;
    unsigned log_version;
    uint32_t log_words;
};

/* Problems found while reading, kept in order. */
struct emb_dr_issues {
    char msg[32][200];
    size_t n, total;
};

/* Parses descriptor bytes that sit at `addr`. Returns 0, or -1 with a message. */
int emb_dr_parse(const uint8_t *bytes, size_t len, uint64_t addr, struct emb_dr_image *d,
                 char *err, size_t errlen);

/* Finds the descriptor: at symbol_addr (a runtime address; 0 to skip) or by scanning the
 * source for the magic (at most scan_max bytes). Returns 0, or -1 with a message. */
int emb_dr_find(struct emb_mem *m, uint64_t symbol_addr, uint64_t scan_max, struct emb_dr_image *d,
                char *err, size_t errlen);

/* Section of a kind, or NULL; word i of it (false when absent). */
const struct emb_dr_section *emb_dr_section(const struct emb_dr_image *d, unsigned kind);
bool emb_dr_word(const struct emb_dr_image *d, unsigned kind, unsigned i, uint64_t *out);

/* Reads everything the descriptor points at. Problems go to *issues; returns 0 when the
 * model is usable (possibly with issues), -1 when nothing could be read. */
int emb_dr_read(struct emb_mem *m, const struct emb_dr_image *d, struct emb_dr_model *model,
                struct emb_dr_issues *issues);
void emb_dr_model_free(struct emb_dr_model *model);

/* Writes the rings as a trace stream file (docs/formats/trace.md): the complete packets
 * each ring holds, and the committed part of each open packet with its closing fields
 * patched in the copy (its timestamp_end is its last event's, found with the catalogue).
 * Returns the packets written, or -1 with issues. */
long emb_dr_dump_trace(struct emb_mem *m, const struct emb_dr_image *d,
                       const struct emb_dr_model *model, const struct emb_catalog *cat, FILE *out,
                       struct emb_dr_issues *issues);

#endif /* EMB_HOST_DESC_READ_H */
