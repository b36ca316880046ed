/* libFuzzer: the SWO/ITM parser and the stimulus port demux on arbitrary bytes. The
 * parser allocates nothing and must never read past what it is given. */
#include <stdint.h>
#include <string.h>

#include "swo.h"

static uint64_t sink;

static void on_packet(void *arg, const struct emb_swo_packet *p)
{
    (void)arg;
    sink += p->value + p->port + p->type;
}

static void on_bytes(void *arg, unsigned port, const uint8_t *b, size_t n, bool lost, uint64_t t)
{
    (void)arg;
    for (size_t i = 0; i < n; i++)
        sink += b[i] + port + lost + t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct emb_swo s;
    emb_swo_init(&s, on_packet, NULL);
    size_t half = size / 2;
    emb_swo_feed(&s, data, half);
    emb_swo_feed(&s, data + half, size - half);
    emb_swo_finish(&s);

    struct emb_swo_demux d;
    emb_swo_demux_init(&d, 0xFFFFFFFFu, on_bytes, NULL);
    for (size_t i = 0; i < size; i++)
        emb_swo_demux_feed(&d, data + i, 1);
    emb_swo_demux_finish(&d);
    return 0;
}
