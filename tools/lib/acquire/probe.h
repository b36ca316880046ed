/* A target behind a GDB server (QEMU's stub, OpenOCD, a probe's server) as a memory
 * source (memsrc.h), the way a debug probe sees it: its RAM, the writable sections of
 * its ELF, read with `m` packets while the target is halted; its read-only data from the
 * ELF itself. Reads and writes outside the image's RAM are refused, so a pointer read
 * from the target cannot send the host anywhere else.
 *
 * A halt lasts from emb_probe_halt() (or the connection, which halts an all-stop target)
 * to emb_probe_resume() or emb_probe_detach(); within one, what was read is kept in
 * blocks, so the descriptor reader's many small reads cost one round trip per block and
 * see one consistent image. Every halt is timed: how long the host held the target.
 */
#ifndef EMB_HOST_PROBE_H
#define EMB_HOST_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_image.h"
#include "memsrc.h"

struct emb_probe;

struct emb_probe_stats {
    uint64_t holds;            /* halts, the connection's included */
    double hold_ms_total, hold_ms_max, hold_ms_last;
    uint64_t round_trips;      /* memory packets exchanged */
    uint64_t bytes_read, bytes_written;
};

/* Connects to HOST:PORT (the target halts) and makes the RAM regions of `elf` its memory.
 * NULL with a message. The ELF stays the caller's. */
struct emb_probe *emb_probe_open(const char *host_port, struct emb_elf *elf, char *err, size_t errlen);

/* The memory source: valid until emb_probe_close(); reads succeed only while halted. */
struct emb_mem *emb_probe_mem(struct emb_probe *p);

/* --no-halt: lets the target run and reads and writes it while it runs from now on, for
 * servers that serve memory then (emb_gdb_access_running); halt and resume do nothing
 * then, and nothing is cached. 0 when the server served a first read while the target
 * ran; 1 when it stopped the target to serve it (QEMU's stub): the probe holds the
 * target halted then and goes on halting at each poll; -1 when the target was lost. */
int emb_probe_go_live(struct emb_probe *p);
bool emb_probe_live(const struct emb_probe *p);

int emb_probe_halt(struct emb_probe *p);
int emb_probe_resume(struct emb_probe *p);
/* Ends the session and lets the target run on. */
int emb_probe_detach(struct emb_probe *p);
const char *emb_probe_error(const struct emb_probe *p);
const struct emb_probe_stats *emb_probe_stats(const struct emb_probe *p);
void emb_probe_close(struct emb_probe *p);

#endif /* EMB_HOST_PROBE_H */
