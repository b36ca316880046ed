/* Firmware for QEMU's mps2-an385 that talks over the memory channel: trace packets go up
 * as frames on up ring 0, shell commands come down ring 0 and are answered up ring 0.
 *
 * The trace runs in window mode: nothing is recorded until the host sends ARM_WINDOW;
 * then the ring fills once, the window closes, and the firmware sends the stream header
 * and every packet. SET_LOG_LEVEL sets the level the events carry (field `a` of
 * user_event), so a test sees the command take effect in the trace itself. SNAPSHOT sends
 * what the ring holds at once. `fw_pattern` is a RAM buffer with a known pattern for
 * memory read tests over the GDB protocol.
 *
 * A retained ring (emb/retained.h) in `.noinit` keeps a log frame every 64 iterations
 * (channel 0: boot number and iteration, two u32). On each start the firmware attaches to
 * it; what the previous boot left there is uploaded up ring 0 before anything else, then
 * cleared. `fw_boots` counts the starts the ring survived.
 *
 * Built by tests/CMakeLists.txt with ports/cortex-m/mps2 (start-up, linker script). */
#include <emb/cortex_m.h>
#include <emb/frame.h>
#include <emb/memchan.h>
#include <emb/retained.h>
#include <emb/shell.h>
#include <emb/trace_events.h>
#include <emb/trace_link.h>

#include "mps2.h"

#define PACKETS 8u

static _Alignas(CONFIG_EMB_TRACE_PACKET_SIZE) uint8_t ring_buf[PACKETS * CONFIG_EMB_TRACE_PACKET_SIZE];
static uint32_t ring_commit[PACKETS];
static struct emb_trace_ring ring;
static uint8_t up_frames[16384], up_spare[256], down_cmds[256];
static uint8_t header[EMB_TSF_HEADER_BYTES(1)];
static struct emb_trace_link link;
static volatile int snapshot_requested;

/* Read by tests over the GDB protocol: byte i is (i * 7 + 3) mod 256. */
__attribute__((used)) uint8_t fw_pattern[65536];
/* Set by SET_LOG_LEVEL. */
__attribute__((used)) volatile uint32_t fw_log_level = 1;
/* The retained ring, in the region QEMU leaves alone across a reset. */
__attribute__((used, section(".noinit"), aligned(8))) uint8_t fw_retained[4096];
/* What the attach found: starts survived, whether the ring was intact, bytes uploaded. */
__attribute__((used)) volatile uint32_t fw_boots, fw_retained_intact, fw_retained_uploaded;
/* A test writes FW_RESET_MAGIC here: the firmware resets the board through AIRCR. */
#define FW_RESET_MAGIC 0x5EB0075Eu
__attribute__((used)) volatile uint32_t fw_reset_request;
/* Nonzero: keep up ring 0 full of 240-byte frames on channel 4, for throughput figures
 * (bench/memchan_gdb_bench.c). */
__attribute__((used)) volatile uint32_t fw_stream;
/* Loop iterations, for tests that watch the firmware run. */
__attribute__((used)) volatile uint32_t fw_iterations;

static emb_status up_raw(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    return emb_memchan_write(0, bytes, len) == len ? EMB_OK : EMB_E_NOSPACE;
}

/* The next start: the previous boot's frames go up first, then the ring is emptied. */
static struct emb_retained_ring *retained_start(void)
{
    struct emb_retained_info ri;
    if (emb_retained_attach(fw_retained, sizeof fw_retained, &ri) != EMB_OK)
        return 0;
    struct emb_retained_ring *r = (struct emb_retained_ring *)fw_retained;
    fw_boots = ri.starts;
    fw_retained_intact = ri.intact;
    if (ri.bytes > 0u && emb_retained_read(r, up_raw, 0) == EMB_OK) {
        fw_retained_uploaded = ri.bytes;
        emb_retained_clear(r);
    }
    return r;
}

static emb_status send_frame(void *arg, uint8_t channel, const void *payload, size_t len)
{
    (void)arg;
    return emb_memchan_send_frame(0, channel, payload, len);
}

static emb_status set_level(void *arg, uint16_t module, uint8_t level)
{
    (void)arg;
    if (module != EMB_SHELL_ALL_MODULES && module != 0u)
        return EMB_E_NOTFOUND;
    fw_log_level = level;
    return EMB_OK;
}

