/* Cortex-M port: the clock, the CPU's rings, the registry tools read, monitors, and the
 * crash record writer the fault handlers (fault.c) and the library's own faults share. */
#include <emb/cortex_m.h>
#include <emb/crash.h>
#include <emb/descriptor.h>
#include <emb/log.h>
#include <emb/monitor.h>
#include <emb/port.h>
#include <emb/trace_events.h>
#include <emb/trace_format.h>

#include "cortex_m_internal.h"

#define EMB_CM_DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define EMB_CM_DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define EMB_CM_DEMCR_TRCENA (1u << 24)
#define EMB_CM_DWT_CYCCNTENA 1u
#define EMB_CM_DWT_NOCYCCNT (1u << 25)
#define EMB_CM_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define EMB_CM_SYST_RVR (*(volatile uint32_t *)0xE000E014u)

#ifdef CONFIG_EMB_CM_PORT_NAME
_Static_assert(sizeof(CONFIG_EMB_CM_PORT_NAME) <= 28, "CONFIG_EMB_CM_PORT_NAME: at most 27 characters");
char emb_cm_port_name[28] = CONFIG_EMB_CM_PORT_NAME;
#define EMB__CM_NAME_FIXED 1
#else
char emb_cm_port_name[28] = "cortex-m";
#define EMB__CM_NAME_FIXED 0
#endif
struct emb_cm_core emb_cm = {
    .ring = &emb_trace_unclaimed_ring,
    .dwt_state = EMB_CM_DWT_OFF,
    .log_ring = &emb_log_unclaimed_ring,
};

static uint32_t emb_cm_hz;

/* ---- The clock ---- */

uint64_t emb_port_timestamp_hz(void)
{
    return emb_cm_hz;
}

int64_t emb_port_clock_offset_ns(void)
{
    return 0;
}

uint32_t emb_cm_clock_kind(void)
{
    return emb_cm.clock_kind;
}

const char *emb_cm_clock_name(void)
{
    return emb_cm.clock_kind == EMB_CM_CLOCK_DWT       ? "dwt"
           : emb_cm.clock_kind == EMB_CM_CLOCK_SYSTICK ? "systick"
                                                       : "none";
}

void emb_cm_systick_isr(void)
{
    /* Only this handler writes the count; readers retry when it changed under them. */
    if (emb_cm.clock_kind == EMB_CM_CLOCK_SYSTICK)
        __atomic_store_n(&emb_cm.systick_wraps, emb_cm.systick_wraps + 1u, __ATOMIC_RELAXED);
}

#if CONFIG_EMB_CM_SYSTICK_HANDLER
void SysTick_Handler(void);
void SysTick_Handler(void)
{
    emb_cm_systick_isr();
}
#endif

/* The one copy of the clock reads and of the add in a build that optimises for size. */
#define EMB_CM_CLOCK_INLINE 1

void emb_cm_add32_release(uint32_t *p, uint32_t v)
{
    emb__cm_add32_release(p, v);
}

uint32_t emb_cm_clock_split(uint32_t *high)
{
#if CONFIG_EMB_CM_CLOCK == 1
    return emb__cm_dwt_split(high);
#elif CONFIG_EMB_CM_CLOCK == 2
    return emb__cm_systick_split(high);
#else
    if (emb_cm.clock_kind == EMB_CM_CLOCK_DWT)
        return emb__cm_dwt_split(high);
    return emb__cm_systick_split(high);
#endif
}

void emb_cm_clock_poll(void)
{
    (void)emb_port_timestamp();
}

/* DWT CYCCNT when the core has one and it counts (QEMU models the registers but not the
 * counting, and ARMv6-M has none); else SysTick at the core clock, its interrupt counting
 * the wraps. */
