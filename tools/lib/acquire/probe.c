/* A target behind a GDB server as a memory source (probe.h). */
#define _POSIX_C_SOURCE 200809L
#include "probe.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gdb_rsp.h"

#define MAX_REGIONS 64u
#define BLOCK_SIZE 1024u                  /* cache granule, aligned */
#define MAX_CACHED (16u << 20)       /* bytes kept per halt */

/* A block of one region: two regions may share an aligned block (.bss ending where the
 * stack section starts), and the bytes between them are no region's. */
struct cached_block {
    uint64_t addr;                        /* aligned to BLOCK_SIZE */
    const struct emb_mem_region *region;
    uint32_t lo, hi;                      /* bytes [addr + lo, addr + hi) held */
    uint8_t data[BLOCK_SIZE];
};

struct emb_probe {
    struct emb_gdb *g;
    struct emb_mem *mem;
    struct emb_mem_region ram[MAX_REGIONS];
    size_t nram;
    bool halted;
    bool live;                /* reads and writes while the target runs (emb_probe_go_live) */
    uint64_t hold_start_ns;
    struct cached_block **blocks;
    size_t nblocks, cap;
    struct emb_probe_stats st;
    char error[256];
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void hold_end(struct emb_probe *p)
{
    double ms = (double)(now_ns() - p->hold_start_ns) / 1e6;
    p->st.holds++;
    p->st.hold_ms_total += ms;
    p->st.hold_ms_last = ms;
    if (ms > p->st.hold_ms_max)
        p->st.hold_ms_max = ms;
}

static void forget_cache(struct emb_probe *p)
{
    for (size_t i = 0; i < p->nblocks; i++)
        free(p->blocks[i]);
    p->nblocks = 0;
}

static const struct emb_mem_region *region_of(const struct emb_probe *p, uint64_t addr)
{
    for (size_t i = 0; i < p->nram; i++)
        if (addr >= p->ram[i].addr && addr - p->ram[i].addr < p->ram[i].size)
            return &p->ram[i];
    return NULL;
}

static struct cached_block *find_block(const struct emb_probe *p, uint64_t block,
                                    const struct emb_mem_region *r)
{
    for (size_t i = p->nblocks; i-- > 0;)
        if (p->blocks[i]->addr == block && p->blocks[i]->region == r)
            return p->blocks[i];
    return NULL;
}

/* Fetches the block at `block` (one round trip per packet), clipped to its region. */
static struct cached_block *fetch_block(struct emb_probe *p, uint64_t block, const struct emb_mem_region *r)
{
    if ((p->nblocks + 1) * sizeof(struct cached_block) > MAX_CACHED)
        forget_cache(p);
    if (p->nblocks == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        struct cached_block **b = realloc(p->blocks, cap * sizeof *b);
        if (!b)
            return NULL;
        p->blocks = b;
        p->cap = cap;
    }
    struct cached_block *b = malloc(sizeof *b);
    if (!b)
        return NULL;
    uint64_t start = block < r->addr ? r->addr : block;
    uint64_t end = block + BLOCK_SIZE < r->addr + r->size ? block + BLOCK_SIZE : r->addr + r->size;
    b->addr = block;
    b->region = r;
    b->lo = (uint32_t)(start - block);
    b->hi = (uint32_t)(end - block);
    size_t n = (size_t)(end - start);
    if (emb_gdb_read(p->g, start, b->data + (start - block), n) != 0) {
        snprintf(p->error, sizeof p->error, "%s", emb_gdb_error(p->g));
        free(b);
        return NULL;
    }
    p->st.round_trips += (n + emb_gdb_block(p->g) - 1) / emb_gdb_block(p->g);
    p->st.bytes_read += n;
    p->blocks[p->nblocks++] = b;
    return b;
}

/* While the target runs every read goes to it: nothing read before stays true. */
static size_t read_live(struct emb_probe *p, uint64_t addr, void *buf, size_t len)
{
    const struct emb_mem_region *r = region_of(p, addr);
    if (r == NULL)
        return 0;
    if (len > r->addr + r->size - addr)
        len = (size_t)(r->addr + r->size - addr);
    if (emb_gdb_read(p->g, addr, buf, len) != 0) {
        snprintf(p->error, sizeof p->error, "%s", emb_gdb_error(p->g));
        return 0;
    }
    p->st.round_trips += (len + emb_gdb_block(p->g) - 1) / emb_gdb_block(p->g);
    p->st.bytes_read += len;
    return len;
}

static size_t probe_read(void *arg, uint64_t addr, void *buf, size_t len)
{
    struct emb_probe *p = arg;
    size_t done = 0;
    if (p->live && !p->halted)
        return read_live(p, addr, buf, len);
    if (!p->halted)
        return 0;
    while (done < len) {
        uint64_t a = addr + done;
        const struct emb_mem_region *r = region_of(p, a);
        if (!r)
            break;
        uint64_t block = a & ~(uint64_t)(BLOCK_SIZE - 1u);
        struct cached_block *b = find_block(p, block, r);
        if (!b && !(b = fetch_block(p, block, r)))
            break;
        size_t n = (size_t)(b->hi - (a - block));
        if (n > len - done)
            n = len - done;
        memcpy((uint8_t *)buf + done, b->data + (a - block), n);
        done += n;
    }
    return done;
}

static int probe_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
    struct emb_probe *p = arg;
    bool may = p->halted || p->live;
    if (!may || emb_gdb_write(p->g, addr, buf, len) != 0) {
        snprintf(p->error, sizeof p->error, "%s", may ? emb_gdb_error(p->g) : "the target is running");
        return -1;
    }
    p->st.bytes_written += len;
    p->st.round_trips++;
    /* Keep the cached copy what the target now holds. */
    for (size_t i = 0; i < len; i++) {
        uint64_t a = addr + i;
        const struct emb_mem_region *r = region_of(p, a);
        struct cached_block *b = r ? find_block(p, a & ~(uint64_t)(BLOCK_SIZE - 1u), r) : NULL;
        if (b && a - b->addr >= b->lo && a - b->addr < b->hi)
            b->data[a - b->addr] = ((const uint8_t *)buf)[i];
    }
    return 0;
}

