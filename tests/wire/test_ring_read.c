/* The ring-reading module (emb/ring_read.h) against the words of docs/formats/trace.md,
 * "Ring protocol": the slot of position x is (x / P) mod N; the k-th use of a slot is
 * complete when commit[slot] = (k + 1) * P modulo 2^32 / N; an open packet occupies the
 * oldest packet's slot; a snapshot copy is good when write_pos has not reached the slot's
 * next use. The expected values below are worked out by hand from those sentences, with
 * positions that wrap at 2^32 and commit words that wrap at 2^32 / N. */
#include <emb/ring_read.h>
#include <emb/trace_format.h>

#include "harness.h"

#define P 256u
#define N 4u

static const struct emb_ring_geometry geo = {.base_pos = 0u, .packet_shift = 8u, .slot_shift = 2u};

static void slots_and_commits(void)
{
    ok_eq(emb_ring_slot(&geo, 0u), 0u, "position 0 is in slot 0");
    ok_eq(emb_ring_slot(&geo, 3u * P + 17u), 3u, "a position inside the fourth packet");
    ok_eq(emb_ring_slot(&geo, 5u * P), 1u, "the sixth packet reuses slot 1");
    ok_eq(emb_ring_slot(&geo, 0xFFFFFF00u), 3u, "the last packet before 2^32: slot 3");

    /* Packet 4 is the second use (k = 1) of slot 0: it begins at commit P, ends at 2P. */
    ok(emb_ring_packet_complete(&geo, 4u * P, 2u * P), "k = 1 complete at 2P");
    ok(!emb_ring_packet_complete(&geo, 4u * P, P), "k = 1 at P has nothing of its own yet");
    ok_eq(emb_ring_committed(&geo, 4u * P, P), 0u, "so its slot may be reused");
    ok_eq(emb_ring_committed(&geo, 4u * P, P + EMB_PKT_HEADER_SIZE + 8u), EMB_PKT_HEADER_SIZE + 8u,
          "a header and one event committed");
    /* The last use before positions wrap: k = 2^32 / (N P) - 1, complete at 2^32 / N,
     * which is 0 modulo 2^32 / N: any commit word that is a multiple of 2^30 says so. */
    ok(emb_ring_packet_complete(&geo, 0xFFFFFC00u, 0x40000000u), "complete at 2^30");
    ok(emb_ring_packet_complete(&geo, 0xFFFFFC00u, 0xC0000000u), "complete at 3 * 2^30");
    ok(!emb_ring_packet_complete(&geo, 0xFFFFFC00u, 0x3FFFFF00u), "k * P alone is not complete");

    const struct emb_ring_geometry late = {.base_pos = 2u * P, .packet_shift = 8u, .slot_shift = 2u};
    ok(emb_ring_packet_complete(&late, 2u * P, P), "uses are counted from base_pos");
}

static void held_before_and_after_filling(void)
{
    struct emb_ring_held h = emb_ring_held(&geo, 3u * P + 10u, 0u);
    ok_eq(h.open_start, 3u * P, "open packet");
    ok_eq(h.open_used, 10u, "bytes reserved in it");
    ok_eq(h.count, 3u, "three closed packets before it");
    ok_eq(h.oldest, 0u, "the first packet is the oldest");

    h = emb_ring_held(&geo, 2u * P, 0u);
    ok(h.count == 2u && h.oldest == 0u && h.open_used == 0u, "no packet open: two held");

    h = emb_ring_held(&geo, 10u * P + 5u, 1u);
    ok(h.count == N - 1u && h.oldest == 7u * P, "filled, a packet open: N - 1 held");
    h = emb_ring_held(&geo, 10u * P, 1u);
    ok(h.count == N && h.oldest == 6u * P, "filled, none open: N held");
    h = emb_ring_held(&geo, 10u * P + 5u, 0u);
    ok(h.count == N - 1u, "never more than the slots allow, even before the flag is seen");

    const struct emb_ring_geometry wrapped = {.base_pos = 0xFFFFFF00u, .packet_shift = 8u,
                                              .slot_shift = 2u};
    h = emb_ring_held(&wrapped, 0x108u, 0u);
    ok(h.count == 2u && h.oldest == 0xFFFFFF00u, "positions wrapped past 2^32: two held");
    ok_eq(emb_ring_packets_opened(&wrapped, 0x108u), 3u, "three opened, the open one included");
    ok_eq(emb_ring_packets_opened(&geo, 3u * P), 3u, "none open: three opened");
}

static void copies_and_the_open_packet(void)
{
    ok(emb_ring_copy_intact(&geo, 6u * P, 6u * P + N * P), "write_pos at the slot's next use");
    ok(!emb_ring_copy_intact(&geo, 6u * P, 6u * P + N * P + 4u), "reserved into the next use");

    struct emb_ring_held h = emb_ring_held(&geo, 4u * P + EMB_PKT_HEADER_SIZE, 0u);
    ok(!emb_ring_open_committed(&geo, &h, P + EMB_PKT_HEADER_SIZE), "a header alone is not taken");
    h = emb_ring_held(&geo, 4u * P + EMB_PKT_HEADER_SIZE + 16u, 0u);
    ok(emb_ring_open_committed(&geo, &h, P + EMB_PKT_HEADER_SIZE + 16u), "all reserved committed");
    ok(!emb_ring_open_committed(&geo, &h, P + EMB_PKT_HEADER_SIZE + 8u), "an event in flight");
}

static void catching_up(void)
{
    const struct emb_ring_held h = emb_ring_held(&geo, 10u * P + 5u, 1u); /* holds 7P..9P */
    uint32_t lost = 99u;
    ok_eq(emb_ring_catch_up(&geo, &h, 5u * P, &lost), 7u * P, "an overwritten next: the oldest");
    ok_eq(lost, 2u, "packets 5 and 6 were lost");
    ok_eq(emb_ring_catch_up(&geo, &h, 8u * P, &lost), 8u * P, "a next still held stays");
    ok_eq(lost, 0u, "nothing lost");
    ok_eq(emb_ring_catch_up(&geo, &h, 10u * P, &lost), 10u * P, "a next at the open packet stays");
    ok_eq(lost, 0u, "nothing lost there either");
}

int main(void)
{
    slots_and_commits();
    held_before_and_after_filling();
    copies_and_the_open_packet();
    catching_up();
    return emb_test_done();
}