static void emb__clock_start(void)
{
#if CONFIG_EMB_CM_CLOCK != 2 && !defined(__ARM_ARCH_6M__)
    EMB_CM_DEMCR |= EMB_CM_DEMCR_TRCENA;
    if ((EMB_CM_DWT_CTRL & EMB_CM_DWT_NOCYCCNT) == 0u) {
        EMB_CM_DWT_CYCCNT = 0u;
        EMB_CM_DWT_CTRL |= EMB_CM_DWT_CYCCNTENA;
        uint32_t a = EMB_CM_DWT_CYCCNT;
        for (volatile int i = 0; i < 8; i++) {
        }
        if (EMB_CM_DWT_CYCCNT != a) {
            emb_cm.dwt_state = 0u;
            __atomic_store_n(&emb_cm.clock_kind, EMB_CM_CLOCK_DWT, __ATOMIC_RELEASE);
            return;
        }
    }
#endif
#if CONFIG_EMB_CM_CLOCK != 1
    EMB_CM_SYST_CSR = 0u;
    EMB_CM_SYST_RVR = 0x00FFFFFFu;
    EMB_CM_SYST_CVR = 0u;
    emb_cm.dwt_state = EMB_CM_DWT_OFF;
    emb_cm.systick_wraps = 0u;
    __atomic_store_n(&emb_cm.clock_kind, EMB_CM_CLOCK_SYSTICK, __ATOMIC_RELEASE);
    EMB_CM_SYST_CSR = 7u; /* processor clock, wrap interrupt, enable */
#endif
}

/* "cortex-m3/dwt": the core from CPUID's part number (0xC2n is the Cortex-Mn, 0xC60 the
 * M0+, 0xD20 to 0xD23 the M23, M33, M55 and M85), then the clock. emb_cm_port_name
 * starts as "cortex-m"; the longest name, "cortex-m0+/systick", fits it. */
static void emb__name_port(void)
{
    /* Written from offset 8 on: idempotent, so a late writer may call it again. */
    static const char v8m[4][2] = {{'2', '3'}, {'3', '3'}, {'5', '5'}, {'8', '5'}};
    uint32_t part = (EMB_CM_SCB_CPUID >> 4) & 0xFFFu;
    char *p = emb_cm_port_name + 8;
    if ((part & 0xFF0u) == 0xC20u) {
        *p++ = (char)('0' + (part & 0xFu));
    } else if (part == 0xC60u) {
        *p++ = '0';
        *p++ = '+';
    } else if ((part & 0xFFCu) == 0xD20u) {
        *p++ = v8m[part & 3u][0];
        *p++ = v8m[part & 3u][1];
    }
    *p++ = '/';
    for (const char *s = emb_cm_clock_name(); *s != '\0'; s++)
        *p++ = *s;
    *p = '\0';
}

/* The library's readers of the name that start with the port: the descriptor, the log's
 * stream header, the crash record's flight recorder. Without all three (a trace-only
 * image) the name is written by its one other reader, emb_cm_link_identity() (a trace
 * stream header), when that runs, so the naming code is linked only where it is read. */
#define EMB__CM_NAME_AT_START (CONFIG_EMB_DESCRIPTOR || CONFIG_EMB_LOG || CONFIG_EMB_CRASH)
/* A name fixed at build time (CONFIG_EMB_CM_PORT_NAME) is never written: no CPUID decoding. */
#define EMB__CM_NAME_LATE (!EMB__CM_NAME_FIXED && !EMB__CM_NAME_AT_START)
#define EMB__CM_NAME_EARLY (!EMB__CM_NAME_FIXED && EMB__CM_NAME_AT_START)

/* ---- Build id ---- */

/* Defined by ports/cortex-m/emb_build_id.ld at the note's first byte; weak, so an image
 * linked without the fragment reports no build id. */
extern const uint8_t emb_build_id_note[] __attribute__((weak));

