/* What a kernel's layout block describes (docs/formats/descriptor.md, "The kernel's layout
 * block"): its threads with their state, wait, priorities, locks held, stack and saved
 * registers; the scheduler's per-CPU state; its objects. Every list is followed at most as
 * far as the block's bound and EMB_DESC_MAX_*, an entry seen twice ends it, and every
 * structure a pointer leads to must lie in the image's RAM. */
#define _GNU_SOURCE

#include "desc_read.h"
#include "desc_read_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { TH_ALL, TH_F_NEXT, TH_MAX, TH_F_SP, TH_F_STATE, TH_STATE_NAMES, TH_STATE_COUNT, TH_F_WAIT,
       TH_WAIT_NAMES, TH_WAIT_COUNT, TH_F_WAIT_OBJECT, TH_F_WAIT_QUEUE, TH_F_WAKE_RESULT, TH_F_BASE,
       TH_F_EFF, TH_F_NAME, TH_F_INDEX, TH_F_GENERATION, TH_F_PARTITION, TH_F_OWNED, TH_F_LOCK_NEXT,
       TH_F_LOCK_OWNER, TH_F_TIMEOUT_DEADLINE, TH_F_TIMEOUT_ARMED, TH_F_NOTIFY_BITS, TH_F_NOTIFY_MASK,
       TH_F_STATS, TH_STATS_FIELDS, TH_STATS_COUNT, TH_F_STACK_LOW, TH_F_STACK_SIZE, TH_PAINT,
       TH_F_ENTRY, TH_FRAME_WORDS, TH_FRAME_NAMES, TH_FRAME_PC, TH_FRAME_LR };
enum { SC_KIND, SC_READY, SC_PRIOS, SC_URGENT_HIGH, SC_F_BITMAP, SC_F_HEADS, SC_F_NEXT_READY, SC_CPUS,
       SC_CPU_COUNT, SC_CPU_STRIDE, SC_F_CURRENT, SC_F_IRQ_NESTING, SC_F_SCHED_LOCK, SC_F_RESCHEDULE,
       SC_F_SWITCHES, SC_F_TICK, SC_ALL };
enum { OB_F_TYPE, OB_F_LIFECYCLE, OB_F_GENERATION, OB_F_NAME, OB_F_NEXT, OB_F_HANDLE, OB_REGISTRY,
       OB_REGISTRY_COUNT, OB_HANDLE_MODEL, OB_MAX, OB_F_MUTEX_OWNER, OB_F_MUTEX_WAITERS,
       OB_F_NEXT_WAIT };

#define MAX_BLOCK 4096u

struct layout {
    uint64_t addr;
    struct emb_desc_image_section th, sc, ob; /* words 0 where absent */
};

/* Word i of a layout section; 0 (absent) past its count. */
static uint64_t lw(const struct emb_desc_image_section *s, unsigned i)
{
    return i < s->words && i < EMB_DESC_MAX_WORDS ? s->w[i] : 0;
}

static void take_section(struct layout *l, unsigned kind, unsigned version, uint32_t words,
                         const uint8_t *body, const struct emb_desc_reader *r)
{
    struct emb_desc_image_section *s = kind == EMB_DESC_THREADS     ? &l->th
                                       : kind == EMB_DESC_SCHEDULER ? &l->sc
                                       : kind == EMB_DESC_OBJECTS   ? &l->ob
                                                                    : NULL;
    if (s == NULL)
        return; /* a kind this reader does not know: skipped */
    s->kind = kind;
    s->version = version;
    s->words = words < EMB_DESC_MAX_WORDS ? words : EMB_DESC_MAX_WORDS;
    for (uint32_t i = 0; i < s->words; i++)
        s->w[i] = get_uint(body + (size_t)i * r->d->ptr_size, r->d->ptr_size, r->d->little);
}

