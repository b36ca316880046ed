/* A running QEMU guest's memory, read and written without stopping it (docs/live.md):
 * through QEMU's machine protocol, QMP (docs/interop/qmp-spec in QEMU's sources: a
 * greeting, `qmp_capabilities`, then one JSON object per line: {"return": ...},
 * {"error": {"class", "desc"}}, or an asynchronous {"event": ...} skipped here), and,
 * when QEMU was started with `-qtest SOCKET` beside its CPU, its test protocol (one text
 * line per command, "OK ..." or "FAIL ..."), which is the only way QEMU offers to write
 * guest memory while the guest runs, and the fastest way to read it.
 *
 * Reads take the method measured fastest for their size (docs/benchmarks.md, "Reading a
 * running QEMU"): qtest `b64read` when there is a qtest socket; else HMP `xp` up to
 * EMB_QMP_XP_MAX bytes and `pmemsave` into a private file above. Neither stops the vCPU:
 * QEMU serves both from its main loop between translation blocks, so what a read returns
 * can change while it is read, exactly as a debug probe's access port read of a running
 * Cortex-M; the ring readers are built for that (docs/formats/trace.md, "Read").
 *
 * Every reply is bounded (EMB_QMP_MAX_LINE) and has a deadline; a reply that is not what
 * its command returns (a short dump, an `xp` line for another address, bad base64) is an
 * error, never a short read believed. */
#ifndef EMB_HOST_QMP_H
#define EMB_HOST_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMB_QMP_MAX_LINE (4u << 20) /* bytes of one reply line accepted */
#define EMB_QMP_XP_MAX 1024u        /* larger reads go through pmemsave */

enum emb_qmp_method {
    EMB_QMP_AUTO,     /* the fastest for the size (above) */
    EMB_QMP_XP,       /* human-monitor-command "xp /Nbx ADDR" */
    EMB_QMP_PMEMSAVE, /* pmemsave into a private file, read back */
    EMB_QMP_MEMSAVE,  /* memsave (the CPU's virtual addresses; the same on an MPU-only core) */
    EMB_QMP_QTEST,    /* qtest b64read */
};

struct emb_qmp_stats {
    uint64_t requests;              /* commands sent, QMP and qtest */
    uint64_t reads, writes;
    uint64_t bytes_read, bytes_written;
    uint64_t ns_total, ns_max;      /* per read or write, from the request to its reply */
    uint64_t events;                /* asynchronous QMP events skipped */
};

struct emb_qmp;

/* Connects to QMP at `qmp` (a Unix socket path, or HOST:PORT), reads its greeting and
 * leaves capabilities negotiation; with `qtest` (a path or HOST:PORT, or NULL), also to
 * QEMU's qtest socket. NULL with a message that names what could not be reached. */
struct emb_qmp *emb_qmp_connect(const char *qmp, const char *qtest, int timeout_ms, char *err,
                                size_t errlen);

/* Whether the guest's vCPUs run (`query-status`). 0, or -1 with emb_qmp_error(). */
int emb_qmp_running(struct emb_qmp *q, bool *running);

/* Reads `len` bytes of guest physical memory at `addr`. 0, or -1. */
int emb_qmp_read(struct emb_qmp *q, uint64_t addr, void *buf, size_t len);
/* Writes them (qtest only: QMP has no command that writes guest memory). 0, or -1. */
int emb_qmp_write(struct emb_qmp *q, uint64_t addr, const void *buf, size_t len);
bool emb_qmp_can_write(const struct emb_qmp *q);

/* Forces one read method (the benchmark compares them). -1 when it is qtest and there
 * is no qtest socket. */
int emb_qmp_set_method(struct emb_qmp *q, enum emb_qmp_method m);

/* Sends any QMP command (a JSON object's text) and returns its "return" value as JSON
 * text (the client's buffer, until the next call), or NULL. */
const char *emb_qmp_execute(struct emb_qmp *q, const char *command_json);

/* How many asynchronous events of this name ("STOP", "RESUME", ...) arrived so far, read
 * while waiting for replies. */
uint64_t emb_qmp_event_count(const struct emb_qmp *q, const char *name);

/* The guest's memory as a memory source (memsrc.h) over `q`: the ELF's RAM regions the
 * reads may reach, written when `q` can write. NULL with a message in `err`. */
struct emb_elf;
struct emb_mem;
struct emb_mem *emb_qmp_mem_open(struct emb_qmp *q, struct emb_elf *elf, const char *name, char *err,
                                 size_t errlen);

const char *emb_qmp_error(const struct emb_qmp *q);
const struct emb_qmp_stats *emb_qmp_stats(const struct emb_qmp *q);
void emb_qmp_close(struct emb_qmp *q);

#endif /* EMB_HOST_QMP_H */