uint32_t emb_cm_build_id(const uint8_t **id)
{
    const uint8_t *note = emb_build_id_note;
    /* An undefined weak symbol is address 0; the compiler must not assume otherwise. */
    __asm__("" : "+r"(note));
    if (note == NULL)
        return 0u;
    /* The note is word-aligned: plain word loads, and the name "GNU\0" as one word. */
    const uint32_t *w = (const uint32_t *)(const void *)note;
    uint32_t descsz = w[1];
    if (w[0] != 4u || w[2] != 3u /* NT_GNU_BUILD_ID */ || emb_get_le32(&w[3]) != 0x00554E47u ||
        descsz == 0u || descsz > EMB_TSF_BUILD_ID_MAX)
        return 0u;
    *id = note + 16;
    return descsz;
}

void emb_cm_link_identity(struct emb_tsf_info *info, struct emb_log_identity *log_id, uint32_t ring_packets)
{
    if (EMB__CM_NAME_LATE)
        emb__name_port();
    const uint8_t *build_id = 0;
    uint32_t n = emb_cm_build_id(&build_id);
    *info = (struct emb_tsf_info){
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM,
        .packet_size = CONFIG_EMB_TRACE_PACKET_SIZE,
        .clock_hz = emb_cm_hz,
        .build_id = build_id,
        .build_id_len = (uint8_t)(n < EMB_TSF_BUILD_ID_MAX ? n : EMB_TSF_BUILD_ID_MAX),
        .pointer_size = 4u,
        .port = emb_cm_port_name,
        .ring_packets = ring_packets,
    };
    memcpy(info->uuid, emb_trace_uuid(), sizeof info->uuid);
    *log_id = (struct emb_log_identity){build_id, (uint8_t)(n < EMB_LOG_BUILD_ID_MAX ? n : EMB_LOG_BUILD_ID_MAX)};
}

/* ---- Rings and the registry ---- */

struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    return emb_cm.ring == &emb_trace_unclaimed_ring ? (struct emb_trace_ring *)0 : emb_cm.ring;
}

struct emb_log_ring *emb_port_log_ring_claim(void)
{
    return emb_cm.log_ring == &emb_log_unclaimed_ring ? (struct emb_log_ring *)0 : emb_cm.log_ring;
}

/* One context, the CPU: every thread and interrupt on it. */
struct emb_context_info emb__cm_cpu;

emb_status emb_cm_log_init(struct emb_log_ring *ring, uint8_t *buf, uint32_t size)
{
    emb_status status = emb_log_init();
    if (status == EMB_OK)
        status = emb_log_ring_init(ring, 0u, EMB_CONTEXT_CPU, buf, size);
    if (status != EMB_OK)
        return status;
    memcpy(ring->name, "cpu0", 5);
    emb_cm.log_ring = ring;
    emb_debug_registry.log_rings = (struct emb_log_ring *const *)&emb_cm.log_ring;
    __atomic_store_n(&emb_debug_registry.log_ring_count, 1u, __ATOMIC_RELEASE);
    return EMB_OK;
}

/* Fills the stack below the caller's frame with the paint byte, for its high-water mark. */
static uint32_t emb__paint_stack(uintptr_t low, uint32_t size)
{
    if (!CONFIG_EMB_CM_STACK_PAINT)
        return 0u;
    uintptr_t sp;
    __asm__ __volatile__("mov %0, sp" : "=r"(sp));
    /* Leave room under sp for this function's own calls. */
    if (sp < low + 128u || sp > low + size)
        return 0u;
    uint32_t n = (uint32_t)(sp - 128u - low) & ~3u;
    for (volatile uint32_t *p = (volatile uint32_t *)low; p < (volatile uint32_t *)(low + n); p++)
        *p = EMB_STACK_PAINT * 0x01010101u;
    return n;
}

