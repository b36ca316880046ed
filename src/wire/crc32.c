#include <emb/config.h>
#include <emb/crc.h>

/* Four bits at a time with a 16-entry table (64 bytes of flash instead of 1 KiB), fast
 * enough for records written once per fault and files checked once per load; or, with
 * CONFIG_EMB_CRC32_TABLE 0, a bit at a time with no table (the same CRC, a quarter of
 * the speed, about 60 bytes less at -Os). */
#if CONFIG_EMB_CRC32_TABLE
static const uint32_t emb_crc32_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};
#endif

uint32_t emb_crc32(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
#if CONFIG_EMB_CRC32_TABLE
        crc = (crc >> 4) ^ emb_crc32_nibble[crc & 0x0Fu];
        crc = (crc >> 4) ^ emb_crc32_nibble[crc & 0x0Fu];
#else
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
#endif
    }
    return ~crc;
}