/* The block's header and sections; false after saying why not (with the block's byte). */
static bool parse_block(struct emb_desc_reader *r, struct layout *l)
{
    unsigned W = r->d->ptr_size;
    uint8_t *b = malloc(MAX_BLOCK);
    if (b == NULL || !emb_desc_read_full(r, l->addr, b, 16u + W)) {
        emb_desc_report(r->is, "kernel layout block at 0x%" PRIx64 ": unreadable", l->addr);
        free(b);
        return false;
    }
    uint32_t length = (uint32_t)get_uint(b + 4, 4, r->d->little);
    uint32_t count = (uint32_t)get_uint(b + 8, 4, r->d->little);
    const char *bad = memcmp(b, "EMBK", 4) != 0                     ? "no \"EMBK\" magic at byte 0"
                      : length < 16u + W || length > MAX_BLOCK       ? "length at byte 4 out of bounds"
                      : count > 16u                                  ? "section count at byte 8 out of bounds"
                      : !emb_desc_read_full(r, l->addr, b, length)     ? "unreadable past its header"
                                                                     : NULL;
    if (bad != NULL) {
        emb_desc_report(r->is, "kernel layout block at 0x%" PRIx64 ": %s (length %" PRIu32 ")", l->addr, bad,
                        length);
        free(b);
        return false;
    }
    size_t off = 16u + W;
    for (uint32_t i = 0; i < count; i++) {
        if (off + 2u * W > length) {
            emb_desc_report(r->is, "kernel layout block at 0x%" PRIx64 ": byte %zu: section %" PRIu32
                            " runs past its length %" PRIu32, l->addr, off, i, length);
            break;
        }
        uint64_t tag = get_uint(b + off, W, r->d->little), words = get_uint(b + off + W, W, r->d->little);
        if (words > (length - off - 2u * W) / W) {
            emb_desc_report(r->is, "kernel layout block at 0x%" PRIx64 ": byte %zu: section of %" PRIu64
                            " words runs past its length %" PRIu32, l->addr, off + W, words, length);
            break;
        }
        take_section(l, (unsigned)(tag & 0xFFFFu), (unsigned)(tag >> 16), (uint32_t)words, b + off + 2u * W, r);
        off += (2u + (size_t)words) * W;
    }
    free(b);
    return true;
}

static bool seen(const uint64_t *addrs, size_t n, uint64_t a)
{
    for (size_t i = 0; i < n; i++)
        if (addrs[i] == a)
            return true;
    return false;
}

static const struct emb_desc_kobject *object_at(const struct emb_desc_kernel_view *k, uint64_t addr)
{
    for (size_t i = 0; i < k->nobjects; i++)
        if (k->objects[i].addr == addr)
            return &k->objects[i];
    return NULL;
}

/* The fields of the kernel's structure of this kind at addr (emb_desc_read_struct), named
 * "kernel KIND at ADDR" in what (64 bytes) for the messages about it. */
static int read_kernel_struct(struct emb_desc_reader *r, const char *kind, uint64_t addr, const uint64_t *fields,
                              size_t n, uint8_t *buf, char what[64])
{
    snprintf(what, 64, "kernel %s at 0x%" PRIx64, kind, addr);
    return emb_desc_read_struct(r, addr, fields, n, buf, what);
}

/* One object's header (and a mutex's owner) at addr. */
static bool read_kobject(struct emb_desc_reader *r, const struct layout *l, uint64_t addr, struct emb_desc_kobject *o,
                         uint64_t *next)
{
    const uint64_t words[] = {lw(&l->ob, OB_F_TYPE), lw(&l->ob, OB_F_LIFECYCLE), lw(&l->ob, OB_F_NAME),
                              lw(&l->ob, OB_F_NEXT), lw(&l->ob, OB_F_HANDLE), lw(&l->ob, OB_F_MUTEX_OWNER)};
    uint8_t buf[EMB_DESC_READ_MAX_STRUCT];
    char what[64];
    int size = read_kernel_struct(r, "object", addr, words, sizeof words / sizeof words[0], buf, what);
    if (size < 0)
        return false;
    memset(o, 0, sizeof *o);
    o->addr = addr;
    o->type = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[0]);
    o->lifecycle = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[1]);
    emb_desc_read_string(r, emb_desc_read_field(r, buf, (size_t)size, words[2]), o->name, sizeof o->name);
    o->handle = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[4]);
    if (o->type == 1u) /* a mutex */
        o->owner = emb_desc_read_field(r, buf, (size_t)size, words[5]);
    *next = emb_desc_read_field(r, buf, (size_t)size, words[3]);
    uint64_t types = 0, names = 0;
    if (emb_desc_word(r->d, EMB_DESC_TYPES, 0, &types) && emb_desc_word(r->d, EMB_DESC_TYPES, 1, &names))
        emb_desc_read_name_from(r, names, types, o->type, o->type_name, sizeof o->type_name);
    return true;
}

