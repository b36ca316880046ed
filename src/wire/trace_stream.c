/* The trace stream file header (docs/formats/trace.md, "Trace stream file"), with its
 * context table and the optional extension blocks. */
#include <stdbool.h>

#include <emb/config.h>
#include <emb/crc.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

size_t emb_tsf_encode_header(uint8_t *out, size_t cap, const struct emb_tsf_info *info,
                             const struct emb_tsf_context *contexts, uint16_t count)
{
    size_t table_end = EMB_TSF_HEADER_BYTES((size_t)count);
    /* The identity and ring blocks are for stream and capture writers: without streaming
     * (the flight recorder's header alone), they compile out. */
    const bool ext = CONFIG_EMB_TRACE_STREAMING && info != NULL;
    size_t size = table_end + (ext && info->identity != NULL ? EMB_TSF_IDENTITY_SIZE : 0u) +
                  (ext && info->ring_packets != 0u ? EMB_TSF_RING_SIZE : 0u);
    if (out == NULL || info == NULL || size > cap || size > 0xFFFFu ||
        count > EMB_TSF_MAX_CONTEXTS || info->build_id_len > EMB_TSF_BUILD_ID_MAX ||
        (count > 0u && contexts == NULL) || (info->build_id_len > 0u && info->build_id == NULL))
        return 0;
    memset(out, 0, EMB_TSF_FIXED_SIZE);
    emb_put_le32(out + EMB_TSF_OFF_MAGIC, EMB_TSF_MAGIC);
    emb_put_le16(out + EMB_TSF_OFF_VERSION, EMB_TSF_VERSION);
    emb_put_le16(out + EMB_TSF_OFF_HEADER_SIZE, (uint16_t)size);
    emb_put_le32(out + EMB_TSF_OFF_CATALOG, info->catalog_checksum);
    emb_put_le32(out + EMB_TSF_OFF_PACKET_SIZE, info->packet_size);
    emb_put_le64(out + EMB_TSF_OFF_CLOCK_HZ, info->clock_hz);
    emb_put_le64(out + EMB_TSF_OFF_CLOCK_OFFSET, (uint64_t)info->clock_offset_ns);
    memcpy(out + EMB_TSF_OFF_UUID, info->uuid, 16);
    out[EMB_TSF_OFF_BUILD_ID_LEN] = info->build_id_len;
    out[EMB_TSF_OFF_POINTER_SIZE] = info->pointer_size;
    emb_put_le16(out + EMB_TSF_OFF_CONTEXT_COUNT, count);
    if (info->build_id_len > 0u)
        memcpy(out + EMB_TSF_OFF_BUILD_ID, info->build_id, info->build_id_len);
    emb_put_text(out + EMB_TSF_OFF_PORT, info->port, EMB_TSF_PORT_MAX);
    for (uint16_t i = 0; i < count; i++) {
        uint8_t *e = out + EMB_TSF_FIXED_SIZE + (size_t)i * EMB_TSF_CONTEXT_SIZE;
        emb_put_le16(e + EMB_TSF_CTX_OFF_ID, contexts[i].id);
        emb_put_le16(e + EMB_TSF_CTX_OFF_KIND, contexts[i].kind);
        emb_put_le32(e + EMB_TSF_CTX_OFF_DISCARDED, contexts[i].discarded);
        emb_put_le32(e + EMB_TSF_CTX_OFF_PACKETS, contexts[i].packets);
        emb_put_text(e + EMB_TSF_CTX_OFF_NAME, contexts[i].name, EMB_TSF_NAME_MAX);
    }
    if (ext && info->identity != NULL) {
        uint8_t *b = out + table_end;
        emb_put_le32(b + EMB_TSF_EXT_OFF_TAG, EMB_TSF_EXT_IDENTITY);
        emb_put_le32(b + EMB_TSF_EXT_OFF_SIZE, EMB_TSF_IDENTITY_SIZE);
        emb_put_le64(b + EMB_TSF_ID_OFF_SESSION, info->identity->session_id);
        emb_put_text(b + EMB_TSF_ID_OFF_FIRMWARE, info->identity->firmware_version,
                      EMB_TSF_FIRMWARE_MAX);
        emb_put_text(b + EMB_TSF_ID_OFF_CONFIG, info->identity->config, EMB_TSF_CONFIG_MAX);
    }
    if (ext && info->ring_packets != 0u) {
        uint8_t *b = out + size - EMB_TSF_RING_SIZE;
        emb_put_le32(b + EMB_TSF_EXT_OFF_TAG, EMB_TSF_EXT_RING);
        emb_put_le32(b + EMB_TSF_EXT_OFF_SIZE, EMB_TSF_RING_SIZE);
        emb_put_le32(b + EMB_TSF_RING_OFF_PACKETS, info->ring_packets);
        emb_put_le32(b + EMB_TSF_RING_OFF_RESERVED, 0u);
    }
    return size;
}

