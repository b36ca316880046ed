/* Byte-stream transports of the native port (SPEC-015 §7, docs/formats/frame.md): the
 * streaming worker's packets leave the process as frames (channel 1: the stream header,
 * repeated, and each packet) over
 *
 *   - a descriptor: a serial line (a pseudo-terminal stands in for the UART), a pipe, a
 *     file, a connected socket (emb_native_framed_*); the deferred log's frames
 *     (channel 0) may share it (emb_native_framed_log_output), one whole frame at a time;
 *   - a TCP record server: one client at a time gets a fresh header, then the packets as
 *     they complete, the header again every `header_period_ms` with the clock offset
 *     measured anew, and may send shell commands (channel 3) back (emb_native_server_*);
 *   - the memory channel: frames into an up ring a host reads with `emb capture --pid`
 *     (emb_native_memchan_*);
 *   - the retained ring: frames kept in a file mapped MAP_SHARED, which outlives a killed
 *     process the way retained RAM outlives a reset, read on the next start
 *     (emb_native_retained_*, emb/retained.h).
 *
 * A sink never blocks the producers: packets wait in the rings, and what the transport
 * cannot take is dropped and shows as a packet_seq_num gap to the reader.
 *
 * Include with _GNU_SOURCE (or _POSIX_C_SOURCE >= 200809L) defined.
 */
#ifndef EMB_NATIVE_LINK_H
#define EMB_NATIVE_LINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <emb/retained.h>
#include <emb/status.h>

/* Where the streaming worker hands its output (emb_native_config.stream_sink). */
struct emb_native_sink {
    /* The stream starts: a fresh stream header. Nonzero fails emb_native_init(). */
    int (*start)(void *arg, const uint8_t *header, size_t len);
    /* A completed packet: 0 when it went out, nonzero when it was dropped. */
    int (*packet)(void *arg, const uint8_t *packet, size_t len);
    /* The stream ends, after the last drain. */
    void (*stop)(void *arg);
    void *arg;
};

struct emb_native_link_stats {
    uint64_t frames;       /* frames written */
    uint64_t bytes;        /* bytes written */
    uint64_t headers;      /* header frames (the first and the repeats) */
    uint64_t dropped;      /* packets not sent */
    uint64_t clients;      /* server: connections accepted */
    uint64_t commands;     /* server: shell commands received and answered */
    uint64_t garbage;      /* server: bytes from clients that were no command frame */
    uint64_t stalls;       /* server: clients dropped for not reading */
    uint64_t refused;      /* server: clients closed unserved (another uid, no or a bad token) */
    uint64_t log_frames;   /* framed: log frames written */
    uint64_t log_dropped;  /* framed: log frames not written (a write failed) */
    uint64_t crash_frames; /* crash record frames (channel 2) written or queued */
};

/* ---- Frames to a descriptor ---- */

struct emb_native_framed_log;

struct emb_native_framed {
    struct emb_native_sink sink;
    int fd;
    uint32_t header_every;  /* packets between header repeats; 0: only at the start */
    uint32_t since_header;
    struct emb_native_link_stats stats;  /* read with emb_native_framed_stats() */
    pthread_mutex_t lock;   /* one whole frame at a time on fd, and the stats */
    struct emb_native_framed_log *log;   /* the log's frame gatherer, when asked for */
    uint8_t buf[];          /* sized by emb_native_framed_new */
};

/* A sink writing frames to `fd` (not closed by it), the header repeated every
 * `header_every` packets. Writes block the streaming worker, never the producers. */
struct emb_native_framed *emb_native_framed_new(int fd, uint32_t header_every);
/* Call after emb_native_log_stop() and emb_native_shutdown(). */
void emb_native_framed_free(struct emb_native_framed *f);

/* A frame writer for the deferred log (emb_native_log_config.output) on the same
 * descriptor: log frames (channel 0) go out between the trace's frames (channel 1), so
 * a product with one UART sends both. Bytes are gathered up to each frame's delimiter and
 * the whole frame is written under the link's lock: frames never interleave mid-frame.
 * `emb capture --serial/--file` splits them again (docs/capture-sources.md). NULL when out
 * of memory; the same writer on a second call. */
struct emb_log_output;
const struct emb_log_output *emb_native_framed_log_output(struct emb_native_framed *f);

/* Writes a crash record (the one emb_crash_record_get() found at start) to the link as
 * one channel 2 frame, whole, between the other frames. EMB_OK once written (the caller
 * may then emb_crash_record_clear()), EMB_E_INVALID for an empty or oversized record,
 * EMB_E_IO when the write failed. */
emb_status emb_native_framed_send_crash(struct emb_native_framed *f, const uint8_t *record,
                                        size_t len);

/* A consistent copy of the link's counts. */
void emb_native_framed_stats(struct emb_native_framed *f, struct emb_native_link_stats *out);