emb_status emb_cm_start(const struct emb_cm_config *c)
{
    if (c == NULL || c->ring == NULL || c->cpu_hz == 0u)
        return EMB_E_INVALID;
    emb__clock_start();
    emb_cm_hz = c->cpu_hz;
    if (EMB__CM_NAME_EARLY)
        emb__name_port();

    const uint8_t *build_id = NULL;
    uint32_t build_id_len = emb_cm_build_id(&build_id);
    uint8_t uuid[16] = {0};
    if (c->uuid != NULL)
        memcpy(uuid, c->uuid, sizeof uuid);
    else if (build_id_len > 0u)
        memcpy(uuid, build_id, build_id_len < 16u ? build_id_len : 16u);
    emb_trace_init(uuid, c->mode, c->classes);
    emb_status status = emb_trace_ring_init(c->ring, 0u, EMB_CONTEXT_CPU, c->ring_buf,
                                            c->ring_commit, c->ring_packets);
    if (status != EMB_OK)
        return status;
    memcpy(c->ring->name, "cpu0", 5);
    emb_cm.ring = c->ring;

#if CONFIG_EMB_LOG
    if (c->log_ring != NULL && (status = emb_cm_log_init(c->log_ring, c->log_buf, c->log_size)) != EMB_OK)
        return status;
#endif
#if CONFIG_EMB_CRASH
    if (c->retained != NULL)
        (void)emb_crash_retained_init(c->retained, c->retained_size);
#endif

    emb__cm_cpu.ring = c->ring;
    emb__cm_cpu.stack_low = c->stack_low;
    emb__cm_cpu.stack_size = c->stack_size;
    if (CONFIG_EMB_CM_STACK_PAINT && c->paint_stack && c->stack_size > 0u)
        emb__cm_cpu.stack_painted = emb__paint_stack(c->stack_low, c->stack_size);
    emb__cm_cpu.state = EMB_CONTEXT_LIVE;
    struct emb_debug_registry *r = &emb_debug_registry;
    r->ring_packets = c->ring_packets;
    r->contexts = &emb__cm_cpu;
    r->context_stride = sizeof emb__cm_cpu;
    r->context_capacity = 1u;
    r->context_count = 1u;
    r->probe_consumer = c->probe_consumer ? 1u : 0u;
    emb_debug_registry_identity(build_id, build_id_len, c->cpu_hz, 0);

#if EMB_CM_HAS_FSR
    /* Faults of their own rather than all escalating to HardFault: the record then says
     * which. */
    EMB_CM_SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18);
    if (c->trap_div0)
        EMB_CM_SCB_CCR |= 1u << 4;
#endif
    return EMB_OK;
}

emb_status emb_cm_init(uint32_t cpu_hz, const uint8_t uuid[16], enum emb_trace_mode mode,
                       uint32_t classes, struct emb_trace_ring *ring, uint8_t *buf,
                       uint32_t *commit, uint32_t packets)
{
    const struct emb_cm_config c = {
        .cpu_hz = cpu_hz, .uuid = uuid, .mode = mode, .classes = classes, .ring = ring,
        .ring_buf = buf, .ring_commit = commit, .ring_packets = packets,
    };
    return emb_cm_start(&c);
}

/* ---- Monitors, statistics ---- */

static struct emb_monitor_ctx emb_cm_monitor;

struct emb_monitor_ctx *emb_port_monitor_ctx(void)
{
    return &emb_cm_monitor;
}

void emb_port_stats_reset(void)
{
}

/* Weak: a kernel that keeps threads defines its own (examples/kernel-cortex-m). */
__attribute__((weak)) emb_status emb_stats_thread_get(emb_thread_t thread, emb_stats_thread_t *out)
{
    (void)thread;
    (void)out;
    return EMB_E_NOTFOUND; /* no threads without a kernel */
}

emb_status emb_stats_object_get(emb_handle_t handle, emb_stats_object_t *out)
{
    (void)handle;
    (void)out;
    return EMB_E_NOTFOUND;
}

/* ---- Faults ---- */

void emb_cm_reset(void)
{
    __asm__ __volatile__("dsb" ::: "memory");
    /* VECTKEY, the priority grouping kept, SYSRESETREQ. */
    EMB_CM_SCB_AIRCR = 0x05FA0000u | (EMB_CM_SCB_AIRCR & 0x700u) | 0x4u;
    __asm__ __volatile__("dsb" ::: "memory");
    for (;;) {
    }
}

