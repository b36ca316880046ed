/* A model of the Cortex-M ITM for host tests of the ITM writer (ports/cortex-m/itm.c built
 * with EMB_ITM_MODEL): the registers the writer reads (ITM_TCR, ITM_TER, the stimulus
 * ports' FIFO-ready bit) and the SWO byte stream the ITM and the TPIU would put out for
 * its writes, as the ARMv7-M Architecture Reference Manual, appendix D4, defines it:
 * an instrumentation packet per write (header AAAAA0SS: port, then 1, 2 or 4 bytes, little
 * endian), synchronisation packets (five zero bytes, then 0x80) and local timestamps
 * (single-byte format 2, and format 1 with continuation bytes) in between. QEMU has no
 * ITM; this is the nearest real thing. Thread-safe: the writer's log and trace may run on
 * different threads, as an interrupt and a thread would share the ITM. */
#ifndef ITM_MODEL_H
#define ITM_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct itm_model_config {
    uint32_t tcr;              /* ITM_TCR (bit 0: ITMENA) */
    uint32_t ter;              /* ITM_TER: a bit per stimulus port */
    uint32_t busy_every;       /* every Nth FIFO poll finds it full; 0: never */
    uint32_t sync_every;       /* a synchronisation packet every N packets; 0: only first */
    uint32_t ts_every;         /* a local timestamp every N packets; 0: none */
    uint32_t off_after_writes; /* ITMENA goes off after N stimulus writes (0: never), */
    uint32_t off_reads;        /*   and on again after N register reads while off; */
    int off_port;              /*   counting writes to this port only (-1: every port), */
    uint32_t off_times;        /*   so many times (0: every off_after_writes writes) */
};

struct itm_model_counts {
    uint64_t packets[32][5];   /* instrumentation packets per port, by payload size 1, 2, 4 */
    uint64_t bytes[32];        /* payload bytes per port */
    uint64_t polls, busy;      /* FIFO-ready reads, and those that found it full */
    uint64_t violations;       /* writes after a poll said full, with no ready poll since */
    uint64_t ignored;          /* writes the ITM ignored: disabled, or the port was off */
    uint64_t ignored_port[32]; /* of those, the stimulus writes, per port: one the ITM
                                * ignored because it went off after the writer's poll had
                                * found it on is a loss the writer cannot see */
    uint64_t syncs, timestamps, switched_off;
};

void itm_model_init(const struct itm_model_config *config);
/* The SWO byte stream so far (valid until the next init). */
const uint8_t *itm_model_stream(size_t *len);
void itm_model_counts(struct itm_model_counts *out);

#endif /* ITM_MODEL_H */
