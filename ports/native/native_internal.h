/* What native.c shares with the port's other files (wrappers, fault path, stream writer). */
#ifndef EMB_NATIVE_INTERNAL_H
#define EMB_NATIVE_INTERNAL_H

#include <emb/descriptor.h>
#include <emb/native.h>
#include <emb/trace_format.h>

#include <pthread.h>
#include <stdbool.h>

/* A context: its ring, its owner, and what tools see of it (registered through
 * emb_debug_registry). */
struct emb__context {
    struct emb_trace_ring ring;
    pthread_t owner;
    struct emb_context_info info;
};

/* The calling thread's context, or NULL when it has none (never claims one: safe in a
 * signal handler). */
struct emb__context *emb__native_self(void);

/* Contexts handed out so far, and context i of them. */
uint32_t emb__native_context_count(void);
struct emb__context *emb__native_context(uint32_t index);

/* The executable's load bias (runtime address - ELF address) and the runtime range of
 * its executable segments, found at start-up. */
uintptr_t emb__native_load_bias(void);
void emb__native_text_range(uintptr_t *low, uintptr_t *high);
void emb__native_image_scan(void);

/* The build id found at start (length, bytes). */
const uint8_t *emb__native_build_id(uint32_t *len);

/* Records the calling thread's stack (lowest address, size, bytes painted from the
 * lowest address) in its context. */
void emb__native_set_stack(uintptr_t low, uint32_t size, uint32_t painted);

/* A thread created through the wrappers starts and ends: stack bounds and painting,
 * the alternate signal stack of the fault handler. */
void emb__native_thread_begin(void *(*entry)(void *));
void emb__native_thread_end(void);

/* Sets up the calling thread's alternate signal stack if the fault handler is installed
 * (fault.c). */
void emb__native_fault_thread_begin(void);
void emb__native_fault_thread_end(void);

/* Thread statistics of the calling thread's context, or NULL. */
emb_stats_thread_t *emb__native_my_stats(void);

/* The object registry (wrappers.c). */
struct emb_object_info *emb__native_object_new(uint16_t type, uint32_t handle, const char *name);
void emb__native_objects_reset(void);

/* The TCP record server's handling of bytes its client sent (transport_server.c), under the
 * server's lock as its thread calls it: the fuzz target's way in. */
struct emb_native_server;
void emb__native_server_client_input(struct emb_native_server *s, const uint8_t *p, size_t n);

/* Writes all len bytes to fd (retrying short writes and EINTR); 0, or -1 with errno.
 * A library must never kill its host: SIGPIPE is blocked around the write, and one the
 * write raised (a reader that went away, EPIPE) is consumed before the mask is restored,
 * so the caller sees EPIPE instead of the process dying. One pending before the call
 * (the application's own) is left pending. Every write of the port to a descriptor that
 * may be a pipe goes through here; sockets use send() with MSG_NOSIGNAL. */
int emb__native_write_all(int fd, const void *buf, size_t len);

/* The port's state (native.c), which the stream writer (native_stream.c) shares. */
struct emb__native_state {
    struct emb_native_config config;
    uint64_t clock_hz;
    int64_t clock_offset_ns;
    uint8_t build_id[EMB_TSF_BUILD_ID_MAX];
    uint32_t build_id_len;
    struct emb__context *contexts; /* config.max_contexts entries */
    uint8_t *ring_memory;
    size_t ring_memory_size;
    uint32_t claimed;              /* contexts handed out, may exceed max_contexts */
    pthread_key_t exit_key;
    /* streaming */
    int sink_fd;
    bool sink_owned;
    bool sink_seekable;
    size_t header_size;
    pthread_t worker;
    volatile int worker_stop;
    bool worker_running;
    uint64_t stream_packets, stream_bytes;
    uint32_t stream_errors;
    bool initialised;
    /* identity block */
    char firmware[EMB_TSF_FIRMWARE_MAX];
    char flags[EMB_TSF_CONFIG_MAX];
    uint64_t session_id;
};
extern struct emb__native_state emb__native;

/* Contexts claimed so far, at most config.max_contexts (those whose slots exist). */
uint32_t emb__native_contexts_ready(void);

/* Context names are read while their threads may be naming them (a repeated stream
 * header, emb_native_stream_header): written and read a byte at a time with atomics,
 * which a signal handler may do too. A name read mid-change is one header's blemish. */
#define EMB__NAME_SIZE sizeof(((struct emb_trace_ring *)0)->name)
void emb__native_get_name(char *dst, const char *src);

/* Flushes rings whose owner can no longer record into them: the caller's own, and those
 * of threads that have exited. */
void emb__native_flush_quiescent(void);

/* Wall-clock time at counter value 0 (ns), measured now. */
int64_t emb__native_clock_offset(uint64_t hz);

/* The streaming mode's sink and worker (native_stream.c): started by emb_native_init,
 * stopped (the header completed, the sink closed) by emb_native_shutdown. */
emb_status emb__native_stream_start(void);
void emb__native_stream_stop(void);

#endif /* EMB_NATIVE_INTERNAL_H */