/* A fault the library raises (a monitor's FAULT action): the caller's registers are not
 * a stacked frame, so the record holds the status registers as they are, pc as given,
 * the fault's own two values in fault_address and lr_or_ra, and this function's frame. */
void emb_port_fault(uint8_t fault_class, uint8_t code, uintptr_t pc, uint32_t value,
                    uint32_t limit)
{
    struct emb__cm_fault f;
    memset(&f, 0, sizeof f);
    f.fault_class = fault_class;
    f.code = code;
    f.pc = (uint32_t)pc;
    f.fault_address = value;
    f.lr = limit;
    f.sp = (uint32_t)(uintptr_t)__builtin_frame_address(0);
    uint32_t xpsr, control;
    __asm__ __volatile__("mrs %0, xpsr" : "=r"(xpsr));
    __asm__ __volatile__("mrs %0, control" : "=r"(control));
    f.status[EMB_CRASH_CM_XPSR] = xpsr;
    f.status[EMB_CRASH_CM_CONTROL] = control;
    f.status_count = EMB_CRASH_CM_COUNT;
#if EMB_CM_HAS_FSR
    f.status[EMB_CRASH_CM_CFSR] = EMB_CM_SCB_CFSR;
    f.status[EMB_CRASH_CM_HFSR] = EMB_CM_SCB_HFSR;
    f.status[EMB_CRASH_CM_MMFAR] = EMB_CM_SCB_MMFAR;
    f.status[EMB_CRASH_CM_BFAR] = EMB_CM_SCB_BFAR;
#endif
    emb__cm_fault_finish(&f);
}

/* ---- ARMv6-M: the atomics the library's slow paths use, by masking interrupts ----
 * GCC has no inline sequence without LDREX/STREX and calls these (libatomic's names). */
#if defined(__ARM_ARCH_6M__)
#define EMB__CM_LIBATOMIC(ret, name, params) ret emb__cm_##name params __asm__("__atomic_" #name "_4"); \
    ret emb__cm_##name params

EMB__CM_LIBATOMIC(uint32_t, fetch_add, (volatile void *p, uint32_t v, int order))
{
    (void)order;
    uint32_t s = emb__cm_primask_save();
    uint32_t old = *(volatile uint32_t *)p;
    *(volatile uint32_t *)p = old + v;
    emb__cm_primask_restore(s);
    return old;
}

EMB__CM_LIBATOMIC(uint32_t, fetch_sub, (volatile void *p, uint32_t v, int order))
{
    (void)order;
    uint32_t s = emb__cm_primask_save();
    uint32_t old = *(volatile uint32_t *)p;
    *(volatile uint32_t *)p = old - v;
    emb__cm_primask_restore(s);
    return old;
}

EMB__CM_LIBATOMIC(uint32_t, add_fetch, (volatile void *p, uint32_t v, int order))
{
    return emb__cm_fetch_add(p, v, order) + v;
}

EMB__CM_LIBATOMIC(uint32_t, sub_fetch, (volatile void *p, uint32_t v, int order))
{
    return emb__cm_fetch_sub(p, v, order) - v;
}

EMB__CM_LIBATOMIC(uint32_t, exchange, (volatile void *p, uint32_t v, int order))
{
    (void)order;
    uint32_t s = emb__cm_primask_save();
    uint32_t old = *(volatile uint32_t *)p;
    *(volatile uint32_t *)p = v;
    emb__cm_primask_restore(s);
    return old;
}

EMB__CM_LIBATOMIC(bool, compare_exchange, (volatile void *p, void *expected, uint32_t desired,
                                           bool weak, int success, int failure))
{
    (void)weak;
    (void)success;
    (void)failure;
    uint32_t s = emb__cm_primask_save();
    uint32_t cur = *(volatile uint32_t *)p;
    bool ok = cur == *(uint32_t *)expected;
    if (ok)
        *(volatile uint32_t *)p = desired;
    else
        *(uint32_t *)expected = cur;
    emb__cm_primask_restore(s);
    return ok;
}
#endif
