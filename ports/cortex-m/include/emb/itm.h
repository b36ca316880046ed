/* Log and trace over the ITM and the Serial Wire Output (SPEC-015 §7, docs/formats/swo.md).
 *
 * The log's frames go to stimulus port 0, the trace stream (its header, then whole
 * packets) to stimulus port 1; the ITM wraps every write in an instrumentation packet and
 * the TPIU clocks them out of the SWO pin, where a probe records them for
 * `emb capture --swo`. The board sets up the TPIU (protocol, SWO prescaler) and the
 * debugger or the board enables the ITM and the ports (DEMCR.TRCENA, ITM_TCR.ITMENA,
 * ITM_TER bits 0 and 1); this writer only checks that they are:
 *
 *     emb_log_set_output(emb_itm_log_output());          log frames to port 0
 *
 *     static uint8_t hdr[EMB_TSF_HEADER_BYTES(1)];
 *     static struct emb_trace_link link;                 trace packets to port 1
 *     emb_itm_trace_link_init(&link, hdr, sizeof hdr, &info, contexts, 1, 16);
 *     ... emb_trace_link_drain(&link, ring);             (a worker or the idle loop)
 *
 * A write first checks ITM_TCR.ITMENA and the port's ITM_TER bit: when either is off (no
 * probe listening, or the ITM never enabled) the frame or packet is dropped and counted,
 * never waited for. Otherwise each word waits for the port's FIFO-ready bit and goes out
 * as a 32-bit write (a 4-byte packet); a tail takes a 16-bit and an 8-bit write. A frame
 * or packet is sent whole or dropped whole, unless the ITM is switched off while it is on
 * its way: the rest is dropped then, and a log frame so cut is closed with a delimiter
 * before the next, so the host's frame decoder loses only that frame.
 *
 * One writer per port at a time: the log's output lock (emb_log_output_acquire()) gives
 * port 0 that, and one drainer of the trace rings gives port 1 that.
 *
 * ARMv7-M, ARMv7E-M and ARMv8-M Mainline (Cortex-M3, M4, M7, M33, M55...); ARMv6-M and
 * ARMv8-M Baseline have no ITM. CONFIG_EMB_ITM 0 compiles the writer out (the calls
 * below then drop everything, at no cost).
 *
 * The registers are reached through EMB_ITM_* accessors (ports/cortex-m/itm_regs.h), which
 * a host build with EMB_ITM_MODEL defined sends to a model of the ITM instead of the
 * hardware: tests/integration/itm_e2e.c runs this writer against it, because QEMU does not
 * model the ITM.
 */
#ifndef EMB_ITM_H
#define EMB_ITM_H

#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>
#include <emb/trace_format.h>
#include <emb/trace_link.h>

/* The ITM writer (log on stimulus port 0, trace on port 1). 0 compiles it out. */
#ifndef CONFIG_EMB_ITM
#define CONFIG_EMB_ITM 1
#endif

#if CONFIG_EMB_ITM && !defined(EMB_ITM_MODEL) &&                                              \
    (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__))
#error "ARMv6-M and ARMv8-M Baseline have no ITM: build with CONFIG_EMB_ITM=0 (log and trace over a UART or the memory channel instead)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define EMB_ITM_PORT_LOG 0u
#define EMB_ITM_PORT_TRACE 1u
#define EMB_ITM_PORTS 2u /* ports with counters below */

struct emb_itm_port_stats {
    uint32_t writes;   /* frames (log) or headers and packets (trace) sent whole */
    uint32_t bytes;    /* bytes that went into the stimulus port */
    uint32_t dropped;  /* frames or packets dropped: the ITM or the port was off */
    uint32_t cut;      /* of those, cut short: the ITM was switched off on the way */
    uint32_t waits;    /* FIFO-ready polls that found the FIFO full */
};

struct emb_log_output;

#if CONFIG_EMB_ITM

/* True when the ITM is enabled (ITM_TCR.ITMENA) and so is stimulus port `port` (ITM_TER). */
int emb_itm_port_enabled(uint32_t port);

/* Sends `len` bytes to stimulus port `port` (0..31): EMB_OK when they all went, EMB_E_STATE
 * (nothing sent) when the ITM or the port is off, EMB_E_IO when it went off on the way. */
emb_status emb_itm_write(uint32_t port, const void *data, size_t len);

/* The deferred log's output on port 0 (emb_log_set_output(), or a worker's
 * emb_log_drain()): log frames, each sent whole or dropped whole and counted. */
const struct emb_log_output *emb_itm_log_output(void);

/* An emb_trace_link send function for port 1: the header or packet without a frame (the
 * ITM's packets are the framing; `channel` is ignored). */
emb_status emb_itm_trace_send(void *arg, uint8_t channel, const void *payload, size_t len);

/* emb_trace_link_init() with emb_itm_trace_send: the trace stream header (into `buf`),
 * then each packet, on port 1; the header again every `header_every` packets, so a probe
 * attached late finds one. */
emb_status emb_itm_trace_link_init(struct emb_trace_link *l, uint8_t *buf, size_t cap,
                                   const struct emb_tsf_info *info,
                                   const struct emb_tsf_context *contexts, uint16_t count,
                                   uint32_t header_every);

/* The counters of port `port` (0 or 1); zeros for another port. */
void emb_itm_stats(uint32_t port, struct emb_itm_port_stats *out);

#else /* CONFIG_EMB_ITM */

static inline int emb_itm_port_enabled(uint32_t port) { (void)port; return 0; }
static inline emb_status emb_itm_write(uint32_t port, const void *data, size_t len)
{
    (void)port; (void)data; (void)len;
    return EMB_E_STATE;
}
static inline const struct emb_log_output *emb_itm_log_output(void) { return NULL; }
static inline emb_status emb_itm_trace_send(void *arg, uint8_t channel, const void *payload, size_t len)
{
    (void)arg; (void)channel; (void)payload; (void)len;
    return EMB_E_STATE;
}
static inline emb_status emb_itm_trace_link_init(struct emb_trace_link *l, uint8_t *buf, size_t cap,
                                                 const struct emb_tsf_info *info,
                                                 const struct emb_tsf_context *contexts,
                                                 uint16_t count, uint32_t header_every)
{
    (void)l; (void)buf; (void)cap; (void)info; (void)contexts; (void)count; (void)header_every;
    return EMB_E_STATE;
}
static inline void emb_itm_stats(uint32_t port, struct emb_itm_port_stats *out)
{
    (void)port;
    *out = (struct emb_itm_port_stats){0, 0, 0, 0, 0};
}

#endif /* CONFIG_EMB_ITM */

#ifdef __cplusplus
}
#endif

#endif /* EMB_ITM_H */
