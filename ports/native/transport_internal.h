/* What the native port's transport files (transport.c, transport_server.c,
 * transport_memory.c) share: the largest stream header and frame, and the crash frame. */
#ifndef EMB_NATIVE_TRANSPORT_INTERNAL_H
#define EMB_NATIVE_TRANSPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <emb/frame.h>
#include <emb/status.h>
#include <emb/trace_format.h>

#define EMB__HEADER_MAX (EMB_TSF_HEADER_BYTES(EMB_TSF_MAX_CONTEXTS + 1) + EMB_TSF_EXT_MAX)
#define EMB__FRAME_MAX EMB_FRAME_WIRE_MAX(EMB__HEADER_MAX)

/* A crash record as one channel 2 frame, in memory the caller frees; the status says why
 * there is none (a record no frame can carry, or no memory). */
emb_status emb__native_crash_frame(const uint8_t *record, size_t len, uint8_t **frame, size_t *n);

#endif /* EMB_NATIVE_TRANSPORT_INTERNAL_H */