/* Every registry list, each at most the block's bound; EMB_DESC_MAX_KOBJECTS in all. */
static void read_kobjects(struct emb_desc_reader *r, const struct layout *l, struct emb_desc_kernel_view *k)
{
    uint64_t registry = lw(&l->ob, OB_REGISTRY), types = lw(&l->ob, OB_REGISTRY_COUNT);
    uint64_t per_type = lw(&l->ob, OB_MAX);
    if (registry == 0 || types == 0)
        return;
    if (types > 64u)
        types = 64u;
    k->objects = calloc(EMB_DESC_MAX_KOBJECTS, sizeof *k->objects);
    uint64_t *addrs = calloc(EMB_DESC_MAX_KOBJECTS, sizeof *addrs);
    for (uint64_t t = 0; k->objects && addrs && t < types; t++) {
        uint64_t a = 0;
        if (!emb_desc_read_word(r, registry + t * r->d->ptr_size, &a))
            break;
        for (uint64_t n = 0; a != 0 && n < per_type && k->nobjects < EMB_DESC_MAX_KOBJECTS; n++) {
            if (seen(addrs, k->nobjects, a)) {
                emb_desc_report(r->is, "kernel registry of type %" PRIu64 ": object 0x%" PRIx64
                                " seen twice: the list ends there", t, a);
                break;
            }
            uint64_t next = 0;
            if (!read_kobject(r, l, a, &k->objects[k->nobjects], &next))
                break;
            addrs[k->nobjects++] = a;
            a = next;
        }
    }
    free(addrs);
}

/* The per-CPU state of CPU 0 and the ready bitmap. */
static void read_scheduler(struct emb_desc_reader *r, const struct layout *l, struct emb_desc_kernel_view *k)
{
    const uint64_t words[] = {lw(&l->sc, SC_F_CURRENT), lw(&l->sc, SC_F_IRQ_NESTING),
                              lw(&l->sc, SC_F_SCHED_LOCK), lw(&l->sc, SC_F_RESCHEDULE),
                              lw(&l->sc, SC_F_SWITCHES), lw(&l->sc, SC_F_TICK)};
    uint8_t buf[EMB_DESC_READ_MAX_STRUCT];
    k->priority_count = (uint32_t)lw(&l->sc, SC_PRIOS);
    k->urgent_high = lw(&l->sc, SC_URGENT_HIGH) == 1u;
    uint64_t cpus = lw(&l->sc, SC_CPUS);
    int size = cpus ? emb_desc_read_struct(r, cpus, words, sizeof words / sizeof words[0], buf,
                                         "kernel per-CPU state")
                    : -1;
    if (size >= 0) {
        k->current = emb_desc_read_field(r, buf, (size_t)size, words[0]);
        k->irq_nesting = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[1]);
        k->sched_lock = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[2]);
        k->reschedule = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[3]);
        k->switches = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[4]);
        k->tick = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, words[5]);
    }
    uint64_t ready = lw(&l->sc, SC_READY), bitmap = lw(&l->sc, SC_F_BITMAP);
    size = ready ? emb_desc_read_struct(r, ready, &bitmap, 1, buf, "kernel ready structure") : -1;
    if (size >= 0)
        k->ready_bitmap = (uint32_t)emb_desc_read_field(r, buf, (size_t)size, bitmap);
}

/* High-water of a painted stack: bytes above the untouched paint at its low end. */
static uint32_t stack_used(struct emb_desc_reader *r, uint64_t low, uint32_t size, uint8_t paint)
{
    if (low == 0 || size == 0 || size > EMB_DESC_MAX_KSTACK || !emb_desc_read_in_ram(r, low, size, "a thread's stack"))
        return 0;
    uint8_t *b = malloc(size);
    uint32_t untouched = 0;
    if (b != NULL && emb_desc_read_full(r, low, b, size))
        while (untouched < size && b[untouched] == paint)
            untouched++;
    else
        untouched = size;
    free(b);
    return size - untouched;
}

