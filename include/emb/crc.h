/* CRC-32 (IEEE 802.3, reflected, as zlib and Ethernet): the checksum of crash records,
 * capture files and the catalogue. One implementation for the target and the host. */
#ifndef EMB_CRC_H
#define EMB_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Continues a CRC-32 over `len` bytes; start with crc = 0. */
uint32_t emb_crc32(uint32_t crc, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* EMB_CRC_H */
