/* The trace stream file header (docs/formats/trace.md, "Trace stream file"), with its
 * context table and the optional identity block. */
#include <stdbool.h>

#include <emb/config.h>
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
