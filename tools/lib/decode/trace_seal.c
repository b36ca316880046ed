/* Sealed trace stream files: check and take out the CRCs (trace_seal.h). */
#define _DEFAULT_SOURCE /* madvise */
#include "trace_seal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <zlib.h>

#include <emb/crc.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "stream_kind.h"

/* The SEAL block's offset in the header, or 0 when there is none. */
static uint32_t find_seal(const uint8_t *d, uint32_t header_size)
{
    uint32_t at = EMB_TSF_FIXED_SIZE +
                  (uint32_t)emb_get_le16(d + EMB_TSF_OFF_CONTEXT_COUNT) * EMB_TSF_CONTEXT_SIZE;
    while (at <= header_size && header_size - at >= EMB_TSF_EXT_HEADER_SIZE) {
        uint32_t tag = emb_get_le32(d + at + EMB_TSF_EXT_OFF_TAG);
        uint32_t size = emb_get_le32(d + at + EMB_TSF_EXT_OFF_SIZE);
        if (tag == 0u || size < EMB_TSF_EXT_HEADER_SIZE || size % 4u || size > header_size - at)
            return 0;
        if (tag == EMB_TSF_EXT_SEAL)
            return size >= EMB_TSF_SEAL_SIZE ? at : 0u;
        at += size;
    }
    return 0;
}

/* The header's sizes, SEAL block and CRC: false (an error reported) when damaged. */
static bool header_ok(const uint8_t *in, size_t n, uint32_t H, uint32_t P,
                      struct emb_problems *problems)
{
    if (H < EMB_TSF_FIXED_SIZE || H > n || P < 256u || P > 65536u || (P & (P - 1u))) {
        emb_report(problems, EMB_ERROR, EMB_TSF_OFF_HEADER_SIZE,
            "sealed stream: header size %" PRIu32 " or packet size %" PRIu32 " out of bounds "
            "(a damaged header)", H, P);
        return false;
    }
    uint32_t seal = find_seal(in, H);
    if (seal == 0) {
        emb_report(problems, EMB_ERROR, EMB_TSF_OFF_VERSION,
            "a version-2 stream without its SEAL block: the header is damaged");
        return false;
    }
    uint32_t stored = emb_get_le32(in + seal + EMB_TSF_SEAL_OFF_HEADER_CRC);
    static const uint8_t zero[4];
    uint32_t crc = emb_crc32(0, in, seal + EMB_TSF_SEAL_OFF_HEADER_CRC);
    crc = emb_crc32(crc, zero, sizeof zero);
    crc = emb_crc32(crc, in + seal + EMB_TSF_SEAL_OFF_HEADER_CRC + 4u,
                    H - (seal + EMB_TSF_SEAL_OFF_HEADER_CRC + 4u));
    if (crc != stored) {
        emb_report(problems, EMB_ERROR, seal + EMB_TSF_SEAL_OFF_HEADER_CRC,
            "header CRC-32 0x%08" PRIx32 " differs from the header's 0x%08" PRIx32
            ": the header is damaged", stored, crc);
        return false;
    }
    return true;
}

/* Checks every packet's CRC; the view's size is the packets' bytes without them. */
static void check_packets(const uint8_t *in, size_t n, bool in_mapped,
                          struct emb_trace_unsealed *out, struct emb_problems *problems)
{
    uint32_t H = out->header_size, P = out->packet_size;
    size_t body = n - H, rec = (size_t)P + EMB_TSF_PACKET_CRC_SIZE;
    size_t whole = body / rec, tail = body % rec;
    for (size_t k = 0; k < whole; k++) {
        const uint8_t *p = in + H + k * rec;
        /* zlib's table-driven CRC-32 is the same CRC as emb_crc32, several times faster */
        uint32_t want = emb_get_le32(p + P), got = (uint32_t)crc32(0L, p, P);
        if (want == got) {
            out->checked++;
        } else {
            out->damaged++;
            emb_report(problems, EMB_WARNING, (long long)(H + k * rec),
                "packet CRC-32 0x%08" PRIx32 " differs from the packet's 0x%08" PRIx32
                ": the packet is damaged (its events are not to be believed)", want, got);
        }
        if (in_mapped && k % 4096u == 4095u) /* checked: the decoder reads them again later */
            madvise((void *)in, (size_t)(p - in) & ~(size_t)0xFFFFu, MADV_DONTNEED);
    }
    if (tail > P) {
        out->damaged++;
        emb_report(problems, EMB_WARNING, (long long)(H + whole * rec + P),
            "the last packet's CRC is cut short (%zu of %u bytes): not checked", tail - P,
            EMB_TSF_PACKET_CRC_SIZE);
    }
    out->size = H + whole * P + (tail > P ? P : tail);
}

int emb_trace_unseal(const uint8_t *in, size_t n, bool in_mapped,
                     struct emb_trace_unsealed *out, struct emb_problems *problems)
{
    memset(out, 0, sizeof *out);
    if (n < EMB_TSF_FIXED_SIZE || emb_stream_kind(in, n) != EMB_STREAM_TRACE ||
        emb_get_le16(in + EMB_TSF_OFF_VERSION) != EMB_TSF_VERSION_SEALED)
        return 0;
    out->sealed = true;
    out->in = in;
    uint32_t H = emb_get_le16(in + EMB_TSF_OFF_HEADER_SIZE);
    uint32_t P = emb_get_le32(in + EMB_TSF_OFF_PACKET_SIZE);
    out->header_size = H;
    out->packet_size = P;
    if (!header_ok(in, n, H, P, problems))
        return 0;
    if ((out->header = malloc(H)) == NULL)
        return -1;
    memcpy(out->header, in, H);
    /* The view reads as what it is: a version-1 stream, checked. */
    emb_put_le16(out->header + EMB_TSF_OFF_VERSION, EMB_TSF_VERSION);
    check_packets(in, n, in_mapped, out, problems);
    return 0;
}

uint64_t emb_trace_sealed_offset(const struct emb_trace_unsealed *u, uint64_t off)
{
    if (!u->sealed || off < u->header_size || u->packet_size == 0u)
        return off;
    return off + EMB_TSF_PACKET_CRC_SIZE * ((off - u->header_size) / u->packet_size);
}

uint64_t emb_trace_unsealed_offset(const struct emb_trace_unsealed *u, uint64_t off)
{
    if (!u->sealed || off < u->header_size || u->packet_size == 0u)
        return off;
    uint64_t rec = (uint64_t)u->packet_size + EMB_TSF_PACKET_CRC_SIZE;
    uint64_t k = (off - u->header_size) / rec, r = (off - u->header_size) % rec;
    return u->header_size + k * u->packet_size + r;
}

const uint8_t *emb_trace_unsealed_bytes(const struct emb_trace_unsealed *u, uint64_t off,
                                        size_t len, uint8_t *scratch)
{
    const uint8_t *at = emb_trace_unsealed_in_place(u, off, len);
    if (at != NULL)
        return at;
    /* Across the header's end or a packet's CRC: piece by piece. */
    for (size_t done = 0; done < len;) {
        size_t piece = len - done;
        uint64_t here = off + done;
        if (here < u->header_size) {
            if (piece > u->header_size - here)
                piece = (size_t)(u->header_size - here);
        } else {
            uint64_t r = (here - u->header_size) % u->packet_size;
            if (piece > u->packet_size - r)
                piece = (size_t)(u->packet_size - r);
        }
        memcpy(scratch + done, emb_trace_unsealed_in_place(u, here, piece), piece);
        done += piece;
    }
    return scratch;
}
