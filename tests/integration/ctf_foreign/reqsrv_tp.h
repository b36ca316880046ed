/* The tracepoint provider of the LTTng test program (lttng_reqsrv.c): a request server's
 * events, declared with LTTng-UST's own macros (lttng/tracepoint.h, 2.13). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER reqsrv
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./reqsrv_tp.h"

#if !defined(REQSRV_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define REQSRV_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(reqsrv, request_begin,
    LTTNG_UST_TP_ARGS(int, id, const char *, path),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, id, id)
        lttng_ust_field_string(path, path)))

LTTNG_UST_TRACEPOINT_EVENT(reqsrv, query,
    LTTNG_UST_TP_ARGS(int, id, unsigned int, rows, unsigned int, latency_us),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, id, id)
        lttng_ust_field_integer(unsigned int, rows, rows)
        lttng_ust_field_integer(unsigned int, latency_us, latency_us)))

LTTNG_UST_TRACEPOINT_EVENT(reqsrv, cache_miss,
    LTTNG_UST_TP_ARGS(int, id, uint64_t, key),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, id, id)
        lttng_ust_field_integer_hex(uint64_t, key, key)))

LTTNG_UST_TRACEPOINT_EVENT(reqsrv, request_end,
    LTTNG_UST_TP_ARGS(int, id, int, status),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, id, id)
        lttng_ust_field_integer(int, status, status)))

/* Never enabled by name: a run that enables `reqsrv:*` gets a floating-point field, which
 * the CTF import refuses. */
LTTNG_UST_TRACEPOINT_EVENT(reqsrv, cpu_load,
    LTTNG_UST_TP_ARGS(double, load),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_float(double, load, load)))

#endif /* REQSRV_TP_H */

#include <lttng/tracepoint-event.h>
