/* The probes of bench/lttng_tp.h, linked into the benchmark itself. */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "lttng_tp.h"
