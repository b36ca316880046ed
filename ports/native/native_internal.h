/* What native.c shares with the port's other files (wrappers, fault path). */
#ifndef EMB_NATIVE_INTERNAL_H
#define EMB_NATIVE_INTERNAL_H

#include <emb/descriptor.h>
#include <emb/native.h>

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

#endif /* EMB_NATIVE_INTERNAL_H */
