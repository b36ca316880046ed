/* The memory channel's RTT-compatible layout, from include/emb/memchan.h built the way
 * CONFIG_EMB_MEMCHAN_RTT_COMPAT=1 builds it (this file alone is compiled with it). */
#include <stddef.h>

#include <emb/memchan.h>

#if !CONFIG_EMB_MEMCHAN_RTT_COMPAT
#error "built with -DCONFIG_EMB_MEMCHAN_RTT_COMPAT=1"
#endif

size_t doc_layouts_rtt_ring_size(void);
size_t doc_layouts_rtt_header_size(void);

size_t doc_layouts_rtt_ring_size(void)
{
    return sizeof(struct emb_memchan_ring);
}

size_t doc_layouts_rtt_header_size(void)
{
    return offsetof(struct emb_memchan, up);
}
