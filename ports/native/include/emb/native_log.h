/* Deferred logging on the native port: a log ring per thread (a signal handler is the
 * nested producer) and a worker thread that drains them into log frames on a file, a
 * pipe or a TCP socket (docs/formats/log.md). `emb log --elf PROGRAM STREAM` decodes it.
 *
 * Include with _GNU_SOURCE (or _POSIX_C_SOURCE >= 200809L) defined.
 */
#ifndef EMB_NATIVE_LOG_H
#define EMB_NATIVE_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include <emb/log.h>
#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emb_native_log_config {
    uint32_t ring_bytes;      /* per thread, a power of two; 0: 16384 */
    uint32_t max_contexts;    /* rings available to threads; 0: 32 */
    const char *path;         /* the stream goes to this file (created, truncated), */
    int fd;                   /* or to this descriptor (a pipe, a socket); -1 if unused, */
    bool tcp;                 /* or to one TCP client at a time of a listening socket, */
    uint16_t tcp_port;        /*   on 127.0.0.1:tcp_port (0: any free port) */
    uint32_t tcp_wait_ms;     /*   start() waits this long for the first client, */
    const struct emb_log_output *output; /* or to this frame writer (the retained ring:
                                 emb_native_retained_log_output(), emb/native_link.h) */
    uint32_t period_us;       /* how often the worker drains; 0: 1000 */
    uint32_t hello_period_ms; /* a hello frame this often, for readers that join; 0: 1000 */
    bool text;                /* the program logs with CONFIG_EMB_LOG_TEXT: plain text, no
                                 frames, no worker */
};

/* Starts logging: rings, the output, its hello frame, and the worker. The clock is the
 * trace clock: call emb_native_init() first. */
emb_status emb_native_log_start(const struct emb_native_log_config *config);

/* Stops the worker, drains every ring whose thread has exited or is the caller (wait
 * for other logging threads first), writes each context's stats frame, closes the
 * output. */
void emb_native_log_stop(void);

/* Drains what can be drained now, from any thread (the worker does this periodically). */
void emb_native_log_flush(void);

/* The TCP port the stream listens on (after start with tcp), else 0. */
uint16_t emb_native_log_tcp_port(void);

struct emb_native_log_stats {
    uint32_t contexts;         /* rings claimed */
    uint64_t dropped;          /* records dropped, every ring */
    uint32_t lost_no_ring;     /* records of threads that found no ring */
    uint64_t bytes;            /* ring bytes written out */
    uint64_t discarded;        /* ring bytes drained while no TCP client listened */
    uint32_t write_errors;     /* failed writes to the output */
    uint32_t clients;          /* TCP readers accepted so far */
};
void emb_native_log_stats_get(struct emb_native_log_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* EMB_NATIVE_LOG_H */
