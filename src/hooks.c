#include <emb/hooks.h>
#include <emb/trace_events.h>

void emb_isr_enter(uint16_t irq)
{
    struct emb_trace_ring *ring = emb_trace_context_ring();
    if (ring != NULL)
        emb_trace_enter_handler(ring, EMB_EVT_KIND_ISR);
    EMB_TRACE_irq_enter(irq);
}

void emb_isr_exit(uint16_t irq, bool switched)
{
    EMB_TRACE_irq_exit(irq, switched);
    struct emb_trace_ring *ring = emb_trace_context_ring();
    if (ring != NULL)
        emb_trace_leave_handler(ring);
}

void emb_frame_start(uint32_t frame)
{
    if (emb_trace_frame_mark(frame)) {
        struct emb_trace_ring *ring = emb_trace_context_ring();
        EMB_TRACE_window_armed(frame, ring != NULL ? ring->buf_mask + 1u : 0u);
    }
    EMB_TRACE_frame_start(frame);
}

void emb_frame_end(uint32_t frame)
{
    EMB_TRACE_frame_end(frame);
}
