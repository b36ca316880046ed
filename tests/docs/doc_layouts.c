/* Prints the layout numbers the format documents state, read from the code itself: the
 * debug descriptor this program links (each section's version and word count as the
 * image exports them), the memory channel's control blocks in both layouts, the crash
 * record's fixed parts and register counts, and the capture file's header and bodies.
 * tests/docs/check_doc_layouts.py compares every table of docs/formats/ with these, so
 * a document cannot drift from the code unnoticed. One "key value" line each. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <emb/crash_format.h>
#include <emb/descriptor.h>
#include <emb/memchan.h>

#include "capture.h"

size_t doc_layouts_rtt_ring_size(void);
size_t doc_layouts_rtt_header_size(void);

static void section(const char *name, const struct emb_desc_section *s)
{
    printf("descriptor.%s.kind %u\n", name, (unsigned)(s->tag & 0xFFFFu));
    printf("descriptor.%s.version %u\n", name, (unsigned)(s->tag >> 16));
    printf("descriptor.%s.words %u\n", name, (unsigned)s->words);
}

int main(void)
{
    const struct emb_debug_descriptor *d = &emb_debug_descriptor;
    printf("pointer_size %u\n", (unsigned)sizeof(void *));
    printf("descriptor.version %u\n", (unsigned)d->header.version);
    printf("descriptor.header %u\n", (unsigned)offsetof(struct emb_debug_descriptor, identity));
    printf("descriptor.sections %u\n", (unsigned)d->header.section_count);
    section("identity", &d->identity.s);
    section("types", &d->types.s);
    section("contexts", &d->contexts.s);
    section("rings", &d->rings.s);
    section("log_rings", &d->log.s);
    section("crash_record", &d->crash.s);
    section("mini_record_ring", &d->mini.s);
    section("monitors", &d->monitors.s);
    section("statistics", &d->stats.s);
    section("arch", &d->arch.s);
    section("kernel", &d->kernel.s);
    section("partitions", &d->partitions.s);
    printf("kernel_layout.header %u\n", (unsigned)offsetof(struct emb_kernel_layout, threads));
    printf("kernel_layout.threads.words %u\n", (unsigned)((sizeof(struct emb_desc_threads) - sizeof(struct emb_desc_section)) / sizeof(uintptr_t)));
    printf("kernel_layout.scheduler.words %u\n", (unsigned)((sizeof(struct emb_desc_scheduler) - sizeof(struct emb_desc_section)) / sizeof(uintptr_t)));
    printf("kernel_layout.objects.words %u\n", (unsigned)((sizeof(struct emb_desc_objects) - sizeof(struct emb_desc_section)) / sizeof(uintptr_t)));

    printf("memchan.version %u\n", (unsigned)EMB_MEMCHAN_VERSION);
#if !CONFIG_EMB_MEMCHAN_RTT_COMPAT
    printf("memchan.native.header %u\n", (unsigned)offsetof(struct emb_memchan, up));
    printf("memchan.native.ring %u\n", (unsigned)sizeof(struct emb_memchan_ring));
#endif
    printf("memchan.rtt.header %u\n", (unsigned)doc_layouts_rtt_header_size());
    printf("memchan.rtt.ring.%u %u\n", (unsigned)sizeof(void *), (unsigned)doc_layouts_rtt_ring_size());

    printf("crash.v1.fixed %u\n", EMB_CRASH_V1_FIXED_SIZE);
    printf("crash.v2.fixed %u\n", EMB_CRASH_V2_FIXED_SIZE);
    printf("crash.mini %u\n", EMB_MINI_SIZE);
    printf("crash.native.status %u\n", (unsigned)EMB_CRASH_NAT_COUNT);
    printf("crash.x86_64.gprs %u\n", 2u * EMB_CRASH_X86_64_GPRS);
    printf("crash.aarch64.gprs %u\n", 2u * EMB_CRASH_AARCH64_GPRS);
    printf("crash.cortex_m.status %u\n", (unsigned)EMB_CRASH_CM_COUNT);
    printf("crash.cortex_m.gprs %u\n", EMB_CRASH_CORTEX_M_GPRS);

    printf("capture.version %u\n", EMB_CAP_VERSION);
    printf("capture.header %u\n", EMB_CAP_HEADER_SIZE);
    printf("capture.section_header %u\n", EMB_CAP_SEC_HEADER_SIZE);
    printf("capture.identity %u\n", EMB_CAP_ID_SIZE);
    printf("capture.window %u\n", EMB_CAP_WIN_SIZE);
    printf("capture.row %u\n", EMB_CAP_ROW_SIZE);
    return 0;
}