static emb_status request_snapshot(void *arg)
{
    (void)arg;
    snapshot_requested = 1;
    return EMB_OK;
}

static void send_packet(void *arg, const struct emb_trace_ring *r, const uint8_t *packet,
                        uint32_t size)
{
    (void)arg;
    (void)r;
    if (emb_memchan_send_frame(0, EMB_FRAME_CH_TRACE, packet, size) != EMB_OK)
        link.dropped++;
    else
        link.packets++;
}

static void send_snapshot(void)
{
    static _Alignas(8) uint8_t scratch[CONFIG_EMB_TRACE_PACKET_SIZE];
    /* The packet still open (the one the window closed in) is sent too. */
    emb_trace_flush(&ring);
    emb_trace_link_header(&link);
    emb_trace_ring_snapshot(&ring, scratch, send_packet, 0);
}

int main(void)
{
    mps2_uart_init();
    mps2_systick_start();
    for (uint32_t i = 0; i < sizeof fw_pattern; i++)
        fw_pattern[i] = (uint8_t)(i * 7u + 3u);

    static const uint8_t uuid[16] = {0xE3, 0xB0, 0xC4, 0x42, 0x98, 0xFC, 0x1C, 0x14,
                                     0x9A, 0xFB, 0xF4, 0xC8, 0x99, 0x6F, 0xB9, 0x24};
    emb_cm_init(25000000u, uuid, EMB_TRACE_MODE_WINDOW, EMB_TRACE_CLASSES_ALL, &ring, ring_buf,
                ring_commit, PACKETS);
    const struct emb_memchan_buffer up[2] = {{"emb-frames", up_frames, sizeof up_frames},
                                             {"spare", up_spare, sizeof up_spare}};
    const struct emb_memchan_buffer down[1] = {{"emb-shell", down_cmds, sizeof down_cmds}};
    emb_memchan_init(up, 2, down, 1);
    struct emb_retained_ring *retained = retained_start();
    const struct emb_tsf_info info = {
        .catalog_checksum = EMB_TRACE_CATALOG_CHECKSUM,
        .packet_size = CONFIG_EMB_TRACE_PACKET_SIZE,
        .clock_hz = 25000000u,
        .pointer_size = 4,
        .port = "cortex-m/mps2-an385",
        .uuid = {0xE3, 0xB0, 0xC4, 0x42, 0x98, 0xFC, 0x1C, 0x14, 0x9A, 0xFB, 0xF4, 0xC8, 0x99,
                 0x6F, 0xB9, 0x24},
    };
    const struct emb_tsf_context ctx = {.id = 0, .kind = EMB_CONTEXT_CPU, .name = "cpu0"};
    emb_trace_link_init(&link, send_frame, 0, header, sizeof header, &info, &ctx, 1, 16);
    const struct emb_shell_hooks hooks = {.set_log_level = set_level, .snapshot = request_snapshot};
    emb_shell_set_hooks(&hooks);
    mps2_uart_puts("mps2_memchan: ready\n");

    int sent = 0;
    for (uint32_t i = 0;; i++) {
        EMB_TRACE_user_event((uint16_t)i, fw_log_level, emb_shell_commands());
        fw_iterations = i;
        if ((i & 63u) != 0u)
            continue;
        const uint32_t rec[2] = {fw_boots, i};
        emb_retained_put_frame(retained, EMB_FRAME_CH_LOG, rec, sizeof rec);
        emb_memchan_poll_shell(0, 0);
        if (fw_stream) {
            static uint8_t filler[240] = {1, 2, 3};
            while (emb_memchan_space(0) >= EMB_FRAME_WIRE_MAX(sizeof filler)) {
                emb_memchan_send_frame(0, 4, filler, sizeof filler);
                filler[3]++;
            }
        }
        if (fw_reset_request == FW_RESET_MAGIC) {
            fw_reset_request = 0;
            __asm__ volatile("dsb" ::: "memory");
            *(volatile uint32_t *)0xE000ED0Cu = 0x05FA0004u; /* AIRCR: SYSRESETREQ */
            __asm__ volatile("dsb" ::: "memory");
            for (;;) {
            }
        }
        if (!sent && emb_trace_window_state() == EMB_TRACE_WINDOW_CLOSED) {
            send_snapshot();
            sent = 1;
            mps2_uart_puts("mps2_memchan: window sent\n");
        }
        if (snapshot_requested) {
            snapshot_requested = 0;
            send_snapshot();
        }
    }
}