/* Where the extension block list of header[0..size) ends (the first zero tag, or the
 * header's end) and where a block tagged `tag` lies (*at 0: none). false when a block's
 * size is not a multiple of 4 from 8 to the bytes left. */
static bool find_blocks(const uint8_t *header, size_t size, size_t table_end, uint32_t tag,
                        size_t *list_end, size_t *at, size_t *at_size)
{
    size_t pos = table_end;
    *at = 0u;
    *at_size = 0u;
    while (size - pos >= EMB_TSF_EXT_HEADER_SIZE) {
        uint32_t t = emb_get_le32(header + pos + EMB_TSF_EXT_OFF_TAG);
        uint32_t n = emb_get_le32(header + pos + EMB_TSF_EXT_OFF_SIZE);
        if (t == 0u)
            break;
        if (n < EMB_TSF_EXT_HEADER_SIZE || n % 4u != 0u || n > size - pos)
            return false;
        if (t == tag && *at == 0u) {
            *at = pos;
            *at_size = n;
        }
        pos += n;
    }
    *list_end = pos;
    return true;
}

/* A sealed header's CRC over its `size` bytes, the field taken as 0 (docs/formats/trace.md,
 * "Sealed stream file"). */
static bool reseal(uint8_t *header, size_t size, size_t table_end)
{
    size_t list_end, at, at_size;
    if (!find_blocks(header, size, table_end, EMB_TSF_EXT_SEAL, &list_end, &at, &at_size) ||
        at == 0u || at_size < EMB_TSF_SEAL_SIZE)
        return false;
    emb_put_le32(header + at + EMB_TSF_SEAL_OFF_HEADER_CRC, 0u);
    emb_put_le32(header + at + EMB_TSF_SEAL_OFF_HEADER_CRC, emb_crc32(0, header, size));
    return true;
}

size_t emb_tsf_header_put_block(uint8_t *out, size_t cap, const uint8_t *stream, size_t len,
                                const uint8_t *block, size_t block_len)
{
    if (out == NULL || stream == NULL || block == NULL || len < EMB_TSF_FIXED_SIZE ||
        block_len < EMB_TSF_EXT_HEADER_SIZE || block_len % 4u != 0u ||
        emb_get_le32(stream + EMB_TSF_OFF_MAGIC) != EMB_TSF_MAGIC ||
        emb_get_le32(block + EMB_TSF_EXT_OFF_SIZE) != block_len)
        return 0u;
    size_t size = emb_get_le16(stream + EMB_TSF_OFF_HEADER_SIZE);
    size_t table_end = EMB_TSF_HEADER_BYTES((size_t)emb_get_le16(stream + EMB_TSF_OFF_CONTEXT_COUNT));
    size_t list_end, at, at_size;
    if (size > len || table_end > size ||
        !find_blocks(stream, size, table_end, emb_get_le32(block + EMB_TSF_EXT_OFF_TAG), &list_end,
                     &at, &at_size))
        return 0u;
    size_t new_size = size - at_size + block_len;
    if (new_size > cap || new_size > 0xFFFFu)
        return 0u;
    /* Everything but the replaced block, in order; the new block last in the list, so the
     * reserve (zeros) still follows the list. */
    size_t head = at != 0u ? at : list_end, o = 0u;
    memcpy(out, stream, head);
    o = head;
    if (at != 0u) {
        memcpy(out + o, stream + at + at_size, list_end - at - at_size);
        o += list_end - at - at_size;
    }
    memcpy(out + o, block, block_len);
    o += block_len;
    memcpy(out + o, stream + list_end, size - list_end);
    emb_put_le16(out + EMB_TSF_OFF_HEADER_SIZE, (uint16_t)new_size);
    if (emb_get_le16(out + EMB_TSF_OFF_VERSION) == EMB_TSF_VERSION_SEALED &&
        !reseal(out, new_size, table_end))
        return 0u;
    return new_size;
}
