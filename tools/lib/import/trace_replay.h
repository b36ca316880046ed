/* Writes a trace stream file ("EMBT", docs/formats/trace.md) from events that already
 * have their times: what importers (RTEMS record streams, SWO captures) produce. Each
 * context gets a ring of the target library's own trace code running on the replay port
 * (tools/lib/replay), so the packets are exactly what a target would have written.
 *
 * The library's trace state is global, so one replay exists at a time per process.
 */
#ifndef EMB_HOST_TRACE_REPLAY_H
#define EMB_HOST_TRACE_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/trace_format.h>

struct emb_replay;

/* Starts a replay. `info` is copied (its strings and build id too); its packet_size is
 * replaced by the library's packet size. NULL when another replay is open or out of
 * memory. */
struct emb_replay *emb_replay_new(const struct emb_tsf_info *info);

/* Adds a context; returns its index for emb_replay_event(), or -1 (out of memory, more
 * than EMB_TSF_MAX_CONTEXTS - 1). */
int emb_replay_context(struct emb_replay *r, uint16_t id, uint16_t kind, const char *name);

/* Records one event on context `ctx` at `ts` clock ticks: `id` from the stream's catalogue
 * and its payload (`len` bytes, at most CONFIG_EMB_TRACE_MAX_PAYLOAD, padded to 4 here).
 * Times on one context must not go back; an earlier one is raised to the last. Returns 0,
 * or -1 on a bad argument. */
int emb_replay_event(struct emb_replay *r, int ctx, uint64_t ts, uint16_t id,
                     const void *payload, uint32_t len);

/* Counts `n` events the source lost on `ctx` (the packets' events_discarded). */
void emb_replay_lost(struct emb_replay *r, int ctx, uint32_t n);

/* Events recorded so far. */
uint64_t emb_replay_events(const struct emb_replay *r);

/* Closes every packet and writes the stream (header with final counts, then the
 * packets) to `out`. Returns 0, or -1 on a write error (errno set). */
int emb_replay_write(struct emb_replay *r, FILE *out);

/* Has the stream's header carry the catalogue `text` (YAML, len bytes; copied) in its
 * catalog block (trace_catalog.h), for a catalogue readers may not know. 0, or -1 out of
 * memory. */
int emb_replay_carry_catalog(struct emb_replay *r, const char *text, size_t len);

void emb_replay_free(struct emb_replay *r);

#endif /* EMB_HOST_TRACE_REPLAY_H */
