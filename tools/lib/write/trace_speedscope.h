/* A decoded trace in speedscope's own file format (docs/perfetto.md, "speedscope"): one
 * evented profile per context track and per scheduler track, the slices of the Perfetto
 * model (trace_perfetto_model.h) as frames opened and closed on a stack, in nanoseconds. */
#ifndef EMB_WRITE_TRACE_SPEEDSCOPE_H
#define EMB_WRITE_TRACE_SPEEDSCOPE_H

#include <stdio.h>

#include "trace_decode.h"

/* 0, or -1 when writing failed or memory ran out. */
int emb_trace_write_speedscope(const struct emb_trace *t, FILE *out);

#endif /* EMB_WRITE_TRACE_SPEEDSCOPE_H */