/* Opens a serial line (or a pseudo-terminal's slave) raw, 8N1, at `baud` (a standard
 * rate); returns the descriptor or -1 with errno. */
int emb_native_serial_open(const char *path, uint32_t baud);

/* ---- The TCP record server ---- */

/* Who may connect (docs/security.md). By default the server listens on an AF_UNIX socket
 * only its owner can use: in a directory of the owner's with mode 0700 (checked; the
 * default one, $XDG_RUNTIME_DIR or /tmp/emb-UID, is created so), and every client's uid
 * is checked (SO_PEERCRED): another user's connection is closed unserved. With `tcp`, it
 * listens on host:port instead, and a client must first present the shared secret
 * (`EMB-TOKEN <token>\n`, docs/formats/frame.md) before anything is served or obeyed. */
struct emb_native_server_config {
    const char *unix_path;      /* the socket's path; NULL: $XDG_RUNTIME_DIR/emb-record-PID.sock,
                                 * else /tmp/emb-UID/record-PID.sock */
    bool tcp;                   /* listen on TCP host:port instead (needs a token) */
    const char *token;          /* tcp: the secret, 16 to 128 bytes; NULL: $EMB_SERVER_TOKEN */
    const char *host;           /* tcp: address to listen on; NULL: 127.0.0.1 */
    uint16_t port;              /* tcp: 0: any free port (see emb_native_server_port) */
    uint32_t header_period_ms;  /* the header again, with the clock offset; 0: 1000 */
    uint32_t queue_bytes;       /* what may wait for a slow client; 0: 4 MB */
    uint32_t stall_ms;          /* a client that reads nothing this long is dropped; 0: 5000 */
};

struct emb_native_server;

/* Listens and starts the server thread; pass emb_native_server_sink() as the streaming
 * sink of emb_native_init(). NULL with errno on failure. */
struct emb_native_server *emb_native_server_start(const struct emb_native_server_config *config);
const struct emb_native_sink *emb_native_server_sink(struct emb_native_server *s);
uint16_t emb_native_server_port(const struct emb_native_server *s);
/* The AF_UNIX socket's path ("" for a TCP server). */
const char *emb_native_server_path(const struct emb_native_server *s);
/* Keeps a crash record (copied) that every client gets as one channel 2 frame after its
 * first header, and queues it for the client connected now: a record found at start
 * reaches whoever connects later. EMB_E_INVALID for an empty or oversized record. */
emb_status emb_native_server_send_crash(struct emb_native_server *s, const uint8_t *record,
                                        size_t len);
void emb_native_server_stats(struct emb_native_server *s, struct emb_native_link_stats *out);
/* Closes the client and the listening socket; call after emb_native_shutdown(). */
void emb_native_server_stop(struct emb_native_server *s);

/* ---- The memory channel ---- */

/* Initialises the memory channel (emb/memchan.h) with an up ring of `up_bytes` for frames
 * and a down ring of `down_bytes` for shell commands, and returns a sink that sends the
 * header (repeated every `header_every` packets) and the packets there, answering shell
 * commands whenever it sends. A full ring drops the frame. NULL when out of memory. */
const struct emb_native_sink *emb_native_memchan_sink(uint32_t up_bytes, uint32_t down_bytes,
                                                      uint32_t header_every);

/* ---- The retained ring ---- */

/* Maps `bytes` of the file `path` MAP_SHARED (created if missing; a file of another size
 * is resized and starts empty) and attaches the retained ring there, keeping the frames a
 * previous run left (what was found goes to `info`, which may be NULL). NULL with errno. */
struct emb_retained_ring *emb_native_retained_map(const char *path, size_t bytes,
                                                  struct emb_retained_info *info);
void emb_native_retained_unmap(struct emb_retained_ring *ring);

/* One frame into the ring, whole, under the ring's lock: the writers of one process (the
 * streaming worker, a log worker, the application) never interleave. */
emb_status emb_native_retained_put_frame(struct emb_retained_ring *ring, uint8_t channel,
                                         const void *payload, size_t len);

/* A frame writer for the deferred log (emb_native_log_config.output) that keeps the log in
 * the ring: bytes are gathered up to each frame's delimiter and the whole frame goes in
 * under the ring's lock, so log and trace frames never interleave. One log per process. */
struct emb_log_output;
const struct emb_log_output *emb_native_retained_log_output(struct emb_retained_ring *ring);

/* A streaming sink keeping the trace in the ring: the header (repeated every
 * `header_every` packets, so a reader of a wrapped ring finds one) and the packets, as
 * channel 1 frames; the oldest frames make room. */
const struct emb_native_sink *emb_native_retained_sink(struct emb_retained_ring *ring,
                                                       uint32_t header_every);

#endif /* EMB_NATIVE_LINK_H */