/* The locks a thread holds: its owned list, each lock's header for its name. */
static void read_owned(struct emb_desc_reader *r, const struct layout *l, const struct emb_desc_kernel_view *k,
                       uint64_t first, struct emb_desc_thread *t)
{
    uint64_t next_word = lw(&l->th, TH_F_LOCK_NEXT), addrs[EMB_DESC_MAX_OWNED];
    for (uint64_t a = first; a != 0 && t->nowned < EMB_DESC_MAX_OWNED;) {
        if (seen(addrs, t->nowned, a))
            break;
        uint8_t buf[EMB_DESC_READ_MAX_STRUCT];
        int size = emb_desc_read_struct(r, a, &next_word, 1, buf, "a lock a thread holds");
        if (size < 0)
            break;
        const struct emb_desc_kobject *o = object_at(k, a);
        struct emb_desc_kobject *own = &t->owned[t->nowned];
        memset(own, 0, sizeof *own);
        if (o != NULL)
            *own = *o;
        own->addr = a;
        addrs[t->nowned++] = a;
        a = emb_desc_read_field(r, buf, (size_t)size, next_word);
    }
}

/* The registers a switched-out thread left at its saved stack pointer. */
static void read_frame(struct emb_desc_reader *r, const struct emb_desc_kernel_view *k, struct emb_desc_thread *t)
{
    unsigned W = r->d->ptr_size;
    if (t->running || t->sp == 0 || k->frame_words == 0 ||
        !emb_desc_read_in_ram(r, t->sp, (uint64_t)k->frame_words * W, "a thread's saved registers"))
        return;
    uint8_t b[EMB_DESC_MAX_FRAME * 8];
    if (!emb_desc_read_full(r, t->sp, b, (size_t)k->frame_words * W))
        return;
    for (uint32_t i = 0; i < k->frame_words; i++)
        t->frame[i] = get_uint(b + (size_t)i * W, W, r->d->little);
    t->has_frame = true;
}

/* The thread control block at addr, its fields as the threads section says. */
static bool read_thread(struct emb_desc_reader *r, const struct layout *l, const struct emb_desc_kernel_view *k,
                        uint64_t addr, struct emb_desc_thread *t, uint64_t *next)
{
    uint64_t w[TH_FRAME_LR + 1];
    for (unsigned i = 0; i <= TH_FRAME_LR; i++)
        w[i] = lw(&l->th, i);
    const uint64_t fields[] = {w[TH_F_NEXT], w[TH_F_SP], w[TH_F_STATE], w[TH_F_WAIT], w[TH_F_WAIT_OBJECT],
                               w[TH_F_WAKE_RESULT], w[TH_F_BASE], w[TH_F_EFF], w[TH_F_NAME], w[TH_F_INDEX],
                               w[TH_F_OWNED], w[TH_F_TIMEOUT_DEADLINE], w[TH_F_TIMEOUT_ARMED],
                               w[TH_F_NOTIFY_BITS], w[TH_F_NOTIFY_MASK], w[TH_F_STATS], w[TH_F_STACK_LOW],
                               w[TH_F_STACK_SIZE], w[TH_F_ENTRY]};
    uint8_t buf[EMB_DESC_READ_MAX_STRUCT];
    char what[64];
    int n = read_kernel_struct(r, "thread", addr, fields, sizeof fields / sizeof fields[0], buf, what);
    if (n < 0)
        return false;
    size_t len = (size_t)n;
    memset(t, 0, sizeof *t);
    t->addr = addr;
    *next = emb_desc_read_field(r, buf, len, w[TH_F_NEXT]);
    t->sp = emb_desc_read_field(r, buf, len, w[TH_F_SP]);
    t->state = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_STATE]);
    emb_desc_read_name_from(r, w[TH_STATE_NAMES], w[TH_STATE_COUNT], t->state, t->state_name, sizeof t->state_name);
    t->wait_reason = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_WAIT]);
    emb_desc_read_name_from(r, w[TH_WAIT_NAMES], w[TH_WAIT_COUNT], t->wait_reason, t->wait_name, sizeof t->wait_name);
    t->wait_object = emb_desc_read_field(r, buf, len, w[TH_F_WAIT_OBJECT]);
    t->wake_result = (int32_t)emb_desc_read_field(r, buf, len, w[TH_F_WAKE_RESULT]);
    t->base_priority = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_BASE]);
    t->eff_priority = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_EFF]);
    if (field_of(w[TH_F_NAME]).type == EMB_DESC_TEXT)
        emb_desc_read_field_text(buf, len, w[TH_F_NAME], t->name, sizeof t->name);
    else
        emb_desc_read_string(r, emb_desc_read_field(r, buf, len, w[TH_F_NAME]), t->name, sizeof t->name);
    t->index = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_INDEX]);
    t->timeout_deadline = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_TIMEOUT_DEADLINE]);
    t->timeout_armed = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_TIMEOUT_ARMED]);
    t->notify_bits = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_NOTIFY_BITS]);
    t->notify_mask = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_NOTIFY_MASK]);
    t->stack_low = emb_desc_read_field(r, buf, len, w[TH_F_STACK_LOW]);
    t->stack_size = (uint32_t)emb_desc_read_field(r, buf, len, w[TH_F_STACK_SIZE]);
    t->entry = emb_desc_read_field(r, buf, len, w[TH_F_ENTRY]);
    struct field fs = field_of(w[TH_F_STATS]);
    if (fs.size > 0 && fs.off + fs.size <= len)
        t->nstats = emb_desc_read_named_fields(r, w[TH_STATS_FIELDS], w[TH_STATS_COUNT], buf + fs.off, fs.size,
                                             t->stats, what);
    t->running = addr == k->current;
    const struct emb_desc_kobject *o = t->wait_object ? object_at(k, t->wait_object) : NULL;
    if (o != NULL)
        snprintf(t->wait_object_name, sizeof t->wait_object_name, "%s", o->name);
    read_owned(r, l, k, emb_desc_read_field(r, buf, len, w[TH_F_OWNED]), t);
    t->stack_used = stack_used(r, t->stack_low, t->stack_size, (uint8_t)w[TH_PAINT]);
    read_frame(r, k, t);
    return true;
}

