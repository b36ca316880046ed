/* The 32-bit event timestamps across many wraps of the clock: recorded by the real ring
 * (on the test port, whose clock the test sets), carried in a trace stream file, decoded by
 * the host decoder. Every event's 64-bit time must come back exactly, so times are
 * monotonic over a trace many wraps long, including gaps longer than a wrap with no event. */
#include <emb/trace.h>

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "trace_decode.h"

uint64_t emb_test_clock;
uint64_t emb_test_clock_step;
struct emb_trace_ring *emb_test_ring;
struct emb_trace_ring *emb_test_claim_ring;
void (*emb_test_preempt)(enum emb_test_point point);

uint64_t emb_port_timestamp_hz(void) { return 1000000u; }
int64_t emb_port_clock_offset_ns(void) { return 0; }
struct emb_trace_ring *emb_port_trace_ring_claim(void) { return NULL; }

#define P CONFIG_EMB_TRACE_PACKET_SIZE
#define NPKT 1024u
#define EVENTS 600u

static _Alignas(P) uint8_t ring_buf[NPKT * P];
static uint32_t ring_commit[NPKT];
static struct emb_trace_ring ring;
static uint64_t recorded_ts[EVENTS];

static uint8_t file[EMB_TSF_HEADER_BYTES(1) + NPKT * P];
static size_t file_len;

static void append_packet(void *arg, const struct emb_trace_ring *r, const uint8_t *pkt, uint32_t size)
{
    (void)arg;
    (void)r;
    memcpy(file + file_len, pkt, size);
    file_len += size;
}

/* user_event(id u16, a u32, b u32): a = index of the event. */
static void emit(uint32_t index)
{
    struct emb_trace_slot slot = emb_trace_try_reserve(0x01A1u, 20u);
    if (slot.payload == NULL)
        return;
    emb_put_le32(slot.payload, 9u);
    emb_put_le32(slot.payload + 4, index);
    emb_put_le32(slot.payload + 8, 0u);
    emb_trace_commit(slot, 20u);
}

int main(void)
{
    const struct emb_catalog *cat = emb_catalog_builtin();
    const struct emb_catalog_event *ev = emb_catalog_find(cat, "user_event");
    ok(ev != NULL && ev->id == 0x01A1u && ev->size == 20u, "user_event is id 0x1A1, 20 bytes");

    static const uint8_t uuid[16] = {0xE, 0xB, 0x0, 0x1};
    emb_trace_init(uuid, EMB_TRACE_MODE_SNAPSHOT, 0xFFFFFFFFu);
    emb_trace_ring_init(&ring, 3, EMB_CONTEXT_CPU, ring_buf, ring_commit, NPKT);
    emb_test_ring = &ring;

    /* Steps that make the low word wrap often: small ones, ones just under a wrap, ones
     * just over, and idle gaps of several wraps with no event in between. */
    uint64_t t = 0xFFFF0000u;
    srand(7);
    unsigned wraps_between_events = 0;
    for (uint32_t i = 0; i < EVENTS; i++) {
        uint64_t step;
        switch (i % 6u) {
        case 0: step = (uint64_t)rand() % 1000u; break;
        case 1: step = 0xFFFFFFF0u; break;
        case 2: step = 0x100000010u; break;
        case 3: step = 0x300000000u + (uint64_t)rand(); wraps_between_events++; break;
        default: step = (uint64_t)rand() * 97u; break;
        }
        t += step;
        emb_test_clock = t;
        emb_test_clock_step = 0;
        recorded_ts[i] = t;
        emit(i);
    }
    emb_trace_flush(&ring);
    ok((t >> 32) > 500u, "the clock wrapped %llu times", (unsigned long long)(t >> 32));

    struct emb_tsf_info info = {
        .catalog_checksum = cat->checksum,
        .packet_size = P,
        .clock_hz = 1000000u,
        .pointer_size = 4,
        .port = "test",
    };
    memcpy(info.uuid, uuid, 16);
    struct emb_tsf_context ctx = {.id = 3, .kind = EMB_CONTEXT_CPU, .name = "cpu0"};
    file_len = emb_tsf_encode_header(file, sizeof file, &info, &ctx, 1);
    ok(file_len > 0, "stream header encoded");
    uint32_t packets = emb_trace_ring_snapshot(&ring, (uint8_t[P]){0}, append_packet, NULL);
    ok(packets > 1, "%u packets", packets);

    struct emb_trace_options opt = {.catalog = cat, .name = "clock-test"};
    struct emb_trace *trace = emb_trace_decode(file, file_len, &opt);
    ok(trace != NULL && !emb_trace_summary(trace)->fatal, "decoded");
    ok_eq(emb_trace_summary(trace)->errors, 0, "without errors");
    size_t n = 0;
    const struct emb_trace_event *const *events = emb_trace_events(trace, &n);
    ok_eq(n, EVENTS, "every event");
    int exact = 1, monotonic = 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t index = emb_get_le32(events[i]->payload + 4);
        exact &= index == i && events[i]->ts == recorded_ts[i];
        if (i > 0)
            monotonic &= events[i]->ns >= events[i - 1]->ns && events[i]->ts > events[i - 1]->ts;
    }
    ok(exact, "every 64-bit timestamp rebuilt exactly");
    ok(monotonic, "times strictly increase over the whole trace");
    ok(wraps_between_events > 50, "including %u gaps of several wraps without an event",
       wraps_between_events);
    emb_trace_free(trace);
    return emb_test_done();
}
