/* A client of the GDB remote serial protocol (docs/formats/gdb-rsp.md): what the host
 * needs to read and write a target's memory through a GDB server (QEMU's gdbstub,
 * OpenOCD, a probe's server) while the target runs between polls.
 *
 * Over TCP with Nagle off (a poll is a few small round trips). Packets are framed
 * `$data#ck` with the modulo-256 checksum, acknowledged with `+` (or not at all once the
 * server agreed to QStartNoAckMode), binary data escaped with `}`, replies run-length
 * expanded. Every read has a deadline; a server that closes the connection, even in the
 * middle of a packet, or answers with a bad checksum, more bytes than asked, or garbage,
 * gives an error, never a crash. All-stop servers only: memory is read while the target
 * is halted, so emb_gdb_halt() comes first and emb_gdb_resume() after.
 */
#ifndef EMB_HOST_GDB_RSP_H
#define EMB_HOST_GDB_RSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMB_GDB_MAX_PACKET 65536u /* reply bytes accepted, whatever the server offers */

struct emb_gdb_stats {
    uint64_t packets_sent, packets_received;
    uint64_t bytes_read, bytes_written;   /* target memory */
    uint64_t retransmits;                 /* `-` received or sent */
    uint64_t halts;
    uint64_t halt_ns_total, halt_ns_max;  /* from the interrupt to the resume */
};

struct emb_gdb;

/* Connects to HOST:PORT, agrees on packet size and acknowledgement mode, and asks why
 * the target stopped (connecting halts an all-stop target). NULL with a message, which
 * names HOST:PORT. */
struct emb_gdb *emb_gdb_connect(const char *host_port, int timeout_ms, char *err, size_t errlen);

/* The same over a descriptor already connected (owned from now on): tests, fuzzing. */
struct emb_gdb *emb_gdb_open_fd(int fd, int timeout_ms, char *err, size_t errlen);

/* Stops the target (an interrupt byte, then its stop reply). No-op when halted. */
int emb_gdb_halt(struct emb_gdb *g);
/* Lets it run (`c`); the stop reply comes at the next halt. */
int emb_gdb_resume(struct emb_gdb *g);
bool emb_gdb_running(const struct emb_gdb *g);

/* Reads `len` bytes at `addr` in blocks as large as the server allows (`m`). The target
 * must be halted. 0, or -1 with emb_gdb_error(). */
int emb_gdb_read(struct emb_gdb *g, uint64_t addr, void *buf, size_t len);
/* Writes `len` bytes (`X`, binary; `M`, hex, when the server lacks `X`). Halted target. */
int emb_gdb_write(struct emb_gdb *g, uint64_t addr, const void *buf, size_t len);

/* With `on`, reads and writes are sent while the target runs, never an interrupt before
 * them: for servers that serve memory while the core runs (OpenOCD, J-Link's GDB server
 * and pyOCD on Cortex-M, through the debug access port; docs/live.md). A server that
 * stops the target to answer instead (QEMU's stub halts on any byte) sends a stop reply
 * in place of the memory: the access fails, the target is halted from then on, and
 * emb_gdb_stopped_to_read() says so. */
void emb_gdb_access_running(struct emb_gdb *g, bool on);
bool emb_gdb_stopped_to_read(const struct emb_gdb *g);

/* Detaches and lets the target run on (`D;1`, then `D` for servers without processes). */
int emb_gdb_detach(struct emb_gdb *g);

/* Sends any packet and returns its reply (NUL-terminated, in the client's buffer until the
 * next call). For commands this interface lacks. NULL on error. */
const char *emb_gdb_command(struct emb_gdb *g, const char *packet, size_t *reply_len);

const char *emb_gdb_error(const struct emb_gdb *g);
const struct emb_gdb_stats *emb_gdb_stats(const struct emb_gdb *g);
/* The largest memory block one `m` asks for. */
size_t emb_gdb_block(const struct emb_gdb *g);
void emb_gdb_close(struct emb_gdb *g);

#endif /* EMB_HOST_GDB_RSP_H */