struct emb_probe *emb_probe_open(const char *host_port, struct emb_elf *elf, char *err, size_t errlen)
{
    struct emb_probe *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    struct emb_elf_region regions[MAX_REGIONS];
    size_t n = emb_elf_ram_regions(elf, regions, MAX_REGIONS);
    for (size_t i = 0; i < n && i < MAX_REGIONS; i++) {
        p->ram[p->nram].addr = regions[i].addr;
        p->ram[p->nram].size = regions[i].size;
        snprintf(p->ram[p->nram].name, sizeof p->ram[p->nram].name, "%s", regions[i].name);
        p->nram++;
    }
    if (p->nram == 0) {
        snprintf(err, errlen, "%s: no writable section: nothing of it is RAM to read", emb_elf_path(elf));
        free(p);
        return NULL;
    }
    /* Connecting halts an all-stop target: the first hold starts here. */
    p->hold_start_ns = now_ns();
    p->g = emb_gdb_connect(host_port, 2000, err, errlen);
    if (!p->g) {
        free(p);
        return NULL;
    }
    p->halted = true;
    char name[300];
    snprintf(name, sizeof name, "gdb %s", host_port);
    const struct emb_mem_ops ops = {probe_read, probe_write};
    p->mem = emb_mem_open_ops(name, &ops, p, p->ram, p->nram);
    if (!p->mem) {
        snprintf(err, errlen, "out of memory");
        emb_probe_close(p);
        return NULL;
    }
    emb_mem_set_image(p->mem, elf, 0);
    return p;
}

struct emb_mem *emb_probe_mem(struct emb_probe *p)
{
    return p->mem;
}

int emb_probe_go_live(struct emb_probe *p)
{
    if (emb_probe_resume(p) != 0)
        return -1;
    emb_gdb_access_running(p->g, true);
    p->live = true;
    uint8_t word[4];
    if (read_live(p, p->ram[0].addr, word, sizeof word) == sizeof word)
        return 0;
    p->live = false;
    emb_gdb_access_running(p->g, false);
    if (!emb_gdb_stopped_to_read(p->g))
        return -1;
    p->halted = true; /* the server stopped it: a hold from now, as a halt's */
    p->hold_start_ns = now_ns();
    return 1;
}

bool emb_probe_live(const struct emb_probe *p)
{
    return p->live;
}

int emb_probe_halt(struct emb_probe *p)
{
    if (p->halted || p->live)
        return 0;
    p->hold_start_ns = now_ns();
    if (emb_gdb_halt(p->g) != 0) {
        snprintf(p->error, sizeof p->error, "%s", emb_gdb_error(p->g));
        return -1;
    }
    p->halted = true;
    return 0;
}

int emb_probe_resume(struct emb_probe *p)
{
    if (!p->halted || p->live)
        return 0;
    forget_cache(p);
    if (emb_gdb_resume(p->g) != 0) {
        snprintf(p->error, sizeof p->error, "%s", emb_gdb_error(p->g));
        return -1;
    }
    p->halted = false;
    hold_end(p);
    return 0;
}

int emb_probe_detach(struct emb_probe *p)
{
    p->live = false; /* an all-stop server detaches a halted target: one last halt */
    emb_gdb_access_running(p->g, false);
    if (!p->halted && emb_probe_halt(p) != 0)
        return -1;
    forget_cache(p);
    int rc = emb_gdb_detach(p->g);
    if (rc != 0)
        snprintf(p->error, sizeof p->error, "%s", emb_gdb_error(p->g));
    p->halted = false;
    hold_end(p);
    return rc;
}

const char *emb_probe_error(const struct emb_probe *p)
{
    return p->error[0] ? p->error : emb_gdb_error(p->g);
}

const struct emb_probe_stats *emb_probe_stats(const struct emb_probe *p)
{
    return &p->st;
}

void emb_probe_close(struct emb_probe *p)
{
    if (!p)
        return;
    forget_cache(p);
    free(p->blocks);
    emb_mem_close(p->mem);
    emb_gdb_close(p->g);
    free(p);
}
