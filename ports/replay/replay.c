/* The replay port's state and clock: the time, the ring and the clock rate of the event
 * being encoded, all set by the encoder (tools/lib/import/trace_replay.c). */
#include <emb/port.h>
#include <emb/trace.h>

uint64_t emb_replay_clock;
uint64_t emb_replay_clock_hz;
struct emb_trace_ring *emb_replay_ring = &emb_trace_unclaimed_ring;

uint64_t emb_port_timestamp_hz(void)
{
    return emb_replay_clock_hz;
}

int64_t emb_port_clock_offset_ns(void)
{
    return 0;
}

/* Every event names its ring, so no context is ever without one. */
struct emb_trace_ring *emb_port_trace_ring_claim(void)
{
    return NULL;
}

/* The ring reads event sizes only to count a packet it overwrites unread; the replay
 * drains every ring after each event, so that never happens, and its events come from
 * whatever catalogue the caller replays, not from the library's: it knows no sizes. */
const uint32_t emb_trace_event_words_len = 1u;
const uint8_t emb_trace_event_words[1] = {0u};
