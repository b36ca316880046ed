/* Log frames to ITM stimulus port 0, the trace stream to port 1 (emb/itm.h). */
#include <emb/itm.h>

#if CONFIG_EMB_ITM

#include <emb/frame.h>
#include <emb/log.h>
#include <emb/wire.h>

#include "itm_regs.h"

static struct emb_itm_port_stats emb__itm_stats[EMB_ITM_PORTS];

static struct emb_itm_port_stats *emb__stats(uint32_t port)
{
    static struct emb_itm_port_stats other; /* counts of ports nobody reads */
    return port < EMB_ITM_PORTS ? &emb__itm_stats[port] : &other;
}

int emb_itm_port_enabled(uint32_t port)
{
    return (EMB_ITM_READ32(EMB_ITM_TCR) & EMB_ITM_TCR_ITMENA) != 0u &&
           (EMB_ITM_READ32(EMB_ITM_TER) & (1u << (port & 31u))) != 0u;
}

/* Waits until the port's FIFO can take a write; 0 when the ITM or the port went off
 * meanwhile (a disabled ITM never reports ready: waiting would hang). */
static int emb__ready(uint32_t port, struct emb_itm_port_stats *st)
{
    while ((EMB_ITM_READ32(EMB_ITM_STIM(port)) & EMB_ITM_STIM_FIFOREADY) == 0u) {
        st->waits++;
        if (!emb_itm_port_enabled(port))
            return 0;
    }
    return 1;
}

/* Writes words while it can, then a halfword and a byte for the tail. Returns the bytes
 * that went out: all of them unless the ITM went off on the way. */
static size_t emb__put(uint32_t port, const uint8_t *p, size_t len, struct emb_itm_port_stats *st)
{
    const uint32_t stim = EMB_ITM_STIM(port);
    size_t i = 0;
    for (; len - i >= 4u; i += 4u) {
        if (!emb__ready(port, st))
            return i;
        EMB_ITM_WRITE32(stim, emb_get_le32(p + i));
    }
    if (len - i >= 2u) {
        if (!emb__ready(port, st))
            return i;
        EMB_ITM_WRITE16(stim, emb_get_le16(p + i));
        i += 2u;
    }
    if (len - i == 1u) {
        if (!emb__ready(port, st))
            return i;
        EMB_ITM_WRITE8(stim, p[i]);
        i++;
    }
    return i;
}

emb_status emb_itm_write(uint32_t port, const void *data, size_t len)
{
    struct emb_itm_port_stats *st = emb__stats(port);
    if (port > 31u)
        return EMB_E_INVALID;
    if (!emb_itm_port_enabled(port)) {
        st->dropped++;
        return EMB_E_STATE;
    }
    size_t sent = emb__put(port, data, len, st);
    st->bytes += (uint32_t)sent;
    if (sent < len) {
        st->dropped++;
        if (sent > 0u)
            st->cut++;
        return EMB_E_IO;
    }
    st->writes++;
    return EMB_OK;
}

/* ---- Log frames on port 0 ---- */

/* The output receives each frame in pieces (COBS blocks); the decision to send or drop is
 * taken once, at the frame's first byte, so a frame goes whole or not at all. */
static struct {
    struct emb_log_output out;
    uint8_t in_frame;  /* the current frame's first byte has been seen */
    uint8_t sent;      /* some of the current frame went out */
    uint8_t dropping;  /* the rest of the current frame is dropped */
    uint8_t cut;       /* a frame was cut short: a delimiter closes it before the next */
} emb__itm_log;

static void emb__log_piece(const uint8_t *p, size_t n, int ends_frame)
{
    struct emb_itm_port_stats *st = &emb__itm_stats[EMB_ITM_PORT_LOG];
    if (!emb__itm_log.in_frame) {
        emb__itm_log.in_frame = 1u;
        if (!emb_itm_port_enabled(EMB_ITM_PORT_LOG)) {
            emb__itm_log.dropping = 1u;
        } else if (emb__itm_log.cut && !(n == 1u && ends_frame)) {
            static const uint8_t delimiter = EMB_FRAME_DELIMITER;
            if (emb__put(EMB_ITM_PORT_LOG, &delimiter, 1u, st) == 1u) {
                st->bytes++;
                emb__itm_log.cut = 0u;
            } else {
                emb__itm_log.dropping = 1u;
            }
        }
    }
    if (!emb__itm_log.dropping) {
        size_t sent = emb__put(EMB_ITM_PORT_LOG, p, n, st);
        st->bytes += (uint32_t)sent;
        if (sent > 0u)
            emb__itm_log.sent = 1u;
        if (sent < n) {
            emb__itm_log.dropping = 1u;
            if (emb__itm_log.sent) { /* else nothing of it went out: dropped whole */
                emb__itm_log.cut = 1u;
                st->cut++;
            }
        } else if (ends_frame && n == 1u) {
            emb__itm_log.cut = 0u; /* a lone delimiter closed whatever came before */
        }
    }
    if (ends_frame) {
        /* A lone delimiter (a writer's leading one) is no frame of its own. */
        int empty = n == 1u && emb__itm_log.in_frame == 1u;
        if (emb__itm_log.dropping)
            st->dropped++;
        else if (!empty)
            st->writes++;
        emb__itm_log.in_frame = 0u;
        emb__itm_log.sent = 0u;
        emb__itm_log.dropping = 0u;
    } else {
        emb__itm_log.in_frame = 2u; /* more than a delimiter */
    }
}

static emb_status emb__log_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    while (len > 0u) {
        uint32_t n = 0;
        while (n < len && bytes[n] != EMB_FRAME_DELIMITER)
            n++;
        int ends_frame = n < len;
        n += (uint32_t)ends_frame;
        emb__log_piece(bytes, n, ends_frame);
        bytes += n;
        len -= n;
    }
    /* A dropped frame is counted here, not handed back: the log ring must not fill up
     * waiting for a probe that may never come. */
    return EMB_OK;
}

const struct emb_log_output *emb_itm_log_output(void)
{
    emb__itm_log.out = (struct emb_log_output){emb__log_write, NULL};
    return &emb__itm_log.out;
}

/* ---- The trace stream on port 1 ---- */

emb_status emb_itm_trace_send(void *arg, uint8_t channel, const void *payload, size_t len)
{
    (void)arg;
    (void)channel;
    return emb_itm_write(EMB_ITM_PORT_TRACE, payload, len);
}

emb_status emb_itm_trace_link_init(struct emb_trace_link *l, uint8_t *buf, size_t cap,
                                   const struct emb_tsf_info *info,
                                   const struct emb_tsf_context *contexts, uint16_t count,
                                   uint32_t header_every)
{
    return emb_trace_link_init(l, emb_itm_trace_send, NULL, buf, cap, info, contexts, count,
                               header_every);
}

void emb_itm_stats(uint32_t port, struct emb_itm_port_stats *out)
{
    *out = port < EMB_ITM_PORTS ? emb__itm_stats[port] : (struct emb_itm_port_stats){0, 0, 0, 0, 0};
}

#else

typedef int emb__itm_compiled_out; /* ISO C wants a declaration in every file */

#endif /* CONFIG_EMB_ITM */