static void read_threads(struct emb_desc_reader *r, const struct layout *l, struct emb_desc_kernel_view *k)
{
    uint64_t max = lw(&l->th, TH_MAX), head = 0;
    if (max > EMB_DESC_MAX_THREADS)
        max = EMB_DESC_MAX_THREADS;
    k->frame_words = (uint32_t)lw(&l->th, TH_FRAME_WORDS);
    if (k->frame_words > EMB_DESC_MAX_FRAME) {
        emb_desc_report(r->is, "kernel layout: a %" PRIu32 "-word context frame: registers not read", k->frame_words);
        k->frame_words = 0;
    }
    for (uint32_t i = 0; i < k->frame_words; i++)
        emb_desc_read_name_from(r, lw(&l->th, TH_FRAME_NAMES), k->frame_words, i, k->frame_names[i],
                                sizeof k->frame_names[i]);
    k->frame_pc = (uint32_t)lw(&l->th, TH_FRAME_PC);
    k->frame_lr = (uint32_t)lw(&l->th, TH_FRAME_LR);
    k->threads = calloc(max ? max : 1u, sizeof *k->threads);
    uint64_t *addrs = calloc(max ? max : 1u, sizeof *addrs);
    if (k->threads && addrs && lw(&l->th, TH_ALL) != 0 && emb_desc_read_word(r, lw(&l->th, TH_ALL), &head)) {
        for (uint64_t a = head; a != 0 && k->nthreads < max && !emb_mem_budget_spent(r->m);) {
            if (seen(addrs, k->nthreads, a)) {
                emb_desc_report(r->is, "kernel threads: 0x%" PRIx64 " seen twice: the list ends there", a);
                break;
            }
            uint64_t next = 0;
            if (!read_thread(r, l, k, a, &k->threads[k->nthreads], &next))
                break;
            addrs[k->nthreads++] = a;
            a = next;
        }
    }
    free(addrs);
}

void emb_desc_read_kernel(struct emb_desc_reader *r, struct emb_desc_model *md)
{
    struct layout *l = calloc(1, sizeof *l);
    if (l == NULL || !emb_desc_word(r->d, EMB_DESC_KERNEL, 0, &l->addr) || l->addr == 0 || !parse_block(r, l)) {
        free(l);
        return;
    }
    struct emb_desc_kernel_view *k = calloc(1, sizeof *k);
    if (k != NULL) {
        uint64_t name = 0;
        if (emb_desc_read_word(r, l->addr + 16u, &name))
            emb_desc_read_string(r, name, k->name, sizeof k->name);
        read_kobjects(r, l, k);
        read_scheduler(r, l, k);
        read_threads(r, l, k);
        md->kernel = k;
    }
    free(l);
}

void emb_desc_read_kernel_free(struct emb_desc_model *md)
{
    if (md->kernel == NULL)
        return;
    free(md->kernel->threads);
    free(md->kernel->objects);
    free(md->kernel);
    md->kernel = NULL;
}
