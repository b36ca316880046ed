/* A tiny message-passing layer for the services example: each service listens on an AF_UNIX
 * SOCK_SEQPACKET socket named after it in a run directory, serves one request at a time, and
 * calls others with a deadline. Every call records its outcome through the service tracing
 * SDK (include/emb/svc_trace.h): REQUEST as it starts, then exactly one of REPLY, TIMEOUT,
 * PEER_LOST, QUEUE_FULL or ABORTED. Tracing costs a service nothing unless its spawner granted
 * it the capability. */
#ifndef SVC_IPC_H
#define SVC_IPC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/svc_trace.h>

#define SVC_MSG_MAX 256

/* Reply status byte, after the 4-byte request id every reply starts with. */
enum svc_status {
    SVC_OK = 0,
    SVC_ERR_PEER_LOST = 1,
    SVC_ERR_TIMEOUT = 2,
    SVC_ERR_QUEUE_FULL = 3,
    SVC_ERR_BAD_REQUEST = 4,
    SVC_ERR_ABORTED = 5,
};

struct svc_peer {
    char name[16];
    char path[108];
    int fd; /* -1 until connected */
    uint32_t next_id;
};

/* Milliseconds of CLOCK_MONOTONIC: what deadlines in requests are written in (every process
 * on the host reads the same clock). */
uint64_t svc_now_ms(void);

/* The socket path of service `name` in `dir`. */
void svc_path(char *buf, size_t cap, const char *dir, const char *name);

/* This service: its name for tracing and logs, then its listening socket. */
void svc_init(const char *name);
int svc_listen(const char *dir, const char *name);

/* Logs a line on stderr (the authoritative copy) and sends a copy to the sink. */
void svc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void svc_peer_init(struct svc_peer *p, const char *dir, const char *name);

/* One call: sends `req` (whose 4-byte id field is at `id_at`, filled in here) and waits until
 * `deadline_ms` for the reply with that id. `*abandon` set by a signal handler abandons the
 * wait. The outcome is returned and recorded: REPLY (the reply is in `rep`), TIMEOUT,
 * PEER_LOST, QUEUE_FULL or ABORTED. */
enum emb_svc_kind svc_call(struct svc_peer *p, uint8_t *req, size_t len, size_t id_at,
                           uint8_t *rep, size_t cap, size_t *rep_len, uint64_t deadline_ms,
                           volatile sig_atomic_t *abandon);

/* Serves requests until SIGTERM or SIGINT: `handle` gets each request and the connection to
 * reply on. */
typedef void (*svc_handler)(int conn, const uint8_t *req, size_t len);
void svc_serve(int listener, svc_handler handle);

/* Sends a reply: the request's id, a status, then `len` bytes of data. */
void svc_reply(int conn, uint32_t id, uint8_t status, const void *data, size_t len);

/* Prints this service's emitter counters on stderr: what tracing cost it and what it lost. */
void svc_report_counters(void);

/* Reports, once each, what the tracing SDK wants said: a late resolution, a sink change. */
void svc_trace_housekeeping(void);

#endif /* SVC_IPC_H */
